"""What limited a throughput run, what to change, and whether a daily volume fits the path.

Pure. `diagnose` picks one label from tcp-ceilings.md section 4 and keeps the numbers it
rests on; `path_label` is the consensus of a path's recent runs; `advise` names every
ceiling term below a goal in the order they bind, each with what lifts it (2 x BDP buffers on
the side that needs them, pacing, a policer's estimated rate, streams); `capacity_plan`
answers seed 000's question: does the backlog grow, and do more streams help or only share
a bottleneck or policer?
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from analysis.ceilings import Limit, buffer_for_rate_bytes
from analysis.choices import Diagnosis
from analysis.intervals import IntervalStats
from analysis.policer import EstimateBasis, PolicerEstimate
from analysis.runs import CeilingSet, RunCeilings, RunFacts

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
# Flat-topped: per-second rates varying less than this (coefficient of variation with the
# outlying seconds trimmed, analysis.intervals.trimmed_cv).
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


def _hours_a_day(hours: float) -> str:
    """How long a day's volume takes, "10.2 h a day"; past two days' worth, in days too, which
    a starved path reaches ("127,055 h (5,294 days) a day", not "127055.0 h a day")."""
    if hours <= 48:
        return f"{hours:.1f} h a day"
    return f"{hours:,.0f} h ({hours / 24:,.0f} days) a day"


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
    # The path's own loss as the pings bound it from below: one ping lost of a hundred (a
    # 0.05% head-end in a CI run) does not show the path losing 1%, and it made seed 002's
    # policed run read as "loss".
    path_loss = facts.loss_floor if facts.loss_floor is not None else facts.loss_fraction
    self_inflicted = retransmit_rate is not None and (
        (path_loss and retransmit_rate >= SELF_INFLICTED_LOSS_FACTOR * path_loss)
        or (not path_loss and retransmit_rate >= HEAVY_RETRANSMIT_RATE)
    )
    if self_inflicted and (fraction is None or fraction < POLICER_MAX_FRACTION):
        assert retransmit_rate is not None
        own = f"{(facts.loss_fraction or 0):.3%}"
        if facts.loss_floor is not None and facts.loss_fraction and facts.loss_floor < facts.loss_fraction:
            own += f" (at least {facts.loss_floor:.3%} at 95%)"
        return result(
            Diagnosis.POLICER,
            f"TCP lost {retransmit_rate:.2%} of its segments while the path's own loss is "
            f"{own}: the flow causes its loss (a policer or a shallow queue)",
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
            f"flat at {_mbit(rate)} (per-second variation {stats.rate_cv:.1%}, outlying seconds left out) below "
            "the hosts' ceilings: a bottleneck on the path",
        )
    return result(
        Diagnosis.BELOW_CEILINGS,
        "below every ceiling: suspect a middlebox, a policer, CPU or NUMA, or the other direction; "
        "compare TCP with paced UDP, 1 with N streams, forward with reverse",
    )


@dataclass(frozen=True)
class PathLabel:
    """The path's label: the most common diagnosis of its recent runs, with its share."""

    diagnosis: Diagnosis
    agreeing_runs: int
    runs: int

    @property
    def share(self) -> float:
        return self.agreeing_runs / self.runs

    @property
    def summary(self) -> str:
        return f"{self.diagnosis.value.replace('_', ' ')} ({self.agreeing_runs} of {self.runs} runs)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "diagnosis": self.diagnosis.value,
            "agreeing_runs": self.agreeing_runs,
            "runs": self.runs,
            "share": self.share,
            "summary": self.summary,
        }


