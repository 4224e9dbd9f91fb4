"""Typed readers of pScheduler JSON, and MappingError, which they raise.

Each reader takes a value and its path in the payload and returns it as Fathom needs it, or
raises MappingError with a message that starts with that path, e.g.
"result/intervals/3/streams/0/throughput-bits: not a number (a string)".
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime
from typing import Any, NoReturn

from perfsonar.durations import parse_duration

# iperf3 3.12 prints TCP_INFO values it never got as 2^32-1 or 2^64-1, and pScheduler passes
# them on: such values are missing, not measurements (as the Go agent reads them).
IMPLAUSIBLE = float(2**32 - 1)
MAX_INT64 = 2**63 - 1
MAX_RTT_MS = 600_000  # the contract's bound on a round trip (ping sample, trace hop)


class MappingError(ValueError):
    """A pScheduler payload Fathom cannot map. The message starts with the path of the field
    at fault, e.g. "result/roundtrips/2/rtt: 'PT1X' is not an ISO 8601 duration ..."."""


def fail(path: str, problem: str) -> NoReturn:
    raise MappingError(f"{path}: {problem}")


def at(path: str, key: str | int) -> str:
    """The path of `key` inside the value at `path`."""
    return f"{path}/{key}" if path else str(key)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "an array")):
        if isinstance(value, kind):
            return name
    return "an object" if isinstance(value, dict) else type(value).__name__


def as_object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        fail(path, f"not an object ({_json_type(value)})")
    return value


def optional_object(value: Any, path: str) -> dict[str, Any] | None:
    return None if value is None else as_object(value, path)


def required(container: dict[str, Any], key: str, path: str) -> Any:
    value = container.get(key)
    if value is None:
        fail(at(path, key), "missing")
    return value


def as_array(value: Any, path: str, max_items: int) -> list[Any]:
    if not isinstance(value, list):
        fail(path, f"not an array ({_json_type(value)})")
    if len(value) > max_items:
        fail(path, f"{len(value)} entries, more than the {max_items} Fathom keeps")
    return value


def as_text(value: Any, path: str, max_length: int) -> str:
    if not isinstance(value, str):
        fail(path, f"not a string ({_json_type(value)})")
    if len(value) > max_length:
        fail(path, f"{len(value)} characters, more than {max_length}")
    if "\x00" in value:
        fail(path, "contains a NUL character, which Fathom cannot store")
    return value


def optional_text(value: Any, path: str, max_length: int) -> str:
    return "" if value is None else as_text(value, path, max_length)


def as_boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        fail(path, f"not a boolean ({_json_type(value)})")
    return value


def as_number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(path, f"not a number ({_json_type(value)})")
    if isinstance(value, int) and abs(value) > 2**64:  # JSON integers have no bound; floats do
        fail(path, f"{value} is too large")
    if not math.isfinite(value):
        fail(path, "not a finite number")
    return float(value)


def as_measure(value: Any, path: str) -> float:
    """A non-negative figure pScheduler must have given (a rate, a time)."""
    number = as_number(value, path)
    if number < 0:
        fail(path, f"{value} is negative")
    return number


def as_integer(value: Any, path: str, low: int, high: int) -> int:
    number = as_number(value, path)
    if not number.is_integer():
        fail(path, f"{value} is not a whole number")
    if not low <= number <= high:
        fail(path, f"{value} is outside {low}..{high}")
    return int(value)


def as_amount(value: Any, path: str) -> int:
    """Bytes moved: iperf3 prints whole numbers; kept as the contract's 64-bit integer."""
    number = as_measure(value, path)
    if number > MAX_INT64:
        fail(path, f"{value} is too large")
    return int(number)


def reported(container: dict[str, Any], key: str, path: str, *, zero_is_unknown: bool = False) -> int | None:
    """A counter or TCP_INFO figure iperf3 may not have printed: None when absent, when it is
    iperf3 3.12's placeholder, or (zero_is_unknown: windows and RTTs) when it is 0."""
    value = container.get(key)
    if value is None:
        return None
    number = as_measure(value, at(path, key))
    if number >= IMPLAUSIBLE or (zero_is_unknown and number == 0):
        return None
    return int(number)


def reported_measure(container: dict[str, Any], key: str, path: str) -> float | None:
    value = container.get(key)
    if value is None:
        return None
    number = as_measure(value, at(path, key))
    return None if number >= IMPLAUSIBLE else number


def as_seconds(value: Any, path: str) -> float:
    """An ISO 8601 duration, as pScheduler writes them (PT0.000054S)."""
    try:
        return parse_duration(value)
    except ValueError as error:
        fail(path, str(error))


def as_rtt_ms(value: Any, path: str) -> float:
    """A round-trip time pScheduler wrote as a duration, in milliseconds to the nanosecond."""
    rtt_ms = round(as_seconds(value, path) * 1000.0, 6)
    if rtt_ms > MAX_RTT_MS:
        fail(path, f"{rtt_ms} ms is longer than the 10 minutes Fathom keeps")
    return rtt_ms


def as_timestamp(value: Any, path: str) -> datetime:
    written = as_text(value, path, 64)
    try:
        moment = datetime.fromisoformat(written)
    except ValueError:
        fail(path, f"{written!r} is not an ISO 8601 timestamp")
    if moment.tzinfo is None:
        fail(path, f"{written!r} has no UTC offset")
    return moment


def as_uuid(value: Any, path: str) -> str:
    written = as_text(value, path, 36)
    try:
        return str(uuid.UUID(written))
    except ValueError:
        fail(path, f"{value!r} is not a UUID")


# --- what the contract is written with ------------------------------------------------------


def utc_text(moment: datetime) -> str:
    """A contract timestamp: ISO 8601 in UTC."""
    return moment.astimezone(UTC).isoformat()


def clip(text: str, limit: int) -> str:
    """`text` stripped, and cut with "..." to fit a contract field of `limit` characters."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
