"""Cron maintenance windows: parsing, matching and the window a firing opens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from alerts import cron


def at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)  # 2026-11-01 is a Sunday


def test_a_window_opens_at_each_firing_for_its_duration_end_exclusive() -> None:
    # The first Sunday of the month... as cron has it: day 1-7 OR Sunday. Here: Sundays at 02:00.
    schedule = cron.parse("0 2 * * 0")
    two_hours = timedelta(hours=2)
    assert schedule.started_within(at(1, 2, 0), two_hours)
    assert schedule.started_within(at(1, 3, 59), two_hours)
    assert not schedule.started_within(at(1, 4, 0), two_hours)
    assert not schedule.started_within(at(2, 2, 30), two_hours), "Monday"
    assert schedule.started_within(at(8, 2, 30), two_hours)


def test_steps_ranges_lists_and_both_day_fields() -> None:
    schedule = cron.parse("*/15 22-23,0 1,15 * 3")
    assert schedule.minutes == frozenset({0, 15, 30, 45}) and schedule.hours == frozenset({22, 23, 0})
    assert schedule.matches(at(15, 22, 45)), "the 15th"
    assert schedule.matches(at(4, 23, 0)), "a Wednesday, not the 1st or 15th: either day field matches"
    assert not schedule.matches(at(5, 23, 0))
    assert cron.parse("0 0 * * 7").matches(at(1, 0, 0)), "7 is Sunday too"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 2 * *", "5 fields"),
        ("61 2 * * *", "minute"),
        ("0 24 * * *", "hour"),
        ("0 2 0 * *", "day of month"),
        ("0 2 * 13 *", "month"),
        ("0 2 * * 8", "day of week"),
        ("x 2 * * *", "not a number"),
        ("*/0 2 * * *", "outside"),
        ("5-1 2 * * *", "outside"),
    ],
)
def test_bad_expressions_say_which_field(expression: str, message: str) -> None:
    with pytest.raises(cron.CronError, match=message):
        cron.parse(expression)