def path_label(labels: Sequence[Diagnosis]) -> PathLabel | None:
    """The consensus of a path's recent runs (newest first): the most common label, a tie
    going to the label of the newest run among the tied. "Unknown" (missing inputs, not a
    finding about the path) wins only when no run has another label."""
    if not labels:
        return None
    counts: Counter[Diagnosis] = Counter(label for label in labels if label is not Diagnosis.UNKNOWN)
    if not counts:
        return PathLabel(Diagnosis.UNKNOWN, len(labels), len(labels))
    most = max(counts.values())
    winner = next(label for label in labels if counts[label] == most)
    return PathLabel(winner, most, len(labels))


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
LABEL_TERMS = {
    Diagnosis.RECEIVE_WINDOW: Limit.RECEIVE_WINDOW,
    Diagnosis.SEND_BUFFER: Limit.SEND_BUFFER,
    Diagnosis.LOSS: Limit.LOSS,
}
TERM_WORDS = {
    Limit.LINK: "link",
    Limit.RECEIVE_WINDOW: "receive window",
    Limit.SEND_BUFFER: "send buffer",
    Limit.LOSS: "loss",
}


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
    return f"{'at least ' if policer.lower_bound else 'about '}{_mbit(policer.rate_bps)}, an estimate"


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
                _mbit(rate_bps),
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
            _mbit(rate_bps),
            f"{binds}: the slower NIC carries at most this goodput; a goal of {_mbit(sizing.goal_bps)} needs a "
            "faster interface (no host setting lifts it)",
        )
    ]


def _binds(order: int, what: str, rate_bps: float) -> str:
    when = "binds now" if order == 0 else ("would bind next" if order == 1 else "would bind after that")
    return f"{what} {when} at {_mbit(rate_bps)}"


def current_term(diagnosis: RunDiagnosis, at: CeilingSet) -> Limit | None:
    """The ceiling term the label says binds now; for a bottleneck, the link when the run
    reached it (a bottleneck elsewhere on the path is no term)."""
    term = LABEL_TERMS.get(diagnosis.label)
    link = at.ceilings.link.rate_bps
    if diagnosis.label is Diagnosis.CAPACITY and diagnosis.rate_bps and _near(diagnosis.rate_bps, link):
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
                _mbit(rate),
                f"{_binds(0, 'a bottleneck on the path', rate)}: flat below the hosts' ceilings; a goal of "
                f"{_mbit(goal)} needs a faster path (no host setting lifts it), and more streams only share it",
            )
        ]
    if label is Diagnosis.POLICER:
        estimate = [] if policer is None else [_policer_item(policer, goal)]
        pace = (
            f"{_mbit(0.9 * policer.rate_bps)} (90% of the estimate)"
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
                _mbit(0.9 * rate),
                "a paced sender avoids the bursts a policer or shallow queue drops (seeds 002, 003)",
            )
        )
    return advice


