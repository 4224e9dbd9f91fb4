"""What to change toward a goal rate, in the order the limits bind.

Pure. `advise` names every ceiling term below a goal in the order they bind, each with what
lifts it (2 x BDP buffers on the side that needs them, pacing, a policer's estimated rate,
streams); `shared_ceiling` is what all of a path's streams share.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from analysis.ceilings import Limit, buffer_for_rate_bytes
from analysis.choices import Diagnosis
from analysis.diagnosis import LABEL_TERMS, TERM_WORDS, RunDiagnosis, near
from analysis.policer import EstimateBasis, PolicerEstimate
from analysis.runs import CeilingSet, RunCeilings, RunFacts
from core.units import rate_text

MIB = 2**20


@dataclass(frozen=True)
class Advice:
    kind: str  # "limit", "estimate", "sysctl", "iperf3", "streams", "pacing", "test"
    where: str  # which host, or "path"
    setting: str
    value: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SharedCeiling:
    """What all of a path's streams share: parallel streams add up only below it."""

    rate_bps: float
    what: str  # "the path's full bottleneck", "the policer (about 90.0 Mbit/s, an estimate)", ...
    # A policer drops the bursts of unpaced TCP, so each stream keeps a sliver of its rate; a
    # paced sender, not more streams, is how to reach it.
    pacing_reaches_it: bool = False


# Per-flow limits: each stream has its own window, its own share of random loss.
PER_FLOW_LABELS = (Diagnosis.RECEIVE_WINDOW, Diagnosis.SEND_BUFFER, Diagnosis.LOSS)


def shared_ceiling(
    label: Diagnosis, rate_bps: float | None, link_bps: float | None, policer: PolicerEstimate | None
) -> SharedCeiling | None:
    """The ceiling all streams share: a full bottleneck's rate, a policer's, else the link's."""
    if label is Diagnosis.CAPACITY and rate_bps:
        return SharedCeiling(rate_bps, "the path's full bottleneck")
    if label is Diagnosis.POLICER and policer is not None:
        return SharedCeiling(policer.rate_bps, f"the policer ({_policer_value(policer)})", pacing_reaches_it=True)
    return SharedCeiling(link_bps, "the link (the slower NIC)") if link_bps else None


def _policer_value(policer: PolicerEstimate) -> str:
    return f"{'at least ' if policer.lower_bound else 'about '}{rate_text(policer.rate_bps)}, an estimate"


def _round_up_mib(value: float) -> int:
    return math.ceil(value / MIB) * MIB


def _sizing_set(ceilings: RunCeilings, rtt_ms: float | None) -> CeilingSet:
    """The terms at the RTT the advice is sized for (the slowest mode), the nearest known."""
    sets = [ceilings.at_min_rtt, *ceilings.per_mode]
    if rtt_ms is None:
        return ceilings.at_min_rtt
    return min(sets, key=lambda at: abs((at.rtt_ms if at.rtt_ms is not None else math.inf) - rtt_ms))


@dataclass(frozen=True)
class _Sizing:
    """What every setting of one piece of advice is sized from."""

    facts: RunFacts
    ceilings: RunCeilings
    sender: str
    receiver: str
    goal_bps: float
    rtt_s: float | None
    bdp_text: str
    at: CeilingSet  # the terms at the RTT the advice is sized for


def _window_advice(limit: Limit, sizing: _Sizing, binds: str) -> list[Advice]:
    """The sysctls that lift a window term to the goal: 2 x BDP buffers (tcp-ceilings.md:
    with half of a buffer becoming window, a window of one BDP needs a buffer of two)."""
    if sizing.rtt_s is None:
        return []
    buffers = sizing.ceilings.buffers
    bdp_bytes = sizing.goal_bps * sizing.rtt_s / 8
    text = f"{binds}; {sizing.bdp_text}" if sizing.bdp_text else binds
    if limit is Limit.RECEIVE_WINDOW:
        fraction = buffers.receive_fraction or 0.5
        size = _round_up_mib(max(2 * bdp_bytes, buffer_for_rate_bytes(sizing.goal_bps, sizing.rtt_s, fraction)))
        return [
            Advice("sysctl", sizing.receiver, "net.ipv4.tcp_rmem", f"4096 131072 {size}", text),
            Advice("sysctl", sizing.receiver, "net.core.rmem_max", str(size), text),
        ]
    fraction = buffers.send_fraction
    size = _round_up_mib(max(2 * bdp_bytes, buffer_for_rate_bytes(sizing.goal_bps, sizing.rtt_s, fraction)))
    return [
        Advice(
            "sysctl",
            sizing.sender,
            "net.ipv4.tcp_wmem",
            f"4096 16384 {size}",
            f"{text}: keep the send buffer at least as large as the window, or the sender throttles (seed 000)",
        ),
        Advice("sysctl", sizing.sender, "net.core.wmem_max", str(size), text),
    ]


