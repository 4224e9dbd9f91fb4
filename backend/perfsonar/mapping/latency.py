"""A pScheduler latency or latencybg run (tools owping, powstream, twping) as the "latency" part
of a Fathom result.

OWAMP measures one way, from the spec's source to its dest (flip only changes which end runs
the client), so a node's result fills `forward` alone: `backward` and `round_trip` are null, as
the contract has them for a one-way-only test. pScheduler keeps no per-packet delay unless the
spec asks for output-raw, only `histogram-latency`, whose key is the delay divided by the spec's
bucket-width (default 1 ms) and rounded to two decimals: a delay is key x bucket-width
(pScheduler's own display once forgot the width, issue #1542), and min, p50, p90, p99 and max
are nearest-rank over the histogram, at the bucket's resolution. A negative key is a negative
delay, which the contract keeps: the two clocks disagree by more than the delay.

The clocks: with raw packets each host's S bit and error estimate are there, per packet; without
them pScheduler keeps only max-clock-error, the largest sum of both hosts' error estimates
(ms). A host is then taken as synchronized when that figure is present and finite (owping and
powstream write it only when both hosts stamped an error estimate), and each host gets half of
it, so that the one-way error bound ingest sums from the two is pScheduler's own figure.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from perfsonar.mapping.fields import (
    as_array,
    as_boolean,
    as_integer,
    as_measure,
    as_number,
    as_object,
    at,
    fail,
    required,
)
from perfsonar.mapping.placement import Placement, as_given, option
from perfsonar.mapping.runs import PsRun

MAX_PACKETS = 1_000_000  # the contract's bound on sent and answered
MAX_DELAY_MS = 600_000  # the contract's bound on a delay
MAX_CLOCK_ERROR_MS = 1e12  # the contract's bound on a clock's declared error
# An unauthenticated OWAMP (or TWAMP sender's) test packet without padding: sequence number,
# timestamp and error estimate. packet-padding is added to it (owping -s).
OWAMP_HEADER_BYTES = 14
DEFAULT_BUCKET_WIDTH_S = 0.001
DEFAULT_PACKET_INTERVAL_S = 0.1  # owping's, powstream's and twping's
# The far end's control port by tool: owampd's 861, twampd's 862. Test packets use UDP ports
# negotiated per session, so the control port is the one port that names the far end's service.
OWAMP_CONTROL_PORT = 861
CONTROL_PORT_OF_TOOL = {"twping": 862}
NTP_UNITS_PER_S = 2**32  # raw timestamps are RFC 1305 64-bit: seconds << 32 | fraction
# pScheduler's own patterns for histogram keys (pscheduler-test-latency validate.py).
_DELAY_KEY = re.compile(r"^[-+]?([0-9]+(\.[0-9]+)?|\.[0-9]+)$")
_TTL_KEY = re.compile(r"^[0-9]+$")
PERCENTILES = (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99))
NO_DELAYS: dict[str, float | None] = {"min_ms": None, "p50_ms": None, "p90_ms": None, "p99_ms": None, "max_ms": None}


@dataclass(frozen=True)
class _Packet:
    """One raw packet as owstats -R gave it (the first record of its sequence number)."""

    seq: int
    sent_ts: int
    received_ts: int  # 0: lost
    sender_synchronized: bool
    sender_error_s: float | None
    receiver_synchronized: bool
    receiver_error_s: float | None

    @property
    def delay_ms(self) -> float:
        return (self.received_ts - self.sent_ts) * 1000 / NTP_UNITS_PER_S


def _counts(value: Any, path: str, key_pattern: re.Pattern[str], what: str) -> list[tuple[str, int]]:
    histogram = as_object(value, path)
    if len(histogram) > MAX_PACKETS:
        fail(path, f"{len(histogram)} buckets, more than the {MAX_PACKETS} packets Fathom keeps")
    counts = []
    for key, count in histogram.items():
        if not key_pattern.match(key):
            fail(path, f"{key!r} is not {what}")
        counts.append((key, as_integer(count, at(path, key), 0, MAX_PACKETS)))
    return counts


def _delay_histogram(value: Any, path: str, bucket_width_s: float) -> list[tuple[float, int]]:
    """(delay in ms, packets) in delay order, buckets of one delay merged ("2.6" and "2.60")."""
    width = Decimal(repr(bucket_width_s))
    packets: dict[float, int] = {}
    for key, count in _counts(value, path, _DELAY_KEY, "a delay bucket (a number, as pScheduler writes them)"):
        delay_ms = float(Decimal(key) * width * 1000) + 0.0  # no -0.0 from a "-0.00" key
        if abs(delay_ms) > MAX_DELAY_MS:
            fail(at(path, key), f"a delay of {delay_ms:g} ms is beyond the 10 minutes Fathom keeps")
        if count:
            packets[delay_ms] = packets.get(delay_ms, 0) + count
    return sorted(packets.items())


def _delays(histogram: list[tuple[float, int]]) -> dict[str, float | None]:
    """min, nearest-rank p50/p90/p99 and max of a histogram; all null when it is empty."""
    total = sum(count for _, count in histogram)
    if not total:
        return dict(NO_DELAYS)
    delays: dict[str, float | None] = {"min_ms": histogram[0][0]}
    for name, percent in PERCENTILES:
        rank = -(-percent * total // 100)  # the smallest delay at least percent% of packets do not exceed
        seen = 0
        for delay_ms, count in histogram:
            seen += count
            if seen >= rank:
                delays[name] = delay_ms
                break
    delays["max_ms"] = histogram[-1][0]
    return delays


def _hops(value: Any, path: str, received: int) -> int | None:
    """255 less the TTL most packets arrived with: OWAMP sends with 255, as owstats reads it."""
    if value is None:
        return None
    ttls = [(int(key), count) for key, count in _counts(value, path, _TTL_KEY, "a TTL")]
    for ttl, _ in ttls:
        if ttl > 255:
            fail(at(path, str(ttl)), f"{ttl} is not a TTL (0..255)")
    total = sum(count for _, count in ttls)
    if total != received:
        fail(path, f"{total} packets, but packets-received says {received}")
    if not total:
        return None
    _, ttl = max((count, ttl) for ttl, count in ttls)  # a tie goes to the higher TTL
    return 255 - ttl


def _clock_error_s(entry: dict[str, Any], key: str, path: str) -> float | None:
    # pScheduler writes owstats' field as it came when it was empty.
    value = entry.get(key)
    if value is None or value == "":
        return None
    return as_measure(value, at(path, key))


def _raw_packets(value: Any, sent: int, received: int) -> list[_Packet]:
    """Each sequence number's first record, in sequence order, checked against the counts."""
    path = "result/raw-packets"
    entries = as_array(value, path, 2 * MAX_PACKETS)
    packets: dict[int, _Packet] = {}
    for index, item in enumerate(entries):
        where = at(path, index)
        entry = as_object(item, where)
        seq = as_integer(required(entry, "seq-num", where), at(where, "seq-num"), 0, 2**32 - 1)
        packet = _Packet(
            seq=seq,
            sent_ts=as_integer(required(entry, "src-ts", where), at(where, "src-ts"), 0, 2**64 - 1),
            received_ts=as_integer(required(entry, "dst-ts", where), at(where, "dst-ts"), 0, 2**64 - 1),
            sender_synchronized=as_boolean(required(entry, "src-clock-sync", where), at(where, "src-clock-sync")),
            sender_error_s=_clock_error_s(entry, "src-clock-err", where),
            receiver_synchronized=as_boolean(required(entry, "dst-clock-sync", where), at(where, "dst-clock-sync")),
            receiver_error_s=_clock_error_s(entry, "dst-clock-err", where),
        )
        if entry.get("ip-ttl") is not None:
            as_integer(entry["ip-ttl"], at(where, "ip-ttl"), 0, 255)
        if packet.received_ts and abs(packet.delay_ms) > MAX_DELAY_MS:
            fail(where, f"a delay of {packet.delay_ms:g} ms is beyond the 10 minutes Fathom keeps")
        packets.setdefault(seq, packet)  # a later record of a sequence number is a duplicate
    if len(packets) != sent:
        fail(path, f"{len(packets)} packets, but packets-sent says {sent}")
    arrived = sum(1 for packet in packets.values() if packet.received_ts)
    if arrived != received:
        fail(path, f"{arrived} packets arrived, but packets-received says {received}")
    return [packets[seq] for seq in sorted(packets)]


