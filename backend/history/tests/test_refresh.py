"""The incremental refresh against the real hypertables: results go in through ingest (whose
signal marks the buckets), the refresh recomputes what settled."""

from __future__ import annotations

from datetime import datetime, timedelta
from io import StringIO
from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import models
from django.test import override_settings

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase
from history.buckets import DAY, HOUR, MINUTE
from history.marks import Mark, mark, pending
from history.models import (
    Kind,
    RttDay,
    RttHour,
    RttMinute,
    StaleBucket,
    ThroughputDay,
    ThroughputHour,
    ThroughputMinute,
)
from history.refresh import refresh
from history.tests.builders import failed_throughput_result, ingest, ping_result, ramp_result, throughput_result

T0 = EXAMPLES_RECORDED_AT  # ingest's clock in these tests: 2026-11-22 12:00 UTC
TEN_S = timedelta(seconds=10)
ROLLUPS: tuple[type[models.Model], ...] = (RttMinute, RttHour, RttDay, ThroughputMinute, ThroughputHour, ThroughputDay)


def percentile(values: list[float], q: float) -> float:
    """PostgreSQL's percentile_cont: linear between the two nearest ranks."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def snapshot() -> dict[str, list[dict[str, Any]]]:
    return {
        model.__name__: list(model._default_manager.order_by("source_id", "destination_id", "bucket").values())
        for model in ROLLUPS
    }


class RefreshTests(FathomTestCase):
    def ping_hour(self, start: datetime, base_ms: float) -> list[float | None]:
        """An hour of pings every 10 s, in 60 one-minute runs; every 50th lost."""
        all_rtts: list[float | None] = []
        for minute in range(60):
            rtts: list[float | None] = [
                None if (minute * 6 + k) % 50 == 49 else base_ms + ((minute * 7 + k * 13) % 17) for k in range(6)
            ]
            ingest(self.athens, ping_result(self.frankfurt, start + timedelta(minutes=minute), rtts, TEN_S))
            all_rtts += rtts
        return all_rtts

    def test_settled_buckets_are_computed_from_raw_samples_at_every_resolution(self) -> None:
        hour = T0 - timedelta(hours=2)
        rtts = self.ping_hour(hour, 20.0)
        claimed = refresh(T0)
        assert claimed["minute"] == 60
        assert RttMinute.objects.count() == 60
        row = RttHour.objects.get(source_id=self.athens.pk, destination_id=self.frankfurt.pk, bucket=hour)
        replies = [rtt for rtt in rtts if rtt is not None]
        assert (row.sent, row.lost, row.count) == (360, 7, 353)
        assert row.min_ms == min(replies) and row.max_ms == max(replies)
        for column, q in (("p10_ms", 0.1), ("p50_ms", 0.5), ("p90_ms", 0.9)):
            assert abs(getattr(row, column) - percentile(replies, q)) < 1e-9
        # The day is not over: its bucket waits, marked.
        assert not RttDay.objects.exists()
        assert StaleBucket.objects.filter(resolution="day").count() == 1
        refresh(T0 + timedelta(days=1))
        day = RttDay.objects.get(bucket=DAY.floor(hour))
        assert (day.sent, day.p50_ms) == (360, row.p50_ms)

    def test_the_day_median_is_of_the_samples_not_of_the_hourly_medians(self) -> None:
        day = DAY.floor(T0) - timedelta(days=1)
        # Three hours: 300 samples at 10 ms, then 60 at 100 ms, then 60 at 100 ms.
        first = [10.0] * 6
        for minute in range(50):
            ingest(self.athens, ping_result(self.frankfurt, day + timedelta(minutes=minute), first, TEN_S))
        for hour in (1, 2):
            for minute in range(10):
                start = day + timedelta(hours=hour, minutes=minute)
                ingest(self.athens, ping_result(self.frankfurt, start, [100.0] * 6, TEN_S))
        refresh(T0)
        hourly = list(RttHour.objects.order_by("p50_ms").values_list("p50_ms", flat=True))
        assert hourly == [10.0, 100.0, 100.0]  # a median of these would say 100 ms
        assert RttDay.objects.get(bucket=day).p50_ms == 10.0

    def test_late_data_updates_its_week_old_minute_hour_and_day(self) -> None:
        old = T0 - timedelta(days=7, hours=3)
        ingest(self.athens, ping_result(self.frankfurt, old, [10.0, 11.0, 12.0], TEN_S))
        refresh(T0)
        assert RttDay.objects.get(bucket=DAY.floor(old)).max_ms == 12.0
        # A week later, a result the agent had spooled for that minute arrives.
        ingest(self.athens, ping_result(self.frankfurt, old + timedelta(seconds=30), [90.0, None], TEN_S))
        claimed = refresh(T0)
        assert claimed == {"minute": 1, "hour": 1, "day": 1}
        for model, resolution in ((RttMinute, MINUTE), (RttHour, HOUR), (RttDay, DAY)):
            row = model._default_manager.get(bucket=resolution.floor(old))
            assert (row.sent, row.lost, row.count, row.max_ms, row.p50_ms) == (5, 1, 4, 90.0, 11.5)

    def test_recomputing_a_bucket_gives_the_same_row(self) -> None:
        self.ping_hour(T0 - timedelta(days=1, hours=5), 30.0)
        ingest(self.athens, throughput_result(self.frankfurt, T0 - timedelta(days=1, hours=4), 9e8))
        refresh(T0)
        before = snapshot()
        assert all(before.values())
        # Mark every bucket again, as a retry or an overlapping refresh would, and recompute.
        tables = ((RttMinute, MINUTE, Kind.RTT), (RttHour, HOUR, Kind.RTT), (RttDay, DAY, Kind.RTT),
                  (ThroughputMinute, MINUTE, Kind.THROUGHPUT))  # fmt: skip
        for model, resolution, kind in tables:
            keys = model.objects.values_list("source_id", "destination_id", "family", "bucket")
            mark(resolution, (Mark(kind, *key) for key in keys))
        claimed = refresh(T0)
        assert claimed == {"minute": 61, "hour": 2, "day": 2}  # 60 + 1 minutes; an RTT and a throughput hour and day
        assert snapshot() == before
        assert refresh(T0) == {"minute": 0, "hour": 0, "day": 0}

    def test_unsettled_buckets_wait_for_a_later_refresh(self) -> None:
        ingest(self.athens, ping_result(self.frankfurt, T0 - timedelta(seconds=50), [10.0, 10.5], TEN_S))
        assert refresh(T0) == {"minute": 0, "hour": 0, "day": 0}
        assert pending(MINUTE) == 1
        refresh(T0 + timedelta(minutes=3))
        assert RttMinute.objects.count() == 1 and pending(MINUTE) == 0

    def test_throughput_runs_are_summarised_in_the_direction_their_data_flowed(self) -> None:
        hour = T0 - timedelta(hours=3)
        ingest(
            self.athens,
            throughput_result(self.frankfurt, hour + timedelta(minutes=5), 1e9, retransmits=4),
            throughput_result(self.frankfurt, hour + timedelta(minutes=20), 2e9, retransmits=2),
            throughput_result(self.frankfurt, hour + timedelta(minutes=35), 5e8, reverse=True),
            failed_throughput_result(self.frankfurt, hour + timedelta(minutes=50)),
            ramp_result(self.frankfurt, hour + timedelta(minutes=55)),  # a policer's ramp: not throughput
        )
        refresh(T0)
        forward = ThroughputHour.objects.get(source_id=self.athens.pk, destination_id=self.frankfurt.pk)
        assert (forward.runs_ok, forward.runs_failed) == (2, 1)
        assert (forward.min_bps, forward.median_bps, forward.max_bps, forward.retransmits) == (1e9, 1.5e9, 2e9, 6)
        reverse = ThroughputHour.objects.get(source_id=self.frankfurt.pk, destination_id=self.athens.pk)
        assert (reverse.runs_ok, reverse.runs_failed, reverse.median_bps) == (1, 0, 5e8)
        assert ThroughputMinute.objects.count() == 4  # the ramp's minute has no row

    @override_settings(RAW_RETENTION_DAYS=1)
    def test_buckets_begun_before_raw_retention_are_not_recomputed(self) -> None:
        ingest(self.athens, ping_result(self.frankfurt, T0 - timedelta(hours=10), [10.0], TEN_S))
        # Two days on, raw retention (1 day) may have dropped part of those buckets' samples.
        assert refresh(T0 + timedelta(days=2)) == {"minute": 1, "hour": 1, "day": 1}
        assert not RttMinute.objects.exists() and not RttHour.objects.exists() and not RttDay.objects.exists()
        assert not StaleBucket.objects.exists()

    @override_settings(ROLLUP_MINUTE_RETENTION_DAYS=1)
    def test_minutes_older_than_their_retention_are_not_recomputed_but_their_hour_is(self) -> None:
        old = T0 - timedelta(days=3)
        ingest(self.athens, ping_result(self.frankfurt, old, [10.0], TEN_S))
        refresh(T0)
        assert not RttMinute.objects.exists()
        assert RttHour.objects.get(bucket=HOUR.floor(old)).count == 1

    def test_on_time_minutes_mark_nothing_coarser_and_each_hour_closes_for_every_path(self) -> None:
        refresh(T0)  # the first refresh starts counting closed hours and days
        for minute in range(1, 6):
            ingest(self.athens, ping_result(self.frankfurt, T0 + timedelta(minutes=minute), [10.0 + minute], TEN_S))
        ingest(self.frankfurt, ping_result(self.athens, T0 + timedelta(minutes=2), [20.0], TEN_S))
        assert refresh(T0 + timedelta(minutes=8))["minute"] == 6
        assert StaleBucket.objects.count() == 0  # no hour or day mark per minute
        claimed = refresh(T0 + timedelta(hours=1, minutes=3))
        assert claimed["hour"] == 2  # both directions' hour, closed from raw data
        hour = RttHour.objects.get(source_id=self.athens.pk, bucket=T0)
        assert (hour.count, hour.p50_ms) == (5, 13.0)

    def test_one_pass_and_per_bucket_reads_give_the_same_rows(self) -> None:
        self.ping_hour(T0 - timedelta(hours=3), 25.0)
        with mock.patch("history.aggregates.DENSE_BUCKETS", 0):
            refresh(T0)
        one_pass = snapshot()
        for model, resolution in ((RttMinute, MINUTE), (RttHour, HOUR)):
            keys = model._default_manager.values_list("source_id", "destination_id", "family", "bucket")
            mark(resolution, (Mark(Kind.RTT, *key) for key in keys))
        with mock.patch("history.aggregates.DENSE_BUCKETS", 10**9):
            assert refresh(T0)["minute"] == 60
        assert snapshot() == one_pass

    def test_the_backfill_rolls_up_raw_data_stored_without_marks(self) -> None:
        old = T0 - timedelta(days=2, hours=5)
        ingest(self.athens, ping_result(self.frankfurt, old, [10.0, 30.0], TEN_S))
        ingest(self.athens, throughput_result(self.frankfurt, old + timedelta(minutes=1), 7e8))  # after the pings
        StaleBucket.objects.all().delete()  # as if stored before the history app ran
        out = StringIO()
        call_command("history_backfill", days=30, stdout=out)
        assert "recomputed" in out.getvalue()
        assert RttDay.objects.get(bucket=DAY.floor(old)).p50_ms == 20.0
        assert RttMinute.objects.get(bucket=MINUTE.floor(old)).count == 2
        assert ThroughputHour.objects.get(bucket=HOUR.floor(old)).median_bps == 7e8
        with pytest.raises(CommandError):
            call_command("history_backfill", days=0)

    def test_a_backlog_is_claimed_in_batches_oldest_first(self) -> None:
        self.ping_hour(T0 - timedelta(hours=4), 15.0)
        with mock.patch("history.refresh.CLAIM_BATCH", 7):
            claimed = refresh(T0)
        assert claimed["minute"] == 60
        assert RttMinute.objects.count() == 60 and RttHour.objects.count() == 1
