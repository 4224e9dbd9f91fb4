"""pScheduler's ISO 8601 durations: what it writes reads back, what it refuses is refused."""

from __future__ import annotations

import math
import re

import pytest

from perfsonar.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("PT30S", 30),
        ("PT0.000412S", 0.000412),
        ("PT0.0002S", 0.0002),
        ("PT1M30.5S", 90.5),
        ("PT1H30M", 5400),
        ("P1D", 86400),
        ("P1W", 604800),
        ("P1W2DT3H4M5.5S", 7 * 86400 + 2 * 86400 + 3 * 3600 + 4 * 60 + 5.5),  # interval_to_iso8601 mixes W and D
        ("P0D", 0),
        ("PT0S", 0),
        ("PT1.5H", 5400),
        ("P0.5D", 43200),
    ],
)
def test_parses_what_pscheduler_writes(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("P1Y", "years and months"),
        ("P2M", "years and months"),
        ("R5/PT1M", "repeats"),
        ("30S", "start with 'P'"),
        ("pt30s", "start with 'P'"),
        ("PT30s", "upper case"),
        ("PT-1S", "expected e.g."),
        ("PT1.S", "expected e.g."),
        ("PT.5S", "expected e.g."),
        ("PT1S2M", "expected e.g."),
        ("P", "no amount"),
        ("PT", "no amount"),
        ("P1DT", "'T' with no hours"),
        ("", "start with 'P'"),
        ("P" + "9" * 70 + "D", "too long"),
        (30, "must be a string"),
        (None, "must be a string"),
        (["PT1S"], "must be a string"),
    ],
)
def test_refuses_with_a_reason(text: object, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (30, "PT30S"),
        (20.0, "PT20S"),
        (90.5, "PT1M30.5S"),
        (3600, "PT1H"),
        (5400, "PT1H30M"),
        (86400, "P1D"),
        (86401, "P1DT1S"),
        (8 * 86400, "P8D"),  # days, never weeks, as isodate writes them
        (0.000412, "PT0.000412S"),
        (0.0000005, "P0D"),  # half a microsecond rounds to even: nothing
        (0.0000015, "PT0.000002S"),
        (0, "P0D"),
    ],
)
def test_formats_as_pscheduler_does(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0.000054, 0.0119, 1, 59.999999, 3599.5, 86399.25, 12 * 86400 + 1.000001])
def test_round_trips(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize("seconds", [-1, math.nan, math.inf, 1e30, True, "30"])
def test_format_refuses_what_is_no_duration(seconds: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        format_duration(seconds)  # type: ignore[arg-type]
