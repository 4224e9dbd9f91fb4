"""A pScheduler rtt run (ping) as the "ping" part of a Fathom result: one sample per packet
sent, at the time it was due, with its reply's RTT and TTL, a duplicate reply as one more
sample, and the ICMP error of a packet answered by one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from perfsonar.mapping.fields import (
    as_array,
    as_integer,
    as_number,
    as_object,
    as_rtt_ms,
    as_seconds,
    at,
    fail,
    optional_text,
    required,
    utc_text,
)
from perfsonar.mapping.placement import Placement, as_given, option
from perfsonar.mapping.runs import PsRun

MAX_PING_PACKETS = 20000  # the contract's bound (result-batch.v1)
# pScheduler's ping tool default count; its interval defaults to one second.
PING_DEFAULT_COUNT = 5
PING_DEFAULT_SIZE_BYTES = 56


@dataclass(frozen=True)
class _RoundTrip:
    seq: int
    rtt_ms: float | None
    ttl: int | None
    error: str | None  # the ICMP error pScheduler names, for an error reply


def _round_trip(value: Any, path: str) -> _RoundTrip:
    entry = as_object(value, path)
    rtt_ms = None
    if entry.get("rtt") is not None:
        rtt_ms = as_rtt_ms(entry["rtt"], at(path, "rtt"))
    ttl = None if entry.get("ttl") is None else as_integer(entry["ttl"], at(path, "ttl"), 0, 255)
    error = None
    if "error" in entry and rtt_ms is None:
        # pScheduler names ICMP errors it knows and writes null for the others.
        error = optional_text(entry["error"], at(path, "error"), 200) or "unknown-icmp-error"
    return _RoundTrip(as_integer(required(entry, "seq", path), at(path, "seq"), 0, 65535), rtt_ms, ttl, error)


def to_ping(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """The result's "ping" object from an rtt run's merged result."""
    spec, given = run.spec, as_object(placement.options, "placement/options")
    count, where = option(spec, "count", given, "count", as_given, PING_DEFAULT_COUNT)
    count = as_integer(count, where, 1, 10000)
    interval_s, where = option(spec, "interval", given, "interval_s", as_seconds, 1.0)
    interval_s = as_number(interval_s, where)
    if not 0.002 <= interval_s <= 60:
        fail(where, f"{interval_s} s between packets is outside the 0.002..60 s Fathom keeps")
    size, where = option(spec, "length", given, "size_bytes", as_given, PING_DEFAULT_SIZE_BYTES)
    size = as_integer(size, where, 0, 65507)
    ttl, where = option(spec, "ttl", given, "ttl", as_given, None)
    ttl = None if ttl is None else as_integer(ttl, where, 1, 255)

    roundtrips = result.get("roundtrips")
    entries = [] if roundtrips is None else as_array(roundtrips, "result/roundtrips", MAX_PING_PACKETS)
    trips = [_round_trip(entry, f"result/roundtrips/{index}") for index, entry in enumerate(entries)]
    first = 0 if any(trip.seq == 0 for trip in trips) else 1  # iputils counts from 1
    if result.get("sent") is not None:
        sent = as_integer(result["sent"], "result/sent", 0, MAX_PING_PACKETS)
    else:
        sent = max((trip.seq - first + 1 for trip in trips), default=0)
    answers: dict[int, list[_RoundTrip]] = {}
    errors: dict[int, str] = {}
    for index, trip in enumerate(trips):
        if trip.seq - first >= sent:
            fail(f"result/roundtrips/{index}/seq", f"{trip.seq} is beyond the {sent} packets sent")
        if trip.rtt_ms is not None:
            answers.setdefault(trip.seq, []).append(trip)
        elif trip.error is not None:
            errors.setdefault(trip.seq, trip.error)
    samples: list[dict[str, Any]] = []
    for seq in range(first, first + sent):
        due = utc_text(run.start + timedelta(seconds=(seq - first) * interval_s))
        replies = answers.get(seq, [])
        if not replies:
            sample: dict[str, Any] = {"seq": seq, "time": due, "rtt_ms": None, "ttl": None, "duplicate": False}
            if seq in errors:
                sample["error"] = errors[seq]
            samples.append(sample)
        for number, reply in enumerate(replies):
            samples.append({"seq": seq, "time": due, "rtt_ms": reply.rtt_ms, "ttl": reply.ttl, "duplicate": number > 0})
    received = len(answers)
    if result.get("received") is not None:
        reported = as_integer(result["received"], "result/received", 0, MAX_PING_PACKETS)
        if reported != received:
            fail("result/received", f"{reported}, but {received} of the round trips were answered")
    return {
        "count": count,
        "interval_s": interval_s,
        "size_bytes": size,
        "ttl": ttl,
        "transmitted": sent,
        "received": received,
        "duplicates": sum(len(replies) - 1 for replies in answers.values()),
        "errors": len(errors),
        "samples": samples,
    }
