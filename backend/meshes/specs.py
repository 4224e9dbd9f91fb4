"""Test specs: the options of each test type, their defaults and their bounds.

Pure. The agent decodes the same specs and rejects unknown fields, so the server refuses
here, field by field, anything an agent would refuse later: a mesh never carries a test that
cannot run. Defaults follow perfSONAR's regular tests where it has them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from measurements.choices import TestType

# More parallel streams would measure the end hosts rather than the path.
MAX_PARALLEL_STREAMS = 128
# The agent refuses a flow sweep whose round (flows x samples x interval) outlasts this.
MAX_SWEEP_ROUND_MS = 600_000
CONGESTION_NAME = re.compile(r"^[a-z0-9_]{0,32}$")


class SpecError(ValueError):
    """Field-level errors of one spec: {field: message}."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Option:
    default: Any
    check: Callable[[Any], str | None]  # a message when the value is wrong


def _integer(low: int, high: int, *, allow_zero: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be a whole number"
        if allow_zero and value == 0:
            return None
        if not low <= value <= high:
            return f"must be between {low} and {high}" + (" (or 0)" if allow_zero else "")
        return None

    return check


def _number(low: float, high: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return "must be a number"
        if not low <= value <= high:
            return f"must be between {low:g} and {high:g}"
        return None

    return check


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda value: None if value is None else check(value)


def _choice(*choices: str) -> Callable[[Any], str | None]:
    return lambda value: None if value in choices else f"must be one of {', '.join(choices)}"


def _congestion(value: Any) -> str | None:
    if not isinstance(value, str) or not CONGESTION_NAME.match(value):
        return "must be a congestion control name such as cubic, bbr or htcp (or empty for the host's default)"
    return None


OPTIONS: dict[str, dict[str, Option]] = {
    TestType.PING: {
        "count": Option(10, _integer(1, 10000)),
        "interval_s": Option(1.0, _number(0.2, 60)),
        "size_bytes": Option(56, _integer(0, 65507)),
        "ttl": Option(None, _optional(_integer(1, 255))),
    },
    TestType.THROUGHPUT: {
        "duration_s": Option(20, _integer(1, 300)),
        # 0: derived from the path's RTT so slow start is left out (tcp-ceilings.md section 5).
        "omit_s": Option(0, _integer(0, 60)),
        "parallel": Option(1, _integer(1, MAX_PARALLEL_STREAMS)),
        "window_bytes": Option(0, _integer(0, 1 << 30)),
        "reverse": Option(False, _boolean),
        "udp": Option(False, _boolean),
        "bitrate_bps": Option(0, _integer(0, 400_000_000_000)),
        "congestion": Option("", _congestion),
        "mss": Option(0, _integer(88, 65495, allow_zero=True)),
        "fq_rate_bps": Option(0, _integer(0, 400_000_000_000)),
        "port": Option(0, _integer(1, 65535, allow_zero=True)),
    },
    TestType.FLOWSWEEP: {
        "protocol": Option("udp", _choice("udp", "tcp")),
        "port": Option(0, _integer(1, 65535, allow_zero=True)),
        "flows": Option(16, _integer(2, 64)),
        "samples_per_flow": Option(10, _integer(1, 100)),
        "interval_ms": Option(20, _integer(1, 1000)),
        "timeout_ms": Option(1000, _integer(100, 60000)),
    },
    TestType.TRACE: {
        "flows": Option(8, _integer(1, 64)),
        "dst_port": Option(33434, _integer(1, 65535)),
        "queries": Option(1, _integer(1, 5)),
        "wait_s": Option(1, _integer(1, 10)),
        "max_hops": Option(30, _integer(1, 64)),
    },
}


def normalize_spec(test_type: str, spec: Any) -> dict[str, Any]:
    """The spec with defaults filled in; SpecError naming every bad or unknown field."""
    options = OPTIONS.get(test_type)
    if options is None:
        raise SpecError({"test_type": f"unknown test type {test_type!r}"})
    if not isinstance(spec, dict):
        raise SpecError({"spec": "must be an object"})
    errors = {field: f"unknown option for a {test_type} test" for field in spec if field not in options}
    normalized = {}
    for field, option in options.items():
        value = spec.get(field, option.default)
        message = option.check(value)
        if message:
            errors[field] = message
        normalized[field] = value
    if test_type == TestType.THROUGHPUT and normalized["udp"] and not normalized["bitrate_bps"]:
        errors["bitrate_bps"] = "a UDP test needs a target rate (iperf3's 1 Mbit/s default measures nothing)"
    if test_type == TestType.FLOWSWEEP and not errors:
        round_ms = normalized["flows"] * normalized["samples_per_flow"] * normalized["interval_ms"]
        if round_ms > MAX_SWEEP_ROUND_MS:
            errors["samples_per_flow"] = (
                f"a round of flows x samples x interval_ms lasts {round_ms / 1000:g} s: at most 600"
            )
    if test_type == TestType.FLOWSWEEP and normalized["protocol"] == "tcp" and not normalized["port"]:
        errors["port"] = "a TCP flow sweep needs the port of a listening service on the peer"
    if errors:
        raise SpecError(errors)
    return normalized


def omit_for_s(rtt_ms: float | None, window_bytes: int = 0, mss_bytes: int = 0) -> int:
    """Seconds of slow start to leave out: two rounds per doubling from 10 segments up to the
    window, at least 2 s. The agent's throughput probe derives the same (OmitFor)."""
    window = window_bytes or 64 << 20  # autotuning can reach tens of MiB
    mss = mss_bytes or 1448
    rounds = math.ceil(math.log2(max(1.0, window / (10 * mss))))
    seconds = 2 * rounds * (rtt_ms or 0) / 1000
    return max(2, math.ceil(seconds))


# Connection set-up, iperf3's parameter exchange and teardown, and clock differences between
# agents: kept free around every throughput run so back-to-back slots never touch.
THROUGHPUT_MARGIN_S = 8


def reserved_seconds(spec: dict[str, Any], rtt_ms: float | None) -> int:
    """How long a throughput run holds both agents: test, omitted slow start and the margin."""
    omit = spec["omit_s"] or omit_for_s(rtt_ms, spec["window_bytes"], spec["mss"])
    return int(spec["duration_s"]) + omit + THROUGHPUT_MARGIN_S


@dataclass(frozen=True)
class DefaultTest:
    name: str
    test_type: str
    interval_s: int
    slip_s: int
    spec: dict[str, Any]


# perfSONAR's regular tests: throughput every 6 h for 20 s, ping every 5 min with 10 packets;
# Fathom adds a flow sweep every 15 min and a trace every 30 min.
DEFAULT_TESTS = (
    DefaultTest("throughput", TestType.THROUGHPUT, 6 * 3600, 6 * 3600, {"duration_s": 20}),
    DefaultTest("ping", TestType.PING, 300, 0, {"count": 10}),
    DefaultTest("flowsweep", TestType.FLOWSWEEP, 900, 0, {}),
    DefaultTest("trace", TestType.TRACE, 1800, 0, {}),
)
