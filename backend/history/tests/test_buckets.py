"""Bucket math and the choice of resolution (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from history.buckets import DAY, HOUR, MINUTE, RangeRefused, choose_resolution, windows

NOW = datetime(2026, 11, 22, 12, 30, 40, tzinfo=UTC)
DEFAULTS = {"minute": 30, "hour": 730, "day": 0}


def test_buckets_start_at_utc_minutes_hours_and_days() -> None:
    assert MINUTE.floor(NOW) == datetime(2026, 11, 22, 12, 30, tzinfo=UTC)
    assert HOUR.floor(NOW) == datetime(2026, 11, 22, 12, tzinfo=UTC)
    assert DAY.floor(NOW) == datetime(2026, 11, 22, tzinfo=UTC)
    assert MINUTE.floor(datetime(2026, 11, 22, 12, 30, tzinfo=UTC)) == datetime(2026, 11, 22, 12, 30, tzinfo=UTC)


def test_buckets_between_counts_every_bucket_a_range_touches() -> None:
    start = datetime(2026, 11, 22, 12, 0, 30, tzinfo=UTC)
    assert MINUTE.buckets_between(start, start + timedelta(minutes=1)) == 2  # straddles two minutes
    assert MINUTE.buckets_between(MINUTE.floor(start), MINUTE.floor(start) + timedelta(days=1)) == 1440
    assert HOUR.buckets_between(start, start) == 0


def test_a_bucket_settles_two_minutes_after_its_end() -> None:
    assert MINUTE.settled_before(NOW) == datetime(2026, 11, 22, 12, 28, tzinfo=UTC)
    assert HOUR.settled_before(datetime(2026, 11, 22, 13, 1, 59, tzinfo=UTC)) == datetime(2026, 11, 22, 12, tzinfo=UTC)
    assert HOUR.settled_before(datetime(2026, 11, 22, 13, 2, tzinfo=UTC)) == datetime(2026, 11, 22, 13, tzinfo=UTC)
    assert DAY.settled_before(NOW) == datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (timedelta(hours=1), MINUTE),
        (timedelta(hours=24), MINUTE),
        (timedelta(days=2), HOUR),
        (timedelta(days=30), HOUR),
        (timedelta(days=62), HOUR),
        (timedelta(days=63), DAY),
        (timedelta(days=365), DAY),
        (timedelta(days=1498), DAY),
    ],
)
def test_the_finest_resolution_under_1500_points_serves_a_range(span: timedelta, expected: object) -> None:
    start = MINUTE.floor(NOW) - span
    resolution = choose_resolution(start, MINUTE.floor(NOW), NOW, DEFAULTS)
    assert resolution == expected
    assert resolution.buckets_between(start, MINUTE.floor(NOW)) <= 1500


def test_a_range_older_than_a_resolution_keeps_goes_to_the_next() -> None:
    start = NOW - timedelta(days=40)
    assert choose_resolution(start, start + timedelta(hours=6), NOW, DEFAULTS) == HOUR
    start = NOW - timedelta(days=800)
    assert choose_resolution(start, start + timedelta(hours=6), NOW, DEFAULTS) == DAY


def test_ranges_no_resolution_serves_are_refused_with_the_reason() -> None:
    with pytest.raises(RangeRefused, match="empty"):
        choose_resolution(NOW, NOW, NOW, DEFAULTS)
    with pytest.raises(RangeRefused, match="longer than 1500 days"):
        choose_resolution(NOW - timedelta(days=1600), NOW, NOW, DEFAULTS)
    with pytest.raises(RangeRefused, match="daily rollups go back 365 days"):
        choose_resolution(NOW - timedelta(days=400), NOW, NOW, {**DEFAULTS, "day": 365})


def test_windows_are_runs_of_neighbouring_buckets_at_most_a_day_long() -> None:
    a = datetime(2026, 11, 22, 10, 5, tzinfo=UTC)
    late = datetime(2026, 11, 15, 3, 0, tzinfo=UTC)
    run = [a + timedelta(minutes=k) for k in range(3)]
    assert windows([run[2], late, run[0], run[1], run[0]], MINUTE) == [[late], run]
    hours = [DAY.floor(a) + timedelta(hours=k) for k in range(30)]
    assert windows(hours, HOUR) == [hours[:24], hours[24:]]
    assert windows([DAY.floor(a), DAY.floor(a) + DAY.width], DAY) == [[DAY.floor(a)], [DAY.floor(a) + DAY.width]]
