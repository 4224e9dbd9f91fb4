"""Path views of the measurements: which paths exist, and RTT over time downsampled with
TimescaleDB's time_bucket so a chart never receives more points than it can draw."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from core.units import loss_fraction
from inventory.models import Agent
from measurements.models import PathLatestRun

# Bucket widths a human reads easily; the smallest that keeps the count under max_points wins.
NICE_BUCKETS_S = (
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400,
)  # fmt: skip
MAX_POINTS_LIMIT = 5000


def bucket_width_s(start: datetime, end: datetime, max_points: int) -> int:
    """The width that yields at most max_points buckets over [start, end).

    Buckets are aligned to the epoch, so a range can touch one more bucket than span/width:
    the width is chosen for max_points - 1 full buckets.
    """
    if max_points < 2:
        raise ValueError("max_points must be at least 2")
    span_s = (end - start).total_seconds()
    needed_s = span_s / (max_points - 1)
    for width in NICE_BUCKETS_S:
        if width >= needed_s:
            return width
    return int(math.ceil(needed_s / 86400) * 86400)


@dataclass(frozen=True)
class RttPoint:
    time: datetime
    rtt_min_ms: float | None
    rtt_median_ms: float | None
    sent: int
    lost: int

    @property
    def loss_fraction(self) -> float | None:
        return loss_fraction(self.lost, self.sent)


RTT_SQL = """
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       min(rtt_ms) FILTER (WHERE NOT duplicate),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL)
FROM measurements_pingsample
WHERE source_id = %(source)s AND destination_id = %(destination)s AND family = %(family)s
  AND time >= %(start)s AND time < %(end)s
GROUP BY bucket
ORDER BY bucket
"""


def rtt_series(
    source: uuid.UUID, destination: uuid.UUID, start: datetime, end: datetime, max_points: int, family: int = 4
) -> tuple[int, list[RttPoint]]:
    width = bucket_width_s(start, end, max_points)
    keys: dict[str, Any] = {"source": source, "destination": destination, "family": family}
    with connection.cursor() as cursor:
        cursor.execute(RTT_SQL, {**keys, "width": width, "start": start, "end": end})
        rows = cursor.fetchall()
    return width, [RttPoint(row[0], row[1], row[2], row[3], row[4]) for row in rows]


@dataclass(frozen=True)
class PathEntry:
    source: Agent
    destination: Agent
    family: int
    test_types: list[str]
    last_run_at: datetime
    last_status: str


def known_paths() -> list[PathEntry]:
    """Every source -> destination pair with runs, once per family, newest result first per
    test type."""
    by_pair: dict[tuple[Any, Any, int], list[PathLatestRun]] = {}
    for row in PathLatestRun.objects.select_related("source", "destination").order_by(
        "source__name", "destination__name", "family"
    ):
        by_pair.setdefault((row.source_id, row.destination_id, row.family), []).append(row)
    entries = []
    for rows in by_pair.values():
        newest = max(rows, key=lambda row: row.started_at)
        entries.append(
            PathEntry(
                source=newest.source,
                destination=newest.destination,
                family=newest.family,
                test_types=sorted({row.test_type for row in rows}),
                last_run_at=newest.started_at,
                last_status=newest.status,
            )
        )
    return entries


def default_range(end: datetime | None, start: datetime | None, now: datetime) -> tuple[datetime, datetime]:
    end = end or now
    return (start or end - timedelta(hours=24)), end


@dataclass(frozen=True)
class LatencyPoint:
    """One time bucket of a path's latency intervals (see latency_series)."""

    time: datetime
    sent: int
    answered: int
    forward_lost: int
    backward_lost: int | None  # None: only one-way-only intervals (OWAMP), which have no way back
    # The packets that entered the backward direction (reached the reflector) in intervals that have one.
    backward_sent: int | None
    forward_min_ms: float | None
    forward_p50_ms: float | None
    forward_p90_ms: float | None
    forward_p99_ms: float | None
    forward_max_ms: float | None
    backward_min_ms: float | None
    backward_p50_ms: float | None
    backward_p90_ms: float | None
    backward_p99_ms: float | None
    backward_max_ms: float | None
    round_trip_min_ms: float | None
    round_trip_p50_ms: float | None
    round_trip_p99_ms: float | None
    clock_error_ms: float | None
    one_way_trusted: bool
    loaded: bool

    @property
    def forward_loss_fraction(self) -> float | None:
        return loss_fraction(self.forward_lost, self.sent)

    @property
    def backward_loss_fraction(self) -> float | None:
        if self.backward_lost is None or self.backward_sent is None:
            return None
        return loss_fraction(self.backward_lost, self.backward_sent)


