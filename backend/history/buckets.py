"""Bucket math of the rollups: the three resolutions, where a bucket starts, which buckets are
settled (stored by the refresh) and which resolution serves a range. Pure functions.

Buckets are aligned to the Unix epoch in UTC, as TimescaleDB's time_bucket aligns them, so a
day bucket is a UTC day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A result lands seconds after its run ends (agents upload every ~10 s): a bucket is stored
# once it is this long past its end, and a query computes the unsettled tail from raw data.
SETTLE = timedelta(minutes=2)
# The refresh task's period (fathom/scheduled.py): a settled bucket may wait this long for it.
REFRESH_PERIOD = timedelta(minutes=1)
# Any range yields at most this many points per series.
MAX_POINTS = 1500


@dataclass(frozen=True)
class Resolution:
    name: str
    width: timedelta

    @property
    def width_s(self) -> int:
        return int(self.width.total_seconds())

    def floor(self, moment: datetime) -> datetime:
        """The start of the bucket holding `moment`."""
        seconds = (moment - EPOCH) // timedelta(seconds=1)
        return EPOCH + timedelta(seconds=seconds - seconds % self.width_s)

    def buckets_between(self, start: datetime, end: datetime) -> int:
        """How many buckets [start, end) touches (0 for an empty range)."""
        if end <= start:
            return 0
        last = self.floor(end - timedelta(microseconds=1))
        return (last - self.floor(start)) // self.width + 1

    def settled_before(self, now: datetime) -> datetime:
        """Buckets starting before this are closed and settled: the refresh stores them."""
        return self.floor(now - SETTLE)

    def served_live_from(self, now: datetime) -> datetime:
        """Queries compute buckets from here on from raw data: the unsettled ones, and a bucket
        settled so recently that the refresh (one period, and one more for its own run) may not
        have stored it yet."""
        return self.floor(now - SETTLE - 2 * REFRESH_PERIOD)


MINUTE = Resolution("minute", timedelta(minutes=1))
HOUR = Resolution("hour", timedelta(hours=1))
DAY = Resolution("day", timedelta(days=1))
RESOLUTIONS = (MINUTE, HOUR, DAY)  # finest first
RESOLUTION_NAMES = tuple(resolution.name for resolution in RESOLUTIONS)


class RangeRefused(ValueError):
    """No resolution can serve the range within the bounds; the message says why."""


def kept_since(retention_days: int, now: datetime) -> datetime | None:
    """The oldest moment a resolution with this retention keeps; None: kept forever (0)."""
    return now - timedelta(days=retention_days) if retention_days > 0 else None


def choose_resolution(
    start: datetime, end: datetime, now: datetime, retention_days: dict[str, int], max_points: int = MAX_POINTS
) -> Resolution:
    """The finest resolution that yields at most max_points buckets over [start, end) and still
    keeps `start`; raises RangeRefused when none does."""
    if end <= start:
        raise RangeRefused("the range is empty: from must be before to")
    for resolution in RESOLUTIONS:
        oldest = kept_since(retention_days[resolution.name], now)
        if resolution.buckets_between(start, end) <= max_points and (oldest is None or start >= oldest):
            return resolution
    if DAY.buckets_between(start, end) > max_points:
        raise RangeRefused(f"the range is longer than {max_points} days, the most a series shows as daily points")
    oldest = kept_since(retention_days[DAY.name], now)
    assert oldest is not None  # a daily series kept forever serves any start
    raise RangeRefused(
        f"from is older than every resolution keeps: daily rollups go back {retention_days[DAY.name]} days"
        f" (to {oldest.isoformat()})"
    )


def windows(
    buckets: list[datetime], resolution: Resolution, longest: timedelta = timedelta(days=1)
) -> list[list[datetime]]:
    """Buckets in runs of neighbours, each at most `longest` long, oldest first. Each run's raw
    data lies in one constant time range, which lets TimescaleDB skip every chunk outside it
    when the plan is made, and a late bucket far from the others gets a range of its own."""
    runs: list[list[datetime]] = []
    for bucket in sorted(set(buckets)):
        if runs and bucket <= runs[-1][-1] + resolution.width and bucket + resolution.width - runs[-1][0] <= longest:
            runs[-1].append(bucket)
        else:
            runs.append([bucket])
    return runs
