"""Test options both ways between Fathom's test kinds and pScheduler's tests: throughput is
throughput (iperf3), ping is rtt, trace is trace, latency is latencybg (powstream; owping's
latency imports too); a flow sweep has no pScheduler test.

Pure. Each mapped option names its pScheduler key, how a value converts each way, and what
pScheduler's tool does when the key is absent (its default, in Fathom's units), so that an
import fills in what a perfSONAR node would really run (rtt sends 5 packets, not Fathom's 10)
and an export writes every value that differs from what the node would otherwise do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core import contract
from measurements.choices import TestType
from meshes.specs import OPTIONS, SpecError, normalize_spec
from perfsonar.durations import format_duration, parse_duration
from perfsonar.mapping.latency import OWAMP_HEADER_BYTES

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


def _seconds_number(value: Any) -> int | float:
    """latency's packet-interval: plain seconds, not a duration."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueMismatch(f"{value!r} is not a number of seconds")
    return value


def _packet_timeout(value: Any) -> int:
    seconds = _integer(value)
    if seconds == 0:
        # owping then waits 2 s past its round-trip estimate and powstream takes its own default.
        raise ValueMismatch("0 leaves the loss timeout to the tool's own default")
    return seconds


def _whole_timeout(seconds: Any) -> int:
    # pScheduler takes whole seconds: rounding up never declares a late packet lost sooner.
    return max(1, math.ceil(float(seconds)))


def _packet_size(padding: Any) -> int:
    """Bytes of UDP payload of an OWAMP/TWAMP test packet: its 14-byte header plus the padding."""
    size = OWAMP_HEADER_BYTES + _integer(padding)
    low, high = LATENCY_BOUNDS["size_bytes"]
    if not low <= size <= high:
        raise ValueMismatch(
            f"{padding} bytes of padding make {size}-byte packets ({OWAMP_HEADER_BYTES}-byte header plus padding); "
            f"Fathom's TWAMP-light packets carry {low} to {high} bytes"
        )
    return size


def _padding(size_bytes: Any) -> int:
    return int(size_bytes) - OWAMP_HEADER_BYTES


def _dscp(value: Any) -> int:
    tos = _integer(value)
    if not 0 <= tos <= 63:
        raise ValueMismatch(f"{tos} is not a DSCP: owping and powstream pass ip-tos to their -D, which takes 0 to 63")
    return tos


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
    # Written on export even at the default: the tools disagree on what its absence means.
    always: bool = False
    # Why the tool's default, when the key is absent, is one Fathom cannot run ("" for none).
    absent_reason: str = ""


def _bounds(kind: str) -> dict[str, tuple[float, float]]:
    properties = contract.load(f"test-options/{kind}.v1.schema.json")["properties"]
    return {name: (prop["minimum"], prop["maximum"]) for name, prop in properties.items() if "minimum" in prop}


