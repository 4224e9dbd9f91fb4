"""Each resolution keeps its own retention: drop_chunks per table, 0 keeps forever."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.test import override_settings
from django.utils import timezone

from fathom.testing import FathomTestCase
from history.buckets import DAY, HOUR, MINUTE, Resolution
from history.marks import Mark, mark
from history.models import Kind, RttDay, RttHour, RttMinute, StaleBucket
from history.retention import drop_expired_rollups

A, B = uuid.uuid4(), uuid.uuid4()


def row(model: type[RttMinute | RttHour | RttDay], resolution: Resolution, moment: datetime) -> None:
    model.objects.create(source_id=A, destination_id=B, bucket=resolution.floor(moment), sent=1, lost=0, count=1,
                         min_ms=1.0, p10_ms=1.0, p50_ms=1.0, p90_ms=1.0, max_ms=1.0)  # fmt: skip


class RollupRetentionTests(FathomTestCase):
    def setUp(self) -> None:
        self.now = timezone.now()
        for days in (2, 40):
            row(RttMinute, MINUTE, self.now - timedelta(days=days))
        for days in (10, 800):
            row(RttHour, HOUR, self.now - timedelta(days=days))
        for days in (10, 3000):
            row(RttDay, DAY, self.now - timedelta(days=days))

    def ages(self, model: type[RttMinute | RttHour | RttDay]) -> list[int]:
        return sorted((self.now - bucket).days for bucket in model.objects.values_list("bucket", flat=True))

    def test_defaults_keep_minutes_30_days_hours_2_years_and_days_forever(self) -> None:
        dropped = drop_expired_rollups(self.now)
        assert dropped["history_rttminute"] >= 1 and dropped["history_rtthour"] >= 1
        assert "history_rttday" not in dropped
        assert (self.ages(RttMinute), self.ages(RttHour), self.ages(RttDay)) == ([2], [10], [10, 3000])

    @override_settings(
        ROLLUP_MINUTE_RETENTION_DAYS=0, ROLLUP_HOURLY_RETENTION_DAYS=100, ROLLUP_DAILY_RETENTION_DAYS=365
    )
    def test_each_retention_is_its_own_setting(self) -> None:
        mark(DAY, [Mark(Kind.RTT, A, B, 4, DAY.floor(self.now - timedelta(days=3000)))])
        drop_expired_rollups(self.now)
        assert (self.ages(RttMinute), self.ages(RttHour), self.ages(RttDay)) == ([2, 40], [10], [10])
        assert not StaleBucket.objects.exists()