def _ipdv_ms(packets: list[_Packet]) -> float | None:
    """RFC 3393 over consecutive packets (n, n+1) that both arrived: the mean absolute change."""
    arrived = {packet.seq: packet.delay_ms for packet in packets if packet.received_ts}
    changes = [abs(arrived[seq + 1] - delay) for seq, delay in arrived.items() if seq + 1 in arrived]
    return round(sum(changes) / len(changes), 6) if changes else None


def _clock(synchronized: bool, errors_s: list[float], fallback_ms: float) -> dict[str, Any]:
    error_ms = round(max(errors_s) * 1000, 6) if errors_s else fallback_ms
    if error_ms > MAX_CLOCK_ERROR_MS:
        fail("result/raw-packets", f"a clock error of {error_ms:g} ms is beyond what Fathom keeps")
    return {"synchronized": synchronized, "error_ms": error_ms}


def _clocks(
    packets: list[_Packet] | None, max_clock_error_ms: float | None, received: int
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(sender's clock, receiver's clock; None when nothing arrived to declare it)."""
    declared = max_clock_error_ms is not None
    half_ms = round(max_clock_error_ms / 2, 6) if max_clock_error_ms is not None else 0.0
    if packets is None:
        sender = {"synchronized": declared, "error_ms": half_ms}
        return sender, ({"synchronized": declared, "error_ms": half_ms} if received else None)
    sender = _clock(
        bool(packets) and all(packet.sender_synchronized for packet in packets),
        [packet.sender_error_s for packet in packets if packet.sender_error_s is not None],
        half_ms,
    )
    arrived = [packet for packet in packets if packet.received_ts]
    if not arrived:
        return sender, None
    receiver = _clock(
        all(packet.receiver_synchronized for packet in arrived),
        [packet.receiver_error_s for packet in arrived if packet.receiver_error_s is not None],
        half_ms,
    )
    return sender, receiver


def _padding_bytes(value: Any, path: str) -> int:
    return OWAMP_HEADER_BYTES + as_integer(value, path, 0, 65507 - OWAMP_HEADER_BYTES)


def _dscp(value: Any, path: str) -> int:
    tos = as_integer(value, path, 0, 255)
    if tos > 63:
        fail(path, f"{tos} is not a DSCP: owping and powstream pass ip-tos to their -D, which takes 0..63")
    return tos


def _options(run: PsRun, placement: Placement) -> dict[str, Any]:
    spec, given = run.spec, as_object(placement.options, "placement/options")
    interval_s, where = option(spec, "packet-interval", given, "packet_interval_s", as_given, DEFAULT_PACKET_INTERVAL_S)
    interval_s = as_number(interval_s, where)
    if not 0.001 <= interval_s <= 60:
        fail(where, f"{interval_s} s between packets is outside the 0.001..60 s Fathom keeps")
    size, where = option(spec, "packet-padding", given, "size_bytes", _padding_bytes, OWAMP_HEADER_BYTES)
    dscp, where_dscp = option(spec, "ip-tos", given, "dscp", _dscp, 0)
    port = CONTROL_PORT_OF_TOOL.get(run.tool, OWAMP_CONTROL_PORT)
    if spec.get("ctrl-port") is not None:
        port = as_integer(spec["ctrl-port"], "test/spec/ctrl-port", 1, 65535)
    return {
        "packet_interval_s": interval_s,
        "size_bytes": as_integer(size, where, OWAMP_HEADER_BYTES, 65507),
        "dscp": as_integer(dscp, where_dscp, 0, 63),
        "port": port,
    }


def _bucket_width_s(spec: dict[str, Any]) -> float:
    if spec.get("bucket-width") is None:
        return DEFAULT_BUCKET_WIDTH_S
    width = as_number(spec["bucket-width"], "test/spec/bucket-width")
    if not 0 < width < 1:
        fail("test/spec/bucket-width", f"{width} is outside pScheduler's 0..1 s (exclusive)")
    return width


def _count(result: dict[str, Any], key: str) -> int:
    return as_integer(required(result, key, "result"), f"result/{key}", 0, MAX_PACKETS)


def _optional_count(result: dict[str, Any], key: str) -> int | None:
    value = result.get(key)
    return None if value is None else as_integer(value, f"result/{key}", 0, MAX_PACKETS)


def to_latency(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """The result's "latency" object from a latency or latencybg run's merged result."""
    if run.tool == "halfping":
        fail("tool", "halfping halves a ping's round trip: it measures no one-way delay for Fathom to keep")
    reported_back = run.spec.get("reverse") is True
    if reported_back != placement.measured_by_peer:
        if reported_back:
            fail("test/spec/reverse", "the run reports dest to source; a Fathom latency result runs from its source")
        fail("test/spec/reverse", "the node measures this path from its far end: its run must report the way back")
    options = _options(run, placement)
    sent, received = _count(result, "packets-sent"), _count(result, "packets-received")
    if received > sent:
        fail("result/packets-received", f"{received} packets arrived, more than the {sent} sent")
    lost = _optional_count(result, "packets-lost")
    if lost is not None and lost != sent - received:
        fail("result/packets-lost", f"{lost}, but {sent} sent less {received} received is {sent - received}")
    duplicates = _optional_count(result, "packets-duplicated") or 0
    if duplicates and not received:
        fail("result/packets-duplicated", f"{duplicates} duplicates, but no packet arrived")
    reordered = _optional_count(result, "packets-reordered")
    if reordered is not None and reordered > received:
        fail("result/packets-reordered", f"{reordered} reordered, more than the {received} packets that arrived")
    max_clock_error_ms = None
    if result.get("max-clock-error") is not None:
        max_clock_error_ms = as_measure(result["max-clock-error"], "result/max-clock-error")
        if max_clock_error_ms > MAX_CLOCK_ERROR_MS:
            fail("result/max-clock-error", f"{max_clock_error_ms:g} ms is beyond what Fathom keeps")

    histogram: list[tuple[float, int]] = []
    if result.get("histogram-latency") is not None:
        histogram = _delay_histogram(result["histogram-latency"], "result/histogram-latency", _bucket_width_s(run.spec))
    elif received:
        fail("result/histogram-latency", f"missing, but {received} packets arrived: their delays are only there")
    counted = sum(count for _, count in histogram)
    if counted != received:
        fail("result/histogram-latency", f"{counted} packets, but packets-received says {received}")
    packets = None if result.get("raw-packets") is None else _raw_packets(result["raw-packets"], sent, received)
    sender_clock, receiver_clock = _clocks(packets, max_clock_error_ms, received)
    return {
        **options,
        "sent": sent,
        "answered": received,
        "duplicates": duplicates,
        "malformed": 0,  # OWAMP keeps no count of stray datagrams
        "forward": {
            "lost": sent - received,
            "reordered_fraction": reordered / received if reordered is not None and received else None,
            "delay": _delays(histogram),
            "ipdv_ms": _ipdv_ms(packets) if packets is not None else None,
            "hops": _hops(result.get("histogram-ttl"), "result/histogram-ttl", received),
        },
        "backward": None,
        "round_trip": None,
        "sender_clock": sender_clock,
        "reflector_clock": receiver_clock,
    }


def session_start(run: PsRun, latency: dict[str, Any]) -> datetime:
    """When the packets of the result began. A latencybg result is a run of its own, stamped
    with the moment powstream reported it (start = end): it began as long before as its packets
    took to send."""
    if run.end > run.start:
        return run.start
    seconds = latency["sent"] * latency["packet_interval_s"]
    return run.end - timedelta(microseconds=math.ceil(seconds * 1_000_000))