LATENCY_BOUNDS = _bounds(TestType.LATENCY)
# powstream reports a result every packet-count packets (powstream_defaults.py).
POWSTREAM_PACKET_COUNT = 600


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
    # The latency tools' defaults: owping_defaults.py, powstream_defaults.py (0.1 s, no padding).
    TestType.LATENCY: (
        MappedOption("packet-interval", "packet_interval_s", _seconds_number, _same, 0.1),
        # owping waits 2 s past its round-trip estimate without a timeout: Fathom's 2 s.
        MappedOption("packet-timeout", "packet_timeout_s", _packet_timeout, _whole_timeout, 2, always=True),
        MappedOption(
            "packet-padding",
            "size_bytes",
            _packet_size,
            _padding,
            OWAMP_HEADER_BYTES,
            absent_reason="not given: OWAMP then sends its bare 14-byte packets, smaller than a TWAMP-light packet",
        ),
        # owping and powstream hand ip-tos to -D, which reads a DSCP (owping.c parse_typeP),
        # not the TOS byte pScheduler's rtt and throughput tests mean by it.
        MappedOption("ip-tos", "dscp", _dscp, _same, 0),
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
# The same for the keys of pScheduler's latency and latencybg tests.
LATENCY_UNMAPPED_REASONS = {
    "bucket-width": "Fathom's agents take each packet's own delay, not a histogram bucket",
    "output-raw": "Fathom's agents keep each interval's figures, not every packet's timestamps",
    "flip": "Fathom's test always sends from its source: the sender is the end that runs it",
    "reverse": "Fathom's test measures from its source; the other direction is the mesh's mirror pair",
    "ctrl-port": "Fathom's TWAMP-light has no control session: its agents answer on the test's UDP port",
    "data-ports": "Fathom's agents pick their own sending ports",
    "traverse-nat": "Fathom's TWAMP-light has no control session for NAT traversal to adjust",
    "protocol": "Fathom measures with TWAMP-light (RFC 5357, Appendix I)",
    "duration": "Fathom runs a mesh's tests for as long as the mesh is enabled",
    # Only a latency (owping) test gets here: a latencybg's count sets the report interval.
    "packet-count": (
        "Fathom's latency test sends for the whole of each report interval (the task's schedule), "
        "not a set number of packets"
    ),
}


def fathom_only_options(test_type: str) -> set[str]:
    """Fathom options no pScheduler key carries (a trace's flows, a throughput's port)."""
    mapped = {option.fathom_key for option in MAPPED.get(test_type, ())}
    return {name for name, option in OPTIONS[test_type].items() if name not in mapped and not option.read_only}


def unmapped_reason(test_type: str, key: str, value: Any) -> str:
    if key in IMPLIED.get(test_type, {}):
        return f"{value!r}: {UNMAPPED_REASONS[key]}"
    if test_type == TestType.LATENCY and key in LATENCY_UNMAPPED_REASONS:
        return LATENCY_UNMAPPED_REASONS[key]
    return UNMAPPED_REASONS.get(key, f"Fathom's {test_type} test has no such option")


def _report_interval(pscheduler_spec: dict[str, Any], spec: dict[str, Any], unmapped: dict[str, str]) -> None:
    """latencybg reports every packet-count packets: that many times the interval is Fathom's
    report_interval_s, as a whole number of seconds within Fathom's bounds."""
    count: Any = pscheduler_spec.get("packet-count", POWSTREAM_PACKET_COUNT)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        unmapped["packet-count"] = f"{count!r} is not a number of packets; Fathom's default is used"
        return
    interval_s = spec.get("packet_interval_s", OPTIONS[TestType.LATENCY]["packet_interval_s"].default)
    seconds = count * interval_s
    whole = round(seconds)
    low, high = LATENCY_BOUNDS["report_interval_s"]
    every = f"{count} packets every {interval_s:g} s report every {seconds:g} s"
    if not low <= whole <= high:
        default = OPTIONS[TestType.LATENCY]["report_interval_s"].default
        unmapped["packet-count"] = f"{every}, outside Fathom's {low:g} to {high:g} s: its default ({default} s) is used"
        return
    if not math.isclose(seconds, whole, abs_tol=1e-6):
        unmapped["packet-count"] = f"{every}: Fathom reports every {whole} s (whole seconds)"
    if whole != OPTIONS[TestType.LATENCY]["report_interval_s"].default:
        spec["report_interval_s"] = whole


@dataclass(frozen=True)
class ImportedSpec:
    spec: dict[str, Any]
    # pScheduler key -> why it did not map (the spec then has Fathom's default there).
    unmapped: dict[str, str]
    # Errors no single key explains (a UDP test without a rate): the test cannot be imported.
    errors: dict[str, str]


def spec_from_pscheduler(test_type: str, pscheduler_spec: dict[str, Any], pscheduler_test: str = "") -> ImportedSpec:
    """The Fathom spec of a pScheduler spec: mapped keys converted, absent ones at what the
    pScheduler tool would do, and every key Fathom cannot take reported with why.
    `pscheduler_test` tells latencybg (whose packet-count sets the report interval) from
    latency (owping, whose task's schedule does; the caller sets it)."""
    options = {option.pscheduler_key: option for option in MAPPED[test_type]}
    spec: dict[str, Any] = {}
    unmapped: dict[str, str] = {}
    derived = {"packet-count"} if pscheduler_test == "latencybg" else set()
    for key, value in pscheduler_spec.items():
        if key in ENDPOINT_KEYS or key == "schema" or key in derived:
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
            fathom_default = fathom_defaults[option.fathom_key]
            refused = fathom_default.check(option.pscheduler_default)
            if refused is None:
                spec[option.fathom_key] = option.pscheduler_default
            else:
                why = option.absent_reason or f"not given: pScheduler's {option.pscheduler_default!r} {refused}"
                unmapped[option.pscheduler_key] = f"{why}; Fathom's default ({fathom_default.default!r}) is used"
    if derived:
        _report_interval(pscheduler_spec, spec, unmapped)
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
        if option.always or value != option.pscheduler_default:
            out[option.pscheduler_key] = option.to_pscheduler(value)
            schema = max(schema, option.since_schema)
    if test_type == TestType.LATENCY:
        count = round(normalized["report_interval_s"] / normalized["packet_interval_s"])
        if count != POWSTREAM_PACKET_COUNT:
            out["packet-count"] = count
    if schema > 1:
        out["schema"] = schema
    return out
