"""Test specs: the options of each test kind, their defaults and their bounds.

Pure. Fields, defaults and bounds come from the contract's schemas (contract/test-options/),
which the agent's option structs are held to, so the server refuses here, field by field,
anything an agent would refuse later: a mesh never carries a test that cannot run. What a
schema cannot say (a UDP test needs a rate; a sweep's round is bounded) is checked below,
and by the agent alike. Defaults follow perfSONAR's regular tests where it has them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from core import contract
from measurements.choices import TestType

# The agent refuses a flow sweep whose round (flows x samples x interval) outlasts this.
MAX_SWEEP_ROUND_MS = 600_000


class SpecError(ValueError):
    """Field-level errors of one spec: {field: message}."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Option:
    default: Any
    check: Callable[[Any], str | None]  # a message when the value is wrong
    # Set by the server or the agent (readOnly in the contract), never by a mesh.
    read_only: bool = False


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def _bounds_message(schema: dict[str, Any]) -> str | None:
    """'must be between 1 and 300', with ' (or 0)' for a range that also allows 0."""
    zero_allowed = any(alt.get("const") == 0 for alt in schema.get("anyOf", []))
    ranged = next((alt for alt in schema.get("anyOf", []) if "minimum" in alt), schema)
    if "minimum" not in ranged or "maximum" not in ranged:
        return None
    return f"must be between {ranged['minimum']:g} and {ranged['maximum']:g}" + (" (or 0)" if zero_allowed else "")


def _check_from_schema(schema: dict[str, Any]) -> Callable[[Any], str | None]:
    """A field check that accepts exactly what the option's JSON Schema accepts, with a message
    a person can act on. Whole numbers are strict (5.0 is refused), as the agent's Go decoder is."""
    validator = Draft202012Validator(schema)
    types = _types(schema)

    def check(value: Any) -> str | None:
        if value is None and "null" in types:
            return None
        if "boolean" in types and not isinstance(value, bool):
            return "must be true or false"
        if "integer" in types and (isinstance(value, bool) or not isinstance(value, int)):
            return "must be a whole number"
        if "number" in types and (
            isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
        ):
            return "must be a number"
        if validator.is_valid(value):
            return None
        if "enum" in schema:
            return f"must be one of {', '.join(str(choice) for choice in schema['enum'])}"
        message: str = schema.get("errorMessage") or _bounds_message(schema) or "is not valid"
        return message

    return check


def _options(kind: str) -> dict[str, Option]:
    schema = contract.load(f"test-options/{kind}.v1.schema.json")
    return {
        name: Option(prop.get("default"), _check_from_schema(prop), read_only=prop.get("readOnly", False))
        for name, prop in schema["properties"].items()
    }


# Every test kind's options come from its schema in contract/test-options/, which the agent's
# option structs are tested against: one definition of every field, default and bound.
TEST_KINDS: tuple[str, ...] = tuple(contract.load("plan.v1.schema.json")["$defs"]["TestKind"]["enum"])
OPTIONS: dict[str, dict[str, Option]] = {kind: _options(kind) for kind in TEST_KINDS}


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
        if option.read_only:
            if field in spec:
                errors[field] = "is set by the server, not by a mesh"
            continue
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
    if (
        test_type == TestType.LATENCY
        and not errors
        and normalized["packet_timeout_s"] >= normalized["report_interval_s"]
    ):
        # The sender stops packet_timeout_s before each interval ends, to wait for the last answers.
        errors["packet_timeout_s"] = "must be shorter than report_interval_s, or no packet is sent"
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
# A perfSONAR node's throughput run lasts about 9 s beyond the test (pScheduler's tool setup,
# the server's wait, teardown): a slot with a node at either end is this much longer.
PSCHEDULER_RUN_MARGIN_S = 12


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
