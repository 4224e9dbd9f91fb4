"""Test options both ways between Fathom's test kinds and pScheduler's tests: throughput is
throughput (iperf3), ping is rtt, trace is trace; a flow sweep has no pScheduler test.

Pure. Each mapped option names its pScheduler key, how a value converts each way, and what
pScheduler's tool does when the key is absent (its default, in Fathom's units), so that an
import fills in what a perfSONAR node would really run (rtt sends 5 packets, not Fathom's 10)
and an export writes every value that differs from what the node would otherwise do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from measurements.choices import TestType
from meshes.specs import OPTIONS, SpecError, normalize_spec
from perfsonar.durations import format_duration, parse_duration

# Where a value names one end of the pair; the importer reads these against the group.
ENDPOINT_KEYS = ("source", "dest", "source-node", "dest-node")


class ValueMismatch(ValueError):
    """A pScheduler value Fathom cannot take as it is (a type, a unit, a fraction)."""


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueMismatch(f"{value!r} is not a whole number")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueMismatch(f"{value!r} is not true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueMismatch(f"{value!r} is not a string")
    return value


def _seconds(value: Any) -> float:
    try:
        return parse_duration(value)
    except ValueError as error:
        raise ValueMismatch(str(error)) from error


def _whole_seconds(value: Any) -> int:
    seconds = _seconds(value)
    if not seconds.is_integer():
        raise ValueMismatch(f"{value} is not a whole number of seconds, which Fathom runs")
    return int(seconds)


def _fractional_seconds(value: Any) -> int | float:
    seconds = _seconds(value)
    return int(seconds) if seconds.is_integer() else seconds


def _iso(seconds: Any) -> str:
    return format_duration(float(seconds))


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class MappedOption:
    pscheduler_key: str
    fathom_key: str
    to_fathom: Callable[[Any], Any]
    to_pscheduler: Callable[[Any], Any]
    # What the pScheduler tool does without the key, as a Fathom value (iperf3 tool:
    # iperf3_defaults.py; ping and traceroute tools: their `run` scripts).
    pscheduler_default: Any
    # The spec schema that introduced the key (pScheduler refuses it under an older one).
    since_schema: int = 1


MAPPED: dict[str, tuple[MappedOption, ...]] = {
    TestType.THROUGHPUT: (
        MappedOption("duration", "duration_s", _whole_seconds, _iso, 10),
        MappedOption("omit", "omit_s", _whole_seconds, _iso, 0),
        MappedOption("parallel", "parallel", _integer, _same, 1),
        MappedOption("window-size", "window_bytes", _integer, _same, 0),
        MappedOption("reverse", "reverse", _boolean, _same, False),
        MappedOption("udp", "udp", _boolean, _same, False),
        MappedOption("bandwidth", "bitrate_bps", _integer, _same, 0),
        MappedOption("congestion", "congestion", _text, _same, ""),
        MappedOption("mss", "mss", _integer, _same, 0),
        MappedOption("fq-rate", "fq_rate_bps", _integer, _same, 0, since_schema=7),
    ),
    TestType.PING: (
        MappedOption("count", "count", _integer, _same, 5),
        MappedOption("interval", "interval_s", _fractional_seconds, _iso, 1),
        MappedOption("length", "size_bytes", _integer, _same, 56),
        MappedOption("ttl", "ttl", _integer, _same, None),
    ),
    TestType.TRACE: (
        MappedOption("dest-port", "dst_port", _integer, _same, 33434),
        MappedOption("queries", "queries", _integer, _same, 1),
        MappedOption("wait", "wait_s", _fractional_seconds, _iso, 5),
        MappedOption("hops", "max_hops", _integer, _same, 30),
    ),
}

# Keys whose value Fathom already does (no option needed): {kind: {key: the value}}.
IMPLIED: dict[str, dict[str, Any]] = {
    TestType.PING: {"protocol": "icmp"},
    TestType.TRACE: {"probe-type": "udp"},
}

# Why a pScheduler key has no Fathom option, where a general sentence would not say enough.
UNMAPPED_REASONS = {
    "ip-version": "Fathom tests each pair at its members' addresses, whose IP version decides",
    "single-ended": "Fathom decides how each pair runs (single-ended against a Fathom agent's iperf3 server)",
    "single-ended-port": "Fathom decides how each pair runs (single-ended against a Fathom agent's iperf3 server)",
    # Only a throughput test gets here: a ping's interval maps.
    "interval": "Fathom's agents keep iperf3's per-second intervals",
    "protocol": "Fathom pings with ICMP echo",
    "probe-type": "Fathom traces with UDP probes",
    "algorithm": "Fathom traces every flow with traceroute, each from its own source port",
    "as": "Fathom looks up autonomous systems itself",
    "hostnames": "Fathom resolves names itself",
    "local-address": "Fathom tests from each member's address",
}


def fathom_only_options(test_type: str) -> set[str]:
    """Fathom options no pScheduler key carries (a trace's flows, a throughput's port)."""
    mapped = {option.fathom_key for option in MAPPED.get(test_type, ())}
    return {name for name, option in OPTIONS[test_type].items() if name not in mapped and not option.read_only}


def unmapped_reason(test_type: str, key: str, value: Any) -> str:
    if key in IMPLIED.get(test_type, {}):
        return f"{value!r}: {UNMAPPED_REASONS[key]}"
    return UNMAPPED_REASONS.get(key, f"Fathom's {test_type} test has no such option")


@dataclass(frozen=True)
class ImportedSpec:
    spec: dict[str, Any]
    # pScheduler key -> why it did not map (the spec then has Fathom's default there).
    unmapped: dict[str, str]
    # Errors no single key explains (a UDP test without a rate): the test cannot be imported.
    errors: dict[str, str]


def spec_from_pscheduler(test_type: str, pscheduler_spec: dict[str, Any]) -> ImportedSpec:
    """The Fathom spec of a pScheduler spec: mapped keys converted, absent ones at what the
    pScheduler tool would do, and every key Fathom cannot take reported with why."""
    options = {option.pscheduler_key: option for option in MAPPED[test_type]}
    spec: dict[str, Any] = {}
    unmapped: dict[str, str] = {}
    for key, value in pscheduler_spec.items():
        if key in ENDPOINT_KEYS or key == "schema":
            continue
        option = options.get(key)
        if option is None:
            if IMPLIED.get(test_type, {}).get(key) != value:
                unmapped[key] = unmapped_reason(test_type, key, value)
            continue
        try:
            spec[option.fathom_key] = option.to_fathom(value)
        except ValueMismatch as error:
            unmapped[key] = f"{error}; Fathom's default is used"
    fathom_defaults = OPTIONS[test_type]
    for option in MAPPED[test_type]:
        absent = option.fathom_key not in spec and option.pscheduler_key not in unmapped
        if absent and option.pscheduler_default != fathom_defaults[option.fathom_key].default:
            spec[option.fathom_key] = option.pscheduler_default
    by_fathom_key = {option.fathom_key: option.pscheduler_key for option in MAPPED[test_type]}
    # A value out of Fathom's bounds is left at Fathom's default, key by key, and said so.
    while True:
        try:
            normalize_spec(test_type, spec)
        except SpecError as error:
            dropped = False
            for field, message in error.errors.items():
                ps_key = by_fathom_key.get(field)
                if ps_key is not None and field in spec and ps_key in pscheduler_spec:
                    default = fathom_defaults[field].default
                    unmapped[ps_key] = (
                        f"{pscheduler_spec[ps_key]!r}: {message} in Fathom; its default ({default!r}) is used"
                    )
                    del spec[field]
                    dropped = True
            if not dropped:
                return ImportedSpec(spec, unmapped, error.errors)
            continue
        return ImportedSpec(spec, unmapped, {})


def spec_to_pscheduler(test_type: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The pScheduler options of a Fathom spec (without the pair's ends): each value that
    differs from what the pScheduler tool would do anyway, and the schema those keys need."""
    normalized = normalize_spec(test_type, spec)
    out: dict[str, Any] = {}
    schema = 1
    for option in MAPPED.get(test_type, ()):
        value = normalized[option.fathom_key]
        if value != option.pscheduler_default:
            out[option.pscheduler_key] = option.to_pscheduler(value)
            schema = max(schema, option.since_schema)
    if schema > 1:
        out["schema"] = schema
    return out