def _term_advice(limit: Limit, rate_bps: float, sizing: _Sizing, binds: str) -> list[Advice]:
    """What lifts one ceiling term above the goal."""
    if limit in (Limit.RECEIVE_WINDOW, Limit.SEND_BUFFER):
        return _window_advice(limit, sizing, binds)
    if limit is Limit.LOSS:
        loss = sizing.facts.loss_fraction
        shown = f"{loss:.3%} loss" if loss is not None else "the path's loss"
        return [
            Advice(
                "limit",
                "path",
                "loss ceiling",
                rate_text(rate_bps),
                f"{binds}: {shown} caps each flow (Mathis/CUBIC); find where packets are lost, or pace, "
                "use BBR or parallel streams",
            )
        ]
    slower = (
        sizing.sender
        if (sizing.facts.sender.link_rate_bps or math.inf) <= (sizing.facts.receiver.link_rate_bps or math.inf)
        else sizing.receiver
    )
    return [
        Advice(
            "limit",
            slower,
            "link speed",
            rate_text(rate_bps),
            f"{binds}: the slower NIC carries at most this goodput; a goal of {rate_text(sizing.goal_bps)} needs a "
            "faster interface (no host setting lifts it)",
        )
    ]


def _binds(order: int, what: str, rate_bps: float) -> str:
    when = "binds now" if order == 0 else ("would bind next" if order == 1 else "would bind after that")
    return f"{what} {when} at {rate_text(rate_bps)}"


def current_term(diagnosis: RunDiagnosis, at: CeilingSet) -> Limit | None:
    """The ceiling term the label says binds now; for a bottleneck, the link when the run
    reached it (a bottleneck elsewhere on the path is no term)."""
    term = LABEL_TERMS.get(diagnosis.label)
    link = at.ceilings.link.rate_bps
    if diagnosis.label is Diagnosis.CAPACITY and diagnosis.rate_bps and near(diagnosis.rate_bps, link):
        return Limit.LINK
    return term


def _current_limit(diagnosis: RunDiagnosis, sizing: _Sizing, policer: PolicerEstimate | None) -> list[Advice]:
    """What binds the run now, named first (only when it is below the goal)."""
    label, rate = diagnosis.label, diagnosis.rate_bps or 0.0
    goal = sizing.goal_bps
    if label is Diagnosis.CAPACITY and rate < goal and current_term(diagnosis, sizing.at) is Limit.LINK:
        return _term_advice(Limit.LINK, rate, sizing, _binds(0, "the link", rate))
    if label is Diagnosis.CAPACITY and rate < goal:
        return [
            Advice(
                "limit",
                "path",
                "bottleneck",
                rate_text(rate),
                f"{_binds(0, 'a bottleneck on the path', rate)}: flat below the hosts' ceilings; a goal of "
                f"{rate_text(goal)} needs a faster path (no host setting lifts it), and more streams only share it",
            )
        ]
    if label is Diagnosis.POLICER:
        estimate = [] if policer is None else [_policer_item(policer, goal)]
        pace = (
            f"{rate_text(0.9 * policer.rate_bps)} (90% of the estimate)"
            if policer is not None and not policer.lower_bound
            else "just below the policer's rate"
        )
        return [
            *estimate,
            Advice(
                "pacing",
                sizing.sender,
                "fq maxrate / SO_MAX_PACING_RATE (iperf3 --fq-rate)",
                pace,
                "a paced sender avoids the bursts a policer or shallow queue drops (seeds 002, 003)",
            ),
        ]
    term = LABEL_TERMS.get(label)
    if term is None or term is Limit.LINK or rate >= goal:
        return []
    advice = _term_advice(term, rate, sizing, _binds(0, f"the {TERM_WORDS[term]}", rate))
    if label is Diagnosis.LOSS:
        advice.append(
            Advice(
                "pacing",
                sizing.sender,
                "fq maxrate / SO_MAX_PACING_RATE (iperf3 --fq-rate)",
                rate_text(0.9 * rate),
                "a paced sender avoids the bursts a policer or shallow queue drops (seeds 002, 003)",
            )
        )
    return advice


def _policer_item(policer: PolicerEstimate, goal_bps: float) -> Advice:
    below = (
        f"; below the goal of {rate_text(goal_bps)}: only the policer's operator can lift it, and more streams "
        "share it rather than add up"
        if policer.rate_bps < goal_bps
        else ""
    )
    return Advice(
        "estimate",
        "path",
        "policer rate",
        _policer_value(policer),
        f"binds now; basis: {policer.detail}{below}{_ramp_note(policer)}",
    )