def _policer_item(policer: PolicerEstimate, goal_bps: float) -> Advice:
    below = (
        f"; below the goal of {_mbit(goal_bps)}: only the policer's operator can lift it, and more streams "
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
    reason = f"{streams} streams of {_mbit(per_stream)} reach {_mbit(target)} without retuning hosts"
    if shared is not None and shared.rate_bps < goal_bps:
        reason += (
            f"; {shared.what} carries at most {_mbit(shared.rate_bps)}, below the goal: more streams only share it"
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
        f"2 x BDP for {_mbit(goal_bps)} at {rtt_ms} ms" if rtt_s else "",
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


# Behind a policer, streams that together get less than this share of what they need (or of
# what it passes) are starved by its drops: the plan paces them rather than multiplying them.
PACE_BELOW_SHARE = 0.5


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
    shared_ceiling_bps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def capacity_plan(
    daily_volume_bytes: int, rate_bps: float | None, streams: int, shared: SharedCeiling | None = None
) -> CapacityPlan:
    """Hours a day the volume takes at the current rate, and the streams worth running.

    Parallel streams add up only while each has its own limit (a window, its share of random
    loss): they stop adding up at what all of them share, a full bottleneck or a policer, or
    the link. The stream count is capped there, and the plan says when no count keeps up.
    Behind a policer the remedy is pacing: when today's streams get less than half of what it
    passes (or of what the volume needs), the plan keeps their count and says to pace them,
    with the unpaced count as a note.
    """
    required = daily_volume_bytes * 8 / 86400
    if rate_bps is None or rate_bps <= 0 or streams < 1:
        return CapacityPlan(daily_volume_bytes, required, rate_bps, streams, None, None, None, None,
                            "no throughput measured yet")  # fmt: skip
    per_stream = rate_bps / streams
    hours = daily_volume_bytes * 8 / rate_bps / 3600
    grows = hours > 24
    verdict = "the backlog grows" if grows else "the volume fits"
    volume = f"{daily_volume_bytes / 2**40:.1f} TiB/day needs {_mbit(required)}"
    now = f"at {_mbit(rate_bps)} ({streams} x {_mbit(per_stream)}) it takes {_hours_a_day(hours)}: {verdict}"
    notes: list[str] = []
    if shared is not None and shared.pacing_reaches_it and rate_bps < PACE_BELOW_SHARE * min(required, shared.rate_bps):
        needed = streams
        verdict, notes = _paced_verdict(daily_volume_bytes, required, per_stream, streams, shared)
        reason = f"{volume}; {now}; {verdict}"
    elif shared is None or required <= shared.rate_bps:
        needed = math.ceil(required / per_stream)
        reason = f"{volume}; {now}; {needed} streams at today's per-stream rate keep up"
        if shared is not None and needed > streams:
            notes.append(f"{shared.what} carries up to {_mbit(shared.rate_bps)}: the streams add up below it")
        elif needed > streams:
            notes.append(
                "what all streams share is unknown (no link speed, no full bottleneck seen): they stop adding up "
                "there, perhaps before this count"
            )
    else:
        needed = max(1, math.ceil(shared.rate_bps / per_stream))
        best_hours = daily_volume_bytes * 8 / shared.rate_bps / 3600
        reason = (
            f"{volume}; {now}; no number of streams keeps up: {shared.what} carries at most "
            f"{_mbit(shared.rate_bps)} for all streams together ({_hours_a_day(best_hours)}); "
            + (
                f"{needed} streams reach it, more only share it"
                if needed > streams
                else "more streams only share it rather than add up"
            )
        )
        notes.append(
            "streams add up only while each has its own limit (a window, its share of random loss), never past "
            "what they share (a full bottleneck, a policer, the link)"
        )
    return CapacityPlan(
        daily_volume_bytes=daily_volume_bytes,
        required_bps=required,
        rate_bps=rate_bps,
        streams=streams,
        per_stream_bps=per_stream,
        hours_per_day=hours,
        streams_needed=needed,
        backlog_grows=grows,
        reason=reason,
        notes=notes,
        shared_ceiling_bps=shared.rate_bps if shared is not None else None,
    )


def _paced_verdict(
    daily_volume_bytes: int, required: float, per_stream: float, streams: int, shared: SharedCeiling
) -> tuple[str, list[str]]:
    """Behind a policer: today's streams, paced, rather than the hundreds of unpaced ones that
    per-stream arithmetic asks for (each keeps only what the policer's drops leave it)."""
    reachable = min(required, shared.rate_bps)
    todays = f"today's {streams} {'stream' if streams == 1 else 'streams'}"
    carry, reach = ("carries", "reaches") if streams == 1 else ("carry", "reach")
    if required <= shared.rate_bps:
        verdict = (
            f"pacing keeps up, not more streams: paced to between {_mbit(required)} in all and just below "
            f"{shared.what}, {todays} {carry} the volume"
        )
    else:
        best_hours = daily_volume_bytes * 8 / shared.rate_bps / 3600
        verdict = (
            f"no number of streams keeps up: {shared.what} carries at most {_mbit(shared.rate_bps)} for all "
            f"streams together ({_hours_a_day(best_hours)}), and {todays}, paced just below it, {reach} that"
        )
    notes = [
        f"unpaced, each stream keeps about {_mbit(per_stream)} through the policer's drops: it would take "
        f"{math.ceil(reachable / per_stream)} of them to reach {_mbit(reachable)}, and that many flows burst "
        "into the policer together",
        "a paced stream's own ceilings (its window, the send buffer) still apply: the advice sizes them",
    ]
    return verdict, notes
