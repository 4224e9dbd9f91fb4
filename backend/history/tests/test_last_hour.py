"""Each path's last hour in one row, kept by the minute refresh: loss and the median of the
minute medians up to the newest settled minute, moved along as minutes settle, and late data
recomputing it."""

from __future__ import annotations

import statistics
from datetime import timedelta

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase
from history.buckets import MINUTE
from history.models import RttLastHour, RttMinute
from history.refresh import refresh
from history.tests.builders import ingest, ping_result

T0 = EXAMPLES_RECORDED_AT  # ingest's clock in these tests: 2026-11-22 12:00 UTC
TEN_S = timedelta(seconds=10)


class LastHourTests(FathomTestCase):
    def minutes(self, first: int, count: int, base_ms: float, lost_every: int = 0) -> None:
        """`count` one-minute runs of six pings from T0 - `first` minutes; every
        `lost_every`-th ping lost."""
        for minute in range(count):
            start = T0 - timedelta(minutes=first - minute)
            rtts: list[float | None] = [
                None if lost_every and (minute * 6 + k) % lost_every == lost_every - 1 else base_ms + k
                for k in range(6)
            ]
            ingest(self.athens, ping_result(self.frankfurt, start, rtts, TEN_S))

    def row(self) -> RttLastHour:
        return RttLastHour.objects.get(source_id=self.athens.pk, destination_id=self.frankfurt.pk)

    def test_the_hour_up_to_the_newest_settled_minute(self) -> None:
        self.minutes(first=90, count=88, base_ms=20.0, lost_every=30)  # T0 - 90 min to T0 - 3 min
        refresh(T0)
        row = self.row()
        through = MINUTE.settled_before(T0)
        assert row.through == through
        hour = RttMinute.objects.filter(
            source_id=self.athens.pk, destination_id=self.frankfurt.pk, bucket__gte=through - timedelta(hours=1)
        )
        assert row.sent == sum(minute.sent for minute in hour) == 6 * 60 and row.lost == sum(m.lost for m in hour)
        assert row.lost > 0
        assert row.p50_ms == statistics.median(minute.p50_ms for minute in hour if minute.p50_ms is not None)

    def test_late_data_and_new_minutes_move_it(self) -> None:
        self.minutes(first=30, count=10, base_ms=20.0)
        refresh(T0)
        p50_ms = self.row().p50_ms
        assert p50_ms is not None and p50_ms < 30
        # Slower minutes arrive, some of them late: the hour is recomputed with them.
        self.minutes(first=20, count=17, base_ms=80.0)
        refresh(T0 + timedelta(minutes=1))
        row = self.row()
        assert row.through == MINUTE.settled_before(T0 + timedelta(minutes=1)) and row.sent == 6 * 27
        assert row.p50_ms is not None and row.p50_ms > 80
