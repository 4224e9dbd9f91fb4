"""What limited a throughput run, what to change, and whether a daily volume fits the path.

Pure. `diagnose` picks one label from tcp-ceilings.md section 4 and keeps the numbers it
rests on; `advise` turns a diagnosis into settings with values (2 x BDP buffers on the side
that needs them, streams, pacing); `capacity_plan` answers seed 000's question: does the
backlog grow at today's per-stream rate?
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from analysis.ceilings import Limit, buffer_for_rate_bytes
from analysis.choices import Diagnosis
from analysis.intervals import IntervalStats
from analysis.runs import RunCeilings, RunFacts

# "Within about 10%" of a ceiling term counts as reaching it.
NEAR_FRACTION = 0.10
# TCP losing this many times more than an independent probe sees: the flow causes its own
# loss (a policer or a shallow queue), seed 002.
SELF_INFLICTED_LOSS_FACTOR = 10.0
# Without an independent loss figure, this retransmit rate alone is heavy loss.
HEAVY_RETRANSMIT_RATE = 0.01
# A policer shows as a rate far below every ceiling.
POLICER_MAX_FRACTION = 0.5
# RTT under load this many times the unloaded RTT: a standing queue at a bottleneck.
QUEUE_RTT_FACTOR = 1.25
# Flat-topped: per-second rates varying less than this (coefficient of variation).
FLAT_RATE_CV = 0.10
# Seed 001: about 13 TiB of Copernicus products a day.
DEFAULT_DAILY_VOLUME_BYTES = 13 * 2**40
MIB = 2**20

LIMIT_LABELS = {
    Limit.LINK: Diagnosis.CAPACITY,
    Limit.RECEIVE_WINDOW: Diagnosis.RECEIVE_WINDOW,
    Limit.SEND_BUFFER: Diagnosis.SEND_BUFFER,
    Limit.LOSS: Diagnosis.LOSS,
}


def _mbit(rate_bps: float | None) -> str:
    if rate_bps is None:
        return "unknown"
    if rate_bps >= 1e9:
        return f"{rate_bps / 1e9:.2f} Gbit/s"
    return f"{rate_bps / 1e6:.1f} Mbit/s"


@dataclass(frozen=True)
class RunDiagnosis:
    label: Diagnosis
    rate_bps: float | None
    ceiling_bps: float | None
    winning_term: Limit
    fraction_of_ceiling: float | None
    evidence: tuple[str, ...]
    not_converged: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label.value,
            "rate_bps": self.rate_bps,
            "ceiling_bps": self.ceiling_bps,
            "winning_term": self.winning_term.value,
            "fraction_of_ceiling": self.fraction_of_ceiling,
            "evidence": list(self.evidence),
            "not_converged": self.not_converged,
        }


def _near(rate_bps: float, term_bps: float | None) -> bool:
    """Within about 10% of a term."""
    return term_bps is not None and (1 - NEAR_FRACTION) * term_bps <= rate_bps <= (1 + NEAR_FRACTION) * term_bps


def diagnose(
    ceilings: RunCeilings, stats: IntervalStats, facts: RunFacts, rate_bps: float | None = None
) -> RunDiagnosis:
    """One label for the run, with the numbers it rests on."""
    rate = rate_bps if rate_bps is not None else stats.steady_rate_bps
    at_min = ceilings.at_min_rtt
    terms = at_min.ceilings.terms()
    load_terms = ceilings.under_load.ceilings.terms() if ceilings.under_load else {}
    evidence: list[str] = []
    if rate is None or rate <= 0:
        return RunDiagnosis(Diagnosis.UNKNOWN, rate, at_min.ceiling_bps, at_min.limit, None, ("no rate measured",))
    ceiling = at_min.ceiling_bps
    fraction = rate / ceiling if ceiling else None
    for limit, term in terms.items():
        shown = _mbit(term.rate_bps) if term.known else f"unknown ({term.reason})"
        evidence.append(f"{limit.value.replace('_', ' ')} ceiling {shown}")
    evidence.append(f"steady rate {_mbit(rate)} at {at_min.rtt_ms} ms ({at_min.rtt_source})")
    if stats.window_limited_share is not None:
        evidence.append(f"snd_wnd < snd_cwnd in {stats.window_limited_share:.0%} of intervals")
    if stats.retransmits is not None:
        rate_text = f" ({stats.retransmit_rate:.3%} of segments)" if stats.retransmit_rate is not None else ""
        evidence.append(f"{stats.retransmits} retransmits{rate_text}, {stats.cwnd_collapses} cwnd collapses")
    if facts.loss_fraction is not None:
        evidence.append(f"independent loss {facts.loss_fraction:.3%} ({facts.loss_source})")

    def result(label: Diagnosis, *why: str) -> RunDiagnosis:
        return RunDiagnosis(
            label, rate, ceiling, at_min.limit, fraction, (*why, *evidence), not_converged=stats.not_converged
        )

    # A term reached: the textbook cases. Two terms can be close (an observed send fraction
    # is only a lower bound); the receiver's window shrinking below cwnd then decides.
    reached = [
        limit
        for limit in sorted(
            (limit for limit, term in terms.items() if term.known), key=lambda limit: terms[limit].rate_bps or 0.0
        )
        if not (limit is Limit.LOSS and not stats.retransmits) and _near(rate, terms[limit].rate_bps)
    ]
    if reached:
        window_evidence = (stats.window_limited_share or 0.0) >= 0.5
        limit = Limit.RECEIVE_WINDOW if window_evidence and Limit.RECEIVE_WINDOW in reached else reached[0]
        share = rate / (terms[limit].rate_bps or rate)
        return result(LIMIT_LABELS[limit], f"{_mbit(rate)} is {share:.0%} of the {limit.value} ceiling")
    # A window larger than the path's BDP at the bottleneck rate only fills a queue: the rate
    # then equals window / loaded RTT while the RTT under load far exceeds the unloaded one.
    load_rtt, base_rtt = (ceilings.under_load.rtt_ms if ceilings.under_load else None), at_min.rtt_ms
    window_under_load = load_terms[Limit.RECEIVE_WINDOW].rate_bps if Limit.RECEIVE_WINDOW in load_terms else None
    if (
        load_rtt is not None
        and base_rtt is not None
        and load_rtt > QUEUE_RTT_FACTOR * base_rtt
        and (_near(rate, window_under_load) or (stats.retransmits == 0 and (fraction or 1.0) < 1 - NEAR_FRACTION))
    ):
        return result(
            Diagnosis.CAPACITY,
            f"a bottleneck at about {_mbit(rate)}: RTT {load_rtt:.1f} ms under load against {base_rtt:.1f} ms "
            "unloaded, so the window's excess over the path's BDP waits in a queue",
        )
    retransmit_rate = stats.retransmit_rate
    self_inflicted = retransmit_rate is not None and (
        (facts.loss_fraction and retransmit_rate >= SELF_INFLICTED_LOSS_FACTOR * facts.loss_fraction)
        or (not facts.loss_fraction and retransmit_rate >= HEAVY_RETRANSMIT_RATE)
    )
    if self_inflicted and (fraction is None or fraction < POLICER_MAX_FRACTION):
        assert retransmit_rate is not None
        return result(
            Diagnosis.POLICER,
            f"TCP lost {retransmit_rate:.2%} of its segments while the path's own loss is "
            f"{(facts.loss_fraction or 0):.3%}: the flow causes its loss (a policer or a shallow queue)",
        )
    if stats.window_limited_share is not None and stats.window_limited_share >= 0.5:
        return result(
            Diagnosis.RECEIVE_WINDOW,
            f"the receiver's window was smaller than the congestion window in {stats.window_limited_share:.0%} "
            "of intervals",
        )
    if at_min.limit is Limit.UNKNOWN:
        reasons = sorted({term.reason for term in terms.values() if term.reason})
        return result(Diagnosis.UNKNOWN, f"no ceiling could be computed: {'; '.join(reasons)}")
    loss_term = terms[Limit.LOSS]
    if loss_term.known and stats.retransmits and loss_term.rate_bps and rate <= 1.5 * loss_term.rate_bps:
        return result(Diagnosis.LOSS, f"{_mbit(rate)} is near the loss ceiling {_mbit(loss_term.rate_bps)}")
    if stats.rate_cv is not None and stats.rate_cv < FLAT_RATE_CV and (fraction is None or fraction < 0.9):
        return result(
            Diagnosis.CAPACITY,
            f"flat at {_mbit(rate)} (per-second variation {stats.rate_cv:.1%}) below the hosts' ceilings: "
            "a bottleneck on the path",
        )
    return result(
        Diagnosis.BELOW_CEILINGS,
        "below every ceiling: suspect a middlebox, a policer, CPU or NUMA, or the other direction; "
        "compare TCP with paced UDP, 1 with N streams, forward with reverse",
    )


@dataclass(frozen=True)
class Advice:
    kind: str  # "sysctl", "iperf3", "streams", "pacing", "test"
    where: str  # which host, or "path"
    setting: str
    value: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _round_up_mib(value: float) -> int:
    return math.ceil(value / MIB) * MIB


def advise(
    diagnosis: RunDiagnosis,
    ceilings: RunCeilings,
    facts: RunFacts,
    *,
    sender_name: str,
    receiver_name: str,
    goal_bps: float,
    rtt_ms: float | None,
) -> list[Advice]:
    """Concrete changes for the diagnosis, sized for goal_bps over rtt_ms (the slowest RTT mode).

    Buffers are sized to 2 x BDP (tcp-ceilings.md): with half of a buffer becoming window, a
    window of one BDP needs a buffer of two.
    """
    advice: list[Advice] = []
    rtt_s = rtt_ms / 1000 if rtt_ms and rtt_ms > 0 else None
    fraction = ceilings.buffers.receive_fraction or 0.5
    bdp_text = f"2 x BDP for {_mbit(goal_bps)} at {rtt_ms} ms" if rtt_s else ""
    label = diagnosis.label
    if label in (Diagnosis.RECEIVE_WINDOW, Diagnosis.SEND_BUFFER) and rtt_s:
        bdp_bytes = goal_bps * rtt_s / 8
        buffer_bytes = _round_up_mib(max(2 * bdp_bytes, buffer_for_rate_bytes(goal_bps, rtt_s, fraction)))
        if label is Diagnosis.RECEIVE_WINDOW:
            advice.append(Advice("sysctl", receiver_name, "net.ipv4.tcp_rmem", f"4096 131072 {buffer_bytes}", bdp_text))
            advice.append(Advice("sysctl", receiver_name, "net.core.rmem_max", str(buffer_bytes), bdp_text))
        send_bytes = _round_up_mib(
            max(2 * bdp_bytes, buffer_for_rate_bytes(goal_bps, rtt_s, ceilings.buffers.send_fraction))
        )
        advice.append(
            Advice(
                "sysctl",
                sender_name,
                "net.ipv4.tcp_wmem",
                f"4096 16384 {send_bytes}",
                f"{bdp_text}: keep the send buffer at least as large, or the sender throttles (seed 000)",
            )
        )
        advice.append(Advice("sysctl", sender_name, "net.core.wmem_max", str(send_bytes), bdp_text))
        if facts.window_request_bytes:
            advice.append(
                Advice(
                    "iperf3",
                    "path",
                    "-w",
                    "drop it",
                    f"-w {facts.window_request_bytes} disables autotuning and is capped by [rw]mem_max",
                )
            )
    if label in (Diagnosis.RECEIVE_WINDOW, Diagnosis.SEND_BUFFER, Diagnosis.LOSS) and diagnosis.rate_bps:
        per_stream = diagnosis.rate_bps / max(facts.streams, 1)
        streams = math.ceil(goal_bps / per_stream)
        advice.append(
            Advice(
                "streams",
                "path",
                "parallel streams",
                str(streams),
                f"{streams} streams of {_mbit(per_stream)} reach {_mbit(goal_bps)} without retuning hosts",
            )
        )
    if label in (Diagnosis.POLICER, Diagnosis.LOSS):
        pace_bps = 0.9 * (diagnosis.rate_bps or 0) if label is Diagnosis.LOSS else None
        advice.append(
            Advice(
                "pacing",
                sender_name,
                "fq maxrate / SO_MAX_PACING_RATE (iperf3 --fq-rate)",
                _mbit(pace_bps) if pace_bps else "just below the suspected limit",
                "a paced sender avoids the bursts a policer or shallow queue drops (seeds 002, 003)",
            )
        )
        advice.append(
            Advice(
                "test",
                "path",
                "compare",
                "UDP at the expected rate vs TCP; forward vs reverse",
                "UDP passing where TCP stalls points at a policer or stateful middlebox (seed 002)",
            )
        )
    if label is Diagnosis.BELOW_CEILINGS:
        advice.append(
            Advice(
                "test",
                "path",
                "compare",
                "1 vs N streams, forward vs reverse, TCP vs paced UDP",
                "below every ceiling without loss: a middlebox, CPU/NUMA or the other direction (seeds 002, 003)",
            )
        )
    return advice


@dataclass(frozen=True)
class CapacityPlan:
    daily_volume_bytes: int
    required_bps: float
    rate_bps: float | None
    streams: int
    per_stream_bps: float | None
    hours_per_day: float | None
    streams_needed: int | None
    backlog_grows: bool | None
    reason: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def capacity_plan(daily_volume_bytes: int, rate_bps: float | None, streams: int) -> CapacityPlan:
    """Hours a day the volume takes at the current rate, and streams needed to keep up."""
    required = daily_volume_bytes * 8 / 86400
    if rate_bps is None or rate_bps <= 0 or streams < 1:
        return CapacityPlan(
            daily_volume_bytes, required, rate_bps, streams, None, None, None, None, "no throughput measured yet"
        )
    per_stream = rate_bps / streams
    hours = daily_volume_bytes * 8 / rate_bps / 3600
    needed = math.ceil(required / per_stream)
    grows = hours > 24
    verdict = "the backlog grows" if grows else "the volume fits"
    reason = (
        f"{daily_volume_bytes / 2**40:.1f} TiB/day needs {_mbit(required)}; at {_mbit(rate_bps)} "
        f"({streams} x {_mbit(per_stream)}) it takes {hours:.1f} h a day: {verdict}; "
        f"{needed} streams at today's per-stream rate keep up"
    )
    return CapacityPlan(daily_volume_bytes, required, rate_bps, streams, per_stream, hours, needed, grows, reason)