def _median(column: str) -> str:
    return f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {column})"


# An interval without an answer has no delay and no reflector clock: it neither makes nor
# breaks the trust in the bucket's one-way delays. {path} picks one path's intervals.
LATENCY_SQL = f"""
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       sum(sent), sum(answered), sum(forward_lost), sum(backward_lost),
       sum(sent - forward_lost) FILTER (WHERE backward_lost IS NOT NULL),
       min(forward_min_ms), {_median("forward_p50_ms")}, {_median("forward_p90_ms")},
       {_median("forward_p99_ms")}, max(forward_max_ms),
       min(backward_min_ms), {_median("backward_p50_ms")}, {_median("backward_p90_ms")},
       {_median("backward_p99_ms")}, max(backward_max_ms),
       min(round_trip_min_ms), {_median("round_trip_p50_ms")}, {_median("round_trip_p99_ms")},
       max(sender_error_ms + reflector_error_ms),
       coalesce(bool_and(sender_synchronized AND reflector_synchronized
                         AND sender_error_ms + reflector_error_ms <= %(limit)s) FILTER (WHERE answered > 0), false),
       bool_or(own_load)
FROM measurements_latencyinterval
WHERE {{path}} AND time >= %(start)s AND time < %(end)s
GROUP BY bucket
ORDER BY bucket
"""  # noqa: S608 (composed of constants, no input)
AGENT_PATH_LATENCY = "source_id = %(source)s AND destination_id = %(destination)s AND family = %(family)s"


def latency_series(
    source: uuid.UUID,
    destination: uuid.UUID,
    start: datetime,
    end: datetime,
    max_points: int,
    clock_limit_ms: float,
    family: int = 4,
) -> tuple[int, list[LatencyPoint]]:
    """One path's latency intervals (the sessions `source` ran towards `destination` in one
    family: forward is source to destination), bucketed as latency_buckets says."""
    keys = {"source": source, "destination": destination, "family": family}
    return latency_buckets(AGENT_PATH_LATENCY, keys, start, end, max_points, clock_limit_ms)


def latency_buckets(
    path: str, keys: dict[str, Any], start: datetime, end: datetime, max_points: int, clock_limit_ms: float
) -> tuple[int, list[LatencyPoint]]:
    """The latency intervals `path` (a WHERE condition over `keys`) picks, in at most
    max_points time buckets, each interval in the bucket of its start.

    Counts are summed (backward loss over the packets that reached the reflector, in the
    intervals that have a way back: a one-way-only test has none), minima and maxima are the
    buckets' extremes, and a percentile is the median of the intervals' own percentiles: the
    packets themselves are not stored, and the intervals are of equal length, so this stays
    close to the percentile of all of them. A
    bucket's clock error is its largest (sender + reflector) declared error; its one-way
    delays are trusted when every interval with an answer had both clocks synchronised and
    that error at most clock_limit_ms. `loaded`: an interval of the bucket overlapped one of
    Fathom's own throughput tests on either host (flagged at ingest, as pings are).
    """
    width = bucket_width_s(start, end, max_points)
    params: dict[str, Any] = {**keys, "width": width, "start": start, "end": end, "limit": clock_limit_ms}
    with connection.cursor() as cursor:
        cursor.execute(LATENCY_SQL.format(path=path), params)
        rows = cursor.fetchall()
    return width, [LatencyPoint(*row) for row in rows]