def _ramp_note(policer: PolicerEstimate) -> str:
    if policer.basis is EstimateBasis.UDP_RAMP and not policer.at_least:
        return ""  # measured: the basis says how
    if policer.basis is EstimateBasis.UDP_RAMP and policer.disturbed:
        return ". The next ramp (one every FATHOM_POLICER_RAMP_EVERY_H hours) measures it again"
    if policer.basis is EstimateBasis.UDP_RAMP:
        return ". The next ramp starts from there and climbs higher"
    return (
        ". Between Fathom agents, a short paced UDP ramp in the path's next exclusive slot measures it"
        " (at most every FATHOM_POLICER_RAMP_EVERY_H)"
    )


def _streams_advice(
    diagnosis: RunDiagnosis, facts: RunFacts, goal_bps: float, shared: SharedCeiling | None
) -> list[Advice]:
    """Parallel streams for a per-flow limit, no more than the shared ceiling allows."""
    if diagnosis.label not in PER_FLOW_LABELS or not diagnosis.rate_bps:
        return []
    per_stream = diagnosis.rate_bps / max(facts.streams, 1)
    target = min(goal_bps, shared.rate_bps) if shared is not None else goal_bps
    streams = max(1, math.ceil(target / per_stream))
    reason = f"{streams} streams of {rate_text(per_stream)} reach {rate_text(target)} without retuning hosts"
    if shared is not None and shared.rate_bps < goal_bps:
        reason += (
            f"; {shared.what} carries at most {rate_text(shared.rate_bps)}, below the goal: more streams only share it"
        )
    return [Advice("streams", "path", "parallel streams", str(streams), reason)]


def _tests(label: Diagnosis) -> list[Advice]:
    if label in (Diagnosis.POLICER, Diagnosis.LOSS):
        return [
            Advice(
                "test",
                "path",
                "compare",
                "UDP at the expected rate vs TCP; forward vs reverse",
                "UDP passing where TCP stalls points at a policer or stateful middlebox (seed 002)",
            )
        ]
    if label is Diagnosis.BELOW_CEILINGS:
        return [
            Advice(
                "test",
                "path",
                "compare",
                "1 vs N streams, forward vs reverse, TCP vs paced UDP",
                "below every ceiling without loss: a middlebox, CPU/NUMA or the other direction (seeds 002, 003)",
            )
        ]
    return []


def advise(
    diagnosis: RunDiagnosis,
    ceilings: RunCeilings,
    facts: RunFacts,
    *,
    sender_name: str,
    receiver_name: str,
    goal_bps: float,
    rtt_ms: float | None,
    policer: PolicerEstimate | None = None,
) -> list[Advice]:
    """Concrete changes toward goal_bps over rtt_ms (the slowest RTT mode), in the order the
    limits bind: what binds the run now first, then every other ceiling term below the goal,
    lowest first, each with what lifts it; then streams (capped at the shared ceiling) and
    tests. Lifting only the current limit would leave the next one to discover run by run.
    """
    rtt_s = rtt_ms / 1000 if rtt_ms and rtt_ms > 0 else None
    at = _sizing_set(ceilings, rtt_ms)
    sizing = _Sizing(
        facts,
        ceilings,
        sender_name,
        receiver_name,
        goal_bps,
        rtt_s,
        f"2 x BDP for {rate_text(goal_bps)} at {rtt_ms} ms" if rtt_s else "",
        at,
    )
    shared = shared_ceiling(diagnosis.label, diagnosis.rate_bps, at.ceilings.link.rate_bps, policer)
    advice = _current_limit(diagnosis, sizing, policer)
    current = current_term(diagnosis, at)
    terms = at.ceilings.terms()
    below = sorted(
        (
            (term.rate_bps, limit)
            for limit, term in terms.items()
            if term.rate_bps is not None and term.rate_bps < goal_bps and limit is not current
        ),
        key=lambda pair: pair[0],
    )
    # Numbered from 1: whatever holds the run now (named above, or unknown) binds first.
    for order, (rate, limit) in enumerate(below, start=1):
        at_rtt = f" at {at.rtt_ms} ms" if at.rtt_ms is not None and limit is not Limit.LINK else ""
        advice += _term_advice(limit, rate, sizing, _binds(order, f"the {TERM_WORDS[limit]} ceiling{at_rtt}", rate))
    if facts.window_request_bytes and any(
        item.setting in ("net.core.rmem_max", "net.core.wmem_max") for item in advice
    ):
        advice.append(
            Advice(
                "iperf3",
                "path",
                "-w",
                "drop it",
                f"-w {facts.window_request_bytes} disables autotuning and is capped by [rw]mem_max",
            )
        )
    return _deduplicated([*advice, *_streams_advice(diagnosis, facts, goal_bps, shared), *_tests(diagnosis.label)])


def _deduplicated(advice: list[Advice]) -> list[Advice]:
    """One item per (where, setting): the first, which names the limit binding soonest."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for item in advice:
        if (item.where, item.setting) not in seen:
            seen.add((item.where, item.setting))
            kept.append(item)
    return kept
