"""ISO 8601 durations as pScheduler writes and reads them.

pScheduler's JSON types (python-pscheduler jsonval.py, "Duration") allow weeks, days, hours,
minutes and seconds, each with an optional decimal fraction, and no years, months or repeats:
those are inexact or not supported. rtt and trace results carry sub-millisecond fractions
("PT0.000412S"), so seconds come back as a float, not truncated.

Formatting follows what pScheduler itself emits (isodate's duration_isoformat): days, hours,
minutes and seconds to the microsecond with trailing zeros dropped, never weeks, and "P0D"
for zero, so a duration Fathom writes reads back the same in pScheduler.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

# Longer than any duration pScheduler writes; a bound so hostile input stays cheap to reject.
MAX_LENGTH = 64
_NUMBER = r"(\d+(?:\.\d+)?)"
_DURATION = re.compile(rf"P(?:{_NUMBER}W)?(?:{_NUMBER}D)?(?:T(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?")
_UNIT_SECONDS = (7 * 86400, 86400, 3600, 60, 1)
MAX_SECONDS = float(timedelta.max.days * 86400)  # what a timedelta holds


def parse_duration(text: object) -> float:
    """Seconds in a pScheduler duration such as "PT30S", "PT0.000123S", "P1DT2H" or "P1W".

    Raises ValueError saying what is wrong: not a string, years or months, a lower-case or
    otherwise unknown designator, or no amount at all ("P", "PT")."""
    if not isinstance(text, str):
        raise ValueError(f"a duration must be a string such as 'PT30S', not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"duration of {len(text)} characters is too long (at most {MAX_LENGTH})")
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not an ISO 8601 duration pScheduler accepts ({_why_not(text)})")
    if all(part is None for part in match.groups()):
        raise ValueError(f"{text!r} has no amount: write e.g. 'PT0S'")
    if text.endswith("T"):
        raise ValueError(f"{text!r} has a 'T' with no hours, minutes or seconds after it")
    seconds = sum(float(part) * unit for part, unit in zip(match.groups(), _UNIT_SECONDS, strict=True) if part)
    if not math.isfinite(seconds):
        raise ValueError(f"{text!r} is too long a duration")
    return seconds


def _why_not(text: str) -> str:
    if text.startswith("R") or "/" in text:
        return "repeats and intervals are not allowed"
    if not text.startswith("P"):
        return "it must start with 'P'"
    date_part = text[1:].partition("T")[0]
    if "Y" in date_part or "M" in date_part:
        return "years and months are not allowed, they have no fixed length"
    if text != text.upper():
        return "designators are upper case"
    return "expected e.g. 'PT30S', 'PT1H30M', 'P1D' or 'PT0.5S'"


def format_duration(seconds: float) -> str:
    """A duration pScheduler reads, e.g. 30 -> "PT30S", 90.5 -> "PT1M30.5S", 86400 -> "P1D",
    0.000412 -> "PT0.000412S", 0 -> "P0D" (rounded to the microsecond, as pScheduler does)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"a duration is a number of seconds, not {type(seconds).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be a finite number of seconds, at least 0 (got {seconds})")
    if seconds >= MAX_SECONDS:
        raise ValueError(f"{seconds} s is too long a duration")
    delta = timedelta(seconds=seconds)  # rounds to the microsecond (half to even), like isodate
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    whole, micros = divmod(micros, 1_000_000)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    text = f"{days}D" if days else ""
    if hours or minutes or secs or micros:
        text += "T" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
        if secs or micros:
            text += (f"{secs}.{micros:06d}".rstrip("0") if micros else str(secs)) + "S"
    return "P" + (text or "0D")
