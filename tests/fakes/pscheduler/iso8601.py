"""ISO 8601 durations and timestamps the way pScheduler reads and writes them.

Durations follow pScheduler's `Duration` pattern (W, D, H, M, S with decimal fractions; no years,
months or repeats). Timestamps come in three spellings on a real node, and the fake keeps each
where pScheduler uses it: run and task records (PostgreSQL `to_json`, `+00:00`, whole seconds),
archiver envelopes and attempt diagnostics (Python `isodate`, `Z`), `/clock` (microseconds).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

DURATION_PATTERN = re.compile(
    r"^P(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def is_duration(text: object) -> bool:
    return isinstance(text, str) and DURATION_PATTERN.match(text) is not None


def parse_duration(text: str) -> timedelta:
    """Reads a pScheduler duration; raises ValueError for anything its pattern refuses."""
    match = DURATION_PATTERN.match(text)
    if match is None:
        raise ValueError(f"'{text}' is not a valid ISO 8601 duration.")
    parts = {name: float(value) for name, value in match.groupdict().items() if value is not None}
    return timedelta(
        weeks=parts.get("weeks", 0.0),
        days=parts.get("days", 0.0),
        hours=parts.get("hours", 0.0),
        minutes=parts.get("minutes", 0.0),
        seconds=parts.get("seconds", 0.0),
    )


def format_duration(delta: timedelta, weeks: bool = True) -> str:
    """Writes a duration as pScheduler's interval_to_iso8601 does (P0D for zero), keeping fractions.

    weeks=False gives isodate's spelling (archiver envelopes), which never uses W.
    """
    total_us = round(delta.total_seconds() * 1_000_000)
    if total_us <= 0:
        return "P0D"
    days, rest_us = divmod(total_us, 86_400_000_000)
    hours, rest_us = divmod(rest_us, 3_600_000_000)
    minutes, rest_us = divmod(rest_us, 60_000_000)
    week_count, days = divmod(days, 7) if weeks else (0, days)
    text = "P"
    if week_count:
        text += f"{week_count}W"
    if days:
        text += f"{days}D"
    clock = ""
    if hours:
        clock += f"{hours}H"
    if minutes:
        clock += f"{minutes}M"
    if rest_us:
        seconds = f"{rest_us // 1_000_000}.{rest_us % 1_000_000:06d}".rstrip("0").rstrip(".")
        clock += f"{seconds}S"
    if clock:
        text += "T" + clock
    return text


def parse_timestamp(text: str) -> datetime:
    """Reads an ISO 8601 timestamp; one without an offset is taken as UTC (the fake node's zone)."""
    value = datetime.fromisoformat(text.strip())
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def record_time(value: datetime) -> str:
    """Run and task records: PostgreSQL to_json(date_trunc('seconds', ts)) in UTC."""
    return value.astimezone(UTC).replace(microsecond=0).isoformat()


def record_time_precise(value: datetime) -> str:
    """Raw timestamptz columns (archivings' last_attempt): microseconds kept."""
    return value.astimezone(UTC).isoformat()


def isodate_time(value: datetime) -> str:
    """pscheduler.datetime_as_iso8601 (isodate): whole seconds and Z for UTC."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clock_time(value: datetime) -> str:
    """/clock: '%Y-%m-%dT%H:%M:%S.%f' plus the zone offset."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"


def ceil_second(value: datetime) -> datetime:
    """The next whole second at or after value (pScheduler normalizes run times to seconds)."""
    if value.microsecond == 0:
        return value
    return value.replace(microsecond=0) + timedelta(seconds=1)


def seconds(delta: timedelta) -> float:
    return delta.total_seconds()


def whole_seconds(delta: timedelta) -> int:
    """Integer seconds, as pScheduler's tools take them (iperf3 -t)."""
    return max(1, math.floor(delta.total_seconds()))
