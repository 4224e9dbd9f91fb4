"""Ingest of latency results (TWAMP-light intervals): counts and delays checked against each
other, one row per interval. A one-way-only test (OWAMP, a perfSONAR node's latencybg) has no
backward direction and no round trip: its `answered` are the packets that arrived."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.units import loss_fraction
from measurements.kinds.base import BatchError, KindIngest, RunKeys
from measurements.models import LatencyInterval

DIRECTIONS = ("forward", "backward")
DELAY_KEYS = ("min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")


def errors(where: str, latency: dict[str, Any]) -> list[BatchError]:
    """Every packet sent is answered or lost one way, and a delay exists only for what came back:
    loss and delays computed from a result that breaks this would lie."""
    found = []
    sent, answered = latency["sent"], latency["answered"]
    directions = [direction for direction in DIRECTIONS if latency[direction] is not None]
    lost = {direction: latency[direction]["lost"] for direction in directions}
    if answered > sent:
        found.append(BatchError(f"{where}/answered", f"{answered} answered exceeds {sent} sent"))
    elif answered + sum(lost.values()) != sent:
        losses = " + ".join(f"{lost[direction]} lost {direction}" for direction in directions)
        found.append(BatchError(f"{where}/sent", f"{sent} sent is not {answered} answered + {losses}"))
    if (latency["backward"] is None) != (latency["round_trip"] is None):
        message = "must be null exactly when backward is: only a one-way-only test has neither"
        found.append(BatchError(f"{where}/round_trip", message))
    if latency["duplicates"] and not answered:
        found.append(BatchError(f"{where}/duplicates", "duplicate answers, but no packet was answered"))
    # A delay, hop count or reordering exists only for packets that arrived (two-way: were answered).
    for direction in directions:
        section = latency[direction]
        found.extend(_delay_errors(f"{where}/{direction}/delay", section["delay"], answered))
        for key in ("reordered_fraction", "ipdv_ms", "hops"):
            if section[key] is not None and not answered:
                found.append(BatchError(f"{where}/{direction}/{key}", "must be null: no packet was answered"))
    if latency["round_trip"] is not None:
        found.extend(_delay_errors(f"{where}/round_trip", latency["round_trip"], answered))
    if (latency["reflector_clock"] is None) != (answered == 0):
        message = "must be null exactly when no packet was answered (the answers declare the reflector's clock)"
        found.append(BatchError(f"{where}/reflector_clock", message))
    return found


def _delay_errors(where: str, delays: dict[str, float | None], answered: int) -> list[BatchError]:
    values = [delays[key] for key in DELAY_KEYS]
    if not answered:
        if any(value is not None for value in values):
            return [BatchError(where, "delays must be null: no packet was answered")]
        return []
    missing = [key for key, value in zip(DELAY_KEYS, values, strict=True) if value is None]
    if missing:
        return [BatchError(f"{where}/{missing[0]}", f"{answered} packets answered, but {missing[0]} is null")]
    for (low_key, low), (high_key, high) in zip(
        zip(DELAY_KEYS, values, strict=True), zip(DELAY_KEYS[1:], values[1:], strict=True), strict=False
    ):
        assert low is not None and high is not None  # none is null past the check above
        if low > high:
            return [BatchError(f"{where}/{high_key}", f"{high_key} {high:g} is below {low_key} {low:g}")]
    return []


def _clock_error_ms(latency: dict[str, Any]) -> float | None:
    """The one-way delays' error bound: both clocks' declared errors summed (null without an answer)."""
    reflector = latency["reflector_clock"]
    return latency["sender_clock"]["error_ms"] + reflector["error_ms"] if reflector is not None else None


NO_DIRECTION: dict[str, Any] = {
    "lost": None,
    "reordered_fraction": None,
    "ipdv_ms": None,
    "hops": None,
    "delay": dict.fromkeys(DELAY_KEYS),
}


def params_and_summary(latency: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    params = {key: latency[key] for key in ("packet_interval_s", "size_bytes", "dscp", "port")}
    sent, forward = latency["sent"], latency["forward"]
    backward = latency["backward"] or NO_DIRECTION
    round_trip = latency["round_trip"] or NO_DIRECTION["delay"]
    reflector = latency["reflector_clock"]
    summary = {
        "sent": sent,
        "answered": latency["answered"],
        "duplicates": latency["duplicates"],
        "malformed": latency["malformed"],
        "forward_lost": forward["lost"],
        "backward_lost": backward["lost"],
        # Each direction's loss over the packets that entered it: answers are lost only of
        # what reached the reflector.
        "forward_loss_fraction": loss_fraction(forward["lost"], sent),
        "backward_loss_fraction": (
            loss_fraction(backward["lost"], sent - forward["lost"]) if backward["lost"] is not None else None
        ),
        "forward_min_ms": forward["delay"]["min_ms"],
        "forward_p50_ms": forward["delay"]["p50_ms"],
        "backward_min_ms": backward["delay"]["min_ms"],
        "backward_p50_ms": backward["delay"]["p50_ms"],
        "round_trip_min_ms": round_trip["min_ms"],
        "round_trip_p50_ms": round_trip["p50_ms"],
        "sender_synchronized": latency["sender_clock"]["synchronized"],
        "sender_error_ms": latency["sender_clock"]["error_ms"],
        "reflector_synchronized": reflector["synchronized"] if reflector is not None else None,
        "reflector_error_ms": reflector["error_ms"] if reflector is not None else None,
        "clock_error_ms": _clock_error_ms(latency),
    }
    return params, summary


def rows(keys: RunKeys, latency: dict[str, Any]) -> Iterable[dict[str, Any]]:
    reflector = latency["reflector_clock"]
    row: dict[str, Any] = {
        "time": keys.started_at,
        "ended_at": keys.ended_at,
        "run_id": keys.run_id,
        "source_id": keys.source_id,
        "destination_id": keys.destination_id,
        "family": keys.family,
        "sent": latency["sent"],
        "answered": latency["answered"],
        "duplicates": latency["duplicates"],
        "malformed": latency["malformed"],
        "sender_synchronized": latency["sender_clock"]["synchronized"],
        "sender_error_ms": latency["sender_clock"]["error_ms"],
        "reflector_synchronized": reflector["synchronized"] if reflector is not None else None,
        "reflector_error_ms": reflector["error_ms"] if reflector is not None else None,
    }
    for direction in DIRECTIONS:
        section = latency[direction] or NO_DIRECTION
        row[f"{direction}_lost"] = section["lost"]
        row[f"{direction}_reordered_fraction"] = section["reordered_fraction"]
        row[f"{direction}_ipdv_ms"] = section["ipdv_ms"]
        row[f"{direction}_hops"] = section["hops"]
        row.update({f"{direction}_{key}": section["delay"][key] for key in DELAY_KEYS})
    row.update({f"round_trip_{key}": (latency["round_trip"] or NO_DIRECTION["delay"])[key] for key in DELAY_KEYS})
    yield row


INGEST = KindIngest("latency", errors, params_and_summary, LatencyInterval, rows)
