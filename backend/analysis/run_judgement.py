"""One TCP throughput run judged from plain values: its facts, interval statistics, ceilings
and diagnosis.

Pure. The analysis service (services/runs.py) reads a run and what stood around it from the
database and calls `judge_run`; the truth benchmark (analysis/truth) calls it on recorded lab
runs. Both go through this one function, so what the benchmark measures is what the product
does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from analysis.diagnosis import NEAR_FRACTION, RunDiagnosis, diagnose
from analysis.intervals import IntervalRow, IntervalStats, interval_stats
from analysis.runs import RunCeilings, RunFacts, run_ceilings
from analysis.tuning import HostTuning


def number(mapping: dict[str, Any], key: str) -> float | None:
    """A number of stored JSON (not a boolean), else None."""
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def positive_int(mapping: dict[str, Any], key: str) -> int | None:
    value = number(mapping, key)
    return int(value) if value is not None and value > 0 else None


def reverse_run(summary: dict[str, Any], params: dict[str, Any]) -> bool:
    """iperf3 -R: the server sends."""
    return summary.get("reverse") is True or params.get("reverse") is True


def udp_run(summary: dict[str, Any], params: dict[str, Any]) -> bool:
    protocol = summary.get("protocol")
    return params.get("udp") is True or (isinstance(protocol, str) and protocol.upper() == "UDP")


@dataclass(frozen=True)
class PathContext:
    """What the path's other probes said before the run: loss and minimum RTT from pings
    (none taken while the pair's own throughput tests ran), the RTT modes of the flow sweep
    that stood then, and whether ECMP was seen in the week before."""

    loss_fraction: float | None = None
    loss_floor: float | None = None
    loss_source: str = ""
    ping_min_rtt_ms: float | None = None
    sweep_base_rtt_ms: float | None = None
    mode_rtts_ms: tuple[float, ...] = ()  # empty unless the standing sweep's verdict is ECMP
    ecmp_seen: bool = False


def _inflight_bytes(stats: IntervalStats | None, rtt_us: float | None, streams: int) -> float | None:
    """Bytes in flight per stream (windows and buffers are per socket)."""
    if stats is None or not stats.steady_rate_bps or not rtt_us or rtt_us <= 0:
        return None
    return stats.steady_rate_bps * rtt_us / 1e6 / 8 / max(streams, 1)


def _us(ms: float | None) -> float | None:
    return ms * 1000 if ms else None


def run_facts(
    summary: dict[str, Any],
    params: dict[str, Any],
    sender: HostTuning,
    receiver: HostTuning,
    context: PathContext,
    stats: IntervalStats | None,
) -> RunFacts:
    """Everything the run's ceilings rest on, from its iperf3 options and summary, both hosts'
    tuning at the time and the path's context."""
    streams = positive_int(summary, "streams") or positive_int(params, "parallel") or 1
    congestion = next(
        (
            value
            for value in (summary.get("sender_congestion"), params.get("congestion"), sender.congestion_control)
            if isinstance(value, str) and value
        ),
        None,
    )
    client_sends = not reverse_run(summary, params)
    min_rtt_us, mean_rtt_us = number(summary, "min_rtt_us"), number(summary, "mean_rtt_us")
    path_min = [value for value in (context.ping_min_rtt_ms, context.sweep_base_rtt_ms) if value]
    return RunFacts(
        streams=streams,
        sender=sender,
        receiver=receiver,
        window_request_bytes=positive_int(params, "window_bytes"),
        congestion_control=congestion,
        mss_request_bytes=positive_int(params, "mss"),
        pmtu_bytes=stats.pmtu_bytes if stats else None,
        run_min_rtt_ms=min_rtt_us / 1000 if min_rtt_us and min_rtt_us > 0 else None,
        run_mean_rtt_ms=mean_rtt_us / 1000 if mean_rtt_us and mean_rtt_us > 0 else None,
        path_min_rtt_ms=min(path_min) if path_min else None,
        mode_rtts_ms=context.mode_rtts_ms,
        ecmp_seen=context.ecmp_seen,
        loss_fraction=context.loss_fraction,
        loss_source=context.loss_source,
        loss_floor=context.loss_floor,
        max_snd_wnd_bytes=positive_int(summary, "max_snd_wnd"),
        # A reverse run has no TCP_INFO at the client: the path's unloaded RTT still gives a
        # lower bound of what was in flight.
        inflight_bytes=_inflight_bytes(stats, mean_rtt_us or min_rtt_us or _us(min(path_min, default=None)), streams),
        # iperf3 reports the client's socket buffers: the sender's with a forward run.
        sndbuf_actual_bytes=positive_int(summary, "sndbuf_actual") if client_sends else None,
        rcvbuf_actual_bytes=None if client_sends else positive_int(summary, "rcvbuf_actual"),
        max_snd_cwnd_bytes=positive_int(summary, "max_snd_cwnd"),
    )


def with_summary_retransmits(stats: IntervalStats, summary: dict[str, Any], mss_bytes: int | None) -> IntervalStats:
    """Reverse runs have only the receiver's intervals (no TCP_INFO): take the retransmits
    from iperf3's end summary instead."""
    if stats.retransmits is not None:
        return stats
    retransmits = number(summary, "retransmits")
    sent_bytes = number(summary, "sender_bytes")
    if retransmits is None or retransmits < 0:
        return stats
    rate = retransmits / (sent_bytes / mss_bytes) if sent_bytes and mss_bytes else None
    return replace(stats, retransmits=int(retransmits), retransmit_rate=rate)


@dataclass(frozen=True)
class JudgedRun:
    facts: RunFacts
    stats: IntervalStats
    ceilings: RunCeilings
    diagnosis: RunDiagnosis
    # Why the path's loss was set aside, when the run itself disproved it.
    loss_note: str | None = None


def judge_run(
    summary: dict[str, Any],
    params: dict[str, Any],
    rows: Sequence[IntervalRow],
    sender: HostTuning,
    receiver: HostTuning,
    context: PathContext,
) -> JudgedRun:
    """Ceilings and diagnosis of one OK TCP run."""
    # The rate and path MTU do not depend on the MSS; the retransmit rate does.
    facts = run_facts(summary, params, sender, receiver, context, interval_stats(rows, None))
    stats = with_summary_retransmits(interval_stats(rows, facts.mss_bytes), summary, facts.mss_bytes)
    rate = stats.steady_rate_bps or number(summary, "receiver_bits_per_s")
    ceilings = run_ceilings(facts)
    # The loss term at the least loss the pings support: a rate above even that disproves the
    # pings' loss as random loss on this flow's path; a rate between the two does not (4 lost
    # of 1,100 pings is 0.36 %, or as little as 0.14 %).
    floor = facts.loss_floor if facts.loss_floor is not None else facts.loss_fraction
    loss_term = run_ceilings(replace(facts, loss_fraction=floor)).at_min_rtt.ceilings.loss
    note = None
    if rate and loss_term.rate_bps is not None and rate > (1 + NEAR_FRACTION) * loss_term.rate_bps:
        # The run beat the loss ceiling: the ping loss was not random loss on this flow's path.
        note = f"{facts.loss_source}, contradicted by the measured rate (not random loss on this path)"
        facts = replace(facts, loss_fraction=None, loss_source=note, loss_floor=None)
        ceilings = run_ceilings(facts)
    return JudgedRun(facts, stats, ceilings, diagnose(ceilings, stats, facts, rate), note)
