"""What limited a throughput run, and what a path's recent runs say together.

Pure. `diagnose` picks one label from tcp-ceilings.md section 4 and keeps the numbers it
rests on; `path_label` is the consensus of a path's recent runs. What to change is
analysis/advice.py, and whether a daily volume fits is analysis/capacity.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.ceilings import Limit, Term, is_bbr, loss_ceiling
from analysis.choices import Diagnosis
from analysis.intervals import IntervalStats
from analysis.runs import RunCeilings, RunFacts
from core.units import rate_text

# "Within about 10%" of a ceiling term counts as reaching it.
NEAR_FRACTION = 0.10
# TCP losing this many times more than an independent probe sees: the flow causes its own
# loss (a policer or a shallow queue), seed 002.
SELF_INFLICTED_LOSS_FACTOR = 10.0
# Without an independent loss figure, this retransmit rate alone is heavy loss.
HEAVY_RETRANSMIT_RATE = 0.01
# A policer shows as a rate far below every ceiling.
POLICER_MAX_FRACTION = 0.5
# A loss-based flow held under this share of its hosts' ceiling has collapsed: it spends the
# run waiting out retransmission timeouts, so it sends too few segments for its retransmit
# rate to say anything (seed 002's flow: 150 segments, 1 to 7 retransmits, 0.6 % to 4.5 %).
COLLAPSED_FRACTION = 0.05
# A collapsed flow's loss is its own when the path's loss would let it run this many times
# faster (the loss ceiling at the least loss the pings support). Mathis' model holds to about
# a factor of two, so a flow within that of the path's loss ceiling is the path's loss.
COLLAPSE_LOSS_HEADROOM = 3.0
# RTT under load this many times the unloaded RTT: a standing queue at a bottleneck.
QUEUE_RTT_FACTOR = 1.25
# Flat-topped: per-second rates varying less than this (coefficient of variation with the
# outlying seconds trimmed, analysis.intervals.trimmed_cv).
FLAT_RATE_CV = 0.10
# A longer RTT under load is a queue only if it holds this many packets at the run's rate.
QUEUE_MIN_PACKETS = 4
DEFAULT_MSS_BYTES = 1448
# The share of its buffer a window keeps in flight, as multiples of the planned share
# (receive: the planned window fraction) or as shares of sk_sndbuf (send side; tcp-ceilings.md).
RECEIVE_SHARE_RANGE = (0.75, 1.0)
SEND_SHARE_RANGE = (0.5, 0.95)
# In flight at most this share of both the congestion and the receiver's window: neither held it.
SENDER_HELD_SHARE = 0.6
MIB = 2**20
LIMIT_LABELS = {
    Limit.LINK: Diagnosis.CAPACITY,
    Limit.RECEIVE_WINDOW: Diagnosis.RECEIVE_WINDOW,
    Limit.SEND_BUFFER: Diagnosis.SEND_BUFFER,
    Limit.LOSS: Diagnosis.LOSS,
}
# The ceiling term each per-term label names (a bottleneck is no term: the link, when reached).
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


@dataclass(frozen=True)
class RunDiagnosis:
    label: Diagnosis
    rate_bps: float | None
    ceiling_bps: float | None
    winning_term: Limit
    fraction_of_ceiling: float | None
    evidence: tuple[str, ...]
    not_converged: bool = False
    # The rate of what the label says binds: the window's or buffer's term, the loss term, or
    # for a full bottleneck its rate as the run filled it. None where only the hosts' ceiling
    # is known (a policer, below every ceiling): then the hosts' ceiling is what a run is
    # judged against. A full pipe reads as full against it.
    binding_bps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label.value,
            "rate_bps": self.rate_bps,
            "ceiling_bps": self.ceiling_bps,
            "winning_term": self.winning_term.value,
            "fraction_of_ceiling": self.fraction_of_ceiling,
            "evidence": list(self.evidence),
            "not_converged": self.not_converged,
            "binding_bps": self.binding_bps,
        }


def binding_rate(
    label: Diagnosis,
    rate_bps: float,
    terms: dict[Limit, Term],
    load_terms: dict[Limit, Term],
    send_held_bps: float | None = None,
) -> float | None:
    """The rate of what the label says binds (RunDiagnosis.binding_bps).

    The receiver's window holds a flow to itself over the flow's own RTT. Its ACKs can return
    over an ECMP member that pings and sweeps hash past, lengthening that RTT unseen (3.5 ms
    on a 7 ms path held runs at two thirds of the window over the path's minimum), so where
    the run measured its RTT under load, the window at that RTT binds: the label has already
    ruled out a bottleneck's queue as the reason for it. Not so the send buffer, whose bursts
    queue at any slower link (sender_held): its term stays at the unloaded RTT, at the share
    of the buffer the run kept in flight once the label says the buffer held it
    (send_held_rate).
    """
    if label is Diagnosis.CAPACITY:
        link = terms[Limit.LINK].rate_bps
        return link if near(rate_bps, link) else rate_bps
    term = LABEL_TERMS.get(label)
    if term is None:
        return None
    if term is Limit.RECEIVE_WINDOW and term in load_terms and load_terms[term].rate_bps:
        return load_terms[term].rate_bps
    if term is Limit.SEND_BUFFER and send_held_bps:
        return send_held_bps
    return terms[term].rate_bps


def send_held_rate(facts: RunFacts, ceilings: RunCeilings) -> float | None:
    """What the send buffer gives over the unloaded RTT at the share of it the run kept in
    flight (at most all of it).

    How much of its buffer a sender keeps in flight is the host's and the congestion
    control's (0.65 for BBR, whose pacing leaves data unsent, to 1.0 for Reno in the corpus),
    which the planning share (0.5, or 0.9 once a run shows more than half) only brackets:
    the send-buffer term at that share missed the rate by 19 % (median) on the corpus. Used
    only where the label already says the buffer held the flow: as a term beside the others
    it would explain every rate by construction.
    """
    send, rtt_ms = ceilings.buffers.send_bytes, ceilings.at_min_rtt.rtt_ms
    if not facts.inflight_bytes or not send or not rtt_ms or rtt_ms <= 0:
        return None
    return max(facts.streams, 1) * 8 * min(facts.inflight_bytes, send) / (rtt_ms / 1000)


def queue_holds_packets(rate_bps: float, excess_rtt_ms: float, mss_bytes: int | None) -> bool:
    """Whether RTT grown by excess_rtt_ms at rate_bps is a queue: it must hold a few packets.
    A flow collapsed to a trickle (retransmission timeouts behind a policer) or a host whose
    CPU delays packets shows a longer RTT with nothing queued at any bottleneck."""
    return excess_rtt_ms / 1000 * rate_bps / 8 >= QUEUE_MIN_PACKETS * (mss_bytes or DEFAULT_MSS_BYTES)


def sender_held(facts: RunFacts, ceilings: RunCeilings, stats: IntervalStats) -> str | None:
    """Why the sender itself held a loss-based flow, or None.

    TCP_INFO says who held the bytes in flight: congestion control (the congestion window),
    the receiver (its advertised window) or neither, and then the sender, whose send buffer is
    the smallest window. Such a sender writes its buffer in bursts that queue briefly at any
    slower link, so its RTT under load rises as a bottleneck's would (a 700 KB tcp_wmem at 118
    ms read as a bottleneck's queue of 490 KiB). BBR keeps its window at twice the path's BDP
    whatever holds it, so its window says nothing of this.
    """
    inflight, cwnd, peer = facts.inflight_bytes, facts.max_snd_cwnd_bytes, facts.max_snd_wnd_bytes
    if not (inflight and cwnd and peer) or not facts.congestion_control or is_bbr(facts.congestion_control):
        return None
    if stats.retransmits:
        return None
    terms = ceilings.at_min_rtt.ceilings.terms()
    send, receive = terms[Limit.SEND_BUFFER].rate_bps, terms[Limit.RECEIVE_WINDOW].rate_bps
    if send is None or (receive is not None and receive < send):
        return None
    if inflight > SENDER_HELD_SHARE * cwnd or inflight > SENDER_HELD_SHARE * peer:
        return None
    # A sender with far less in flight than its buffer holds was held by something else: its
    # CPU, the application (a 16 MiB buffer with 3.5 MiB in flight behind a busy emulator).
    buffer = ceilings.buffers.send_bytes
    if not buffer or inflight < SEND_SHARE_RANGE[0] * buffer:
        return None
    return (
        f"neither the congestion window (up to {cwnd / MIB:.1f} MiB) nor the receiver's window (up to "
        f"{peer / MIB:.1f} MiB) held the {inflight / MIB:.2f} MiB in flight, without a loss: the sender did, and "
        f"its send buffer is the smallest window ({rate_text(send)})"
    )


def slow_receiver(facts: RunFacts, ceilings: RunCeilings) -> str | None:
    """Why a flow the receiver's window held was held by the receiving host, not its buffer.

    The window a receiver advertises is its free buffer: an application that reads slowly
    (a busy CPU, a slow disk, NUMA) shrinks it below what the buffer allows. A flow with well
    under the planned window in flight was held by that host (seed 003's fast host sending to
    a slow one): a larger buffer would not lift it.
    """
    buffers = ceilings.buffers
    inflight = facts.inflight_bytes
    if not inflight or not buffers.receive_bytes or not buffers.receive_fraction:
        return None
    planned = buffers.receive_bytes * buffers.receive_fraction
    if inflight >= RECEIVE_SHARE_RANGE[0] * planned:
        return None
    return (
        f"the receiver's window held the flow at {inflight / MIB:.2f} MiB in flight, well under the "
        f"{planned / MIB:.1f} MiB its buffer allows: the receiving host read slowly (CPU, NUMA, disk), "
        "a larger buffer would not lift it"
    )


def beyond_every_member(flow_rtt_ms: float, mode_rtts_ms: Sequence[float]) -> bool:
    """Whether a flow's minimum RTT lies farther above the path's largest RTT mode than the
    modes lie apart, and by over a millisecond: no unseen ECMP member explains it then."""
    modes = sorted(mode for mode in mode_rtts_ms if mode > 0)
    if len(modes) < 2:
        return False
    return flow_rtt_ms - modes[-1] > max(modes[-1] - modes[0], 1.0)


def queued_text(rate_bps: float, excess_rtt_ms: float) -> str:
    kib = excess_rtt_ms / 1000 * rate_bps / 8 / 1024
    return f"about {kib:,.0f} KiB" if kib < 10 * 1024 else f"about {kib / 1024:,.1f} MiB"


def window_explains(rate_bps: float, ceilings: RunCeilings) -> tuple[Limit, float, float] | None:
    """The lowest window term, with the range of rates it allows, when the rate lies in it.

    A window term rests on the share of its buffer a flow keeps in flight, which the kernel
    sets and Fathom only plans: the send side keeps 0.5 to about 0.95 of sk_sndbuf in flight,
    the receive side advertises its planned fraction within RECEIVE_SHARE_RANGE. A run
    reaching 75 % of a planned send-buffer ceiling is that buffer, not a bottleneck.
    """
    terms = ceilings.at_min_rtt.ceilings.terms()
    buffers = ceilings.buffers
    candidates: list[tuple[Limit, float, float]] = []
    receive = terms[Limit.RECEIVE_WINDOW].rate_bps
    if receive and buffers.receive_fraction:
        low, high = RECEIVE_SHARE_RANGE
        candidates.append((Limit.RECEIVE_WINDOW, receive * low, receive * high))
    send = terms[Limit.SEND_BUFFER].rate_bps
    if send and buffers.send_fraction:
        low, high = (share / buffers.send_fraction for share in SEND_SHARE_RANGE)
        candidates.append((Limit.SEND_BUFFER, send * low, send * high))
    if not candidates:
        return None
    lowest = min(candidates, key=lambda candidate: candidate[2])
    # Another window's range overlapping the lowest one's: which binds is not clear.
    if any(other is not lowest and other[1] <= lowest[2] for other in candidates):
        return None
    _, low, high = lowest
    return lowest if (1 - NEAR_FRACTION) * low <= rate_bps <= (1 + NEAR_FRACTION) * high else None


def collapsed(rate_bps: float, stats: IntervalStats, facts: RunFacts, ceilings: RunCeilings) -> str | None:
    """Why a loss-based flow that collapsed far below its ceilings caused its own loss, or None.

    Behind a policer with a burst smaller than TCP's initial window, every flight loses its
    tail and the flow waits out timeouts: a few hundred segments a run and a handful of
    retransmits, whose rate (0.6 % to 4.5 % run to run on seed 002) says nothing alone. What
    does is the collapse itself, set against what the path's own loss allows: with no loss
    seen by an independent probe, or far less than the flow's rate needs, the flow's drops are
    its own (a policer or a shallow queue; a paced UDP ramp tells which, and at what rate).
    """
    # Against the hosts' ceilings (the link, the windows): the loss term is what is in question.
    terms = ceilings.at_min_rtt.ceilings.terms()
    hosts = [term.rate_bps for limit, term in terms.items() if limit is not Limit.LOSS and term.rate_bps]
    fraction = rate_bps / min(hosts) if hosts else None
    if fraction is None or fraction >= COLLAPSED_FRACTION or is_bbr(facts.congestion_control):
        return None
    lost = lost_text(stats)
    if lost is None:
        return None
    path_loss = facts.loss_floor if facts.loss_floor is not None else facts.loss_fraction
    allows: float | None = None
    if path_loss:
        allows = loss_ceiling(
            facts.streams, facts.mss_bytes or DEFAULT_MSS_BYTES, (ceilings.at_min_rtt.rtt_ms or 0) / 1000,
            path_loss, facts.congestion_control,
        ).rate_bps  # fmt: skip
        if allows is None or allows < COLLAPSE_LOSS_HEADROOM * rate_bps:
            return None
    measured = (
        f"the least loss the pings support ({path_loss:.3%}) would allow {rate_text(allows)}"
        if allows is not None
        else (
            "no independent probe saw the path lose"
            if facts.loss_fraction is not None
            else "the path's own loss is not measured yet"
        )
    )
    return (
        f"the flow collapsed to {fraction:.1%} of its ceiling {lost}, and {measured}: the flow causes its loss "
        "(a policer or a shallow queue)"
    )


def lost_text(stats: IntervalStats) -> str | None:
    """How a collapsed flow lost, or None if it did not: in the measured seconds, or only in
    the omitted ones (slow start). A loss-based flow that lost there and not after climbs back
    a segment per RTT (at 180 ms, 7 Mbit/s after ten seconds), so its congestion window, not
    the receiver's, holds it for the whole run (a policer with a large burst at 180 ms)."""
    if stats.retransmits:
        return f"with {stats.retransmits} retransmits"
    congestion_held = stats.window_limited_share is not None and stats.window_limited_share < 0.5
    if stats.omitted_retransmits and congestion_held:
        return (
            f"with no retransmit in the measured seconds after {stats.omitted_retransmits} in the omitted ones "
            "(slow start): its congestion window still climbs back a segment per RTT"
        )
    return None


def near(rate_bps: float, term_bps: float | None) -> bool:
    """Within about 10% of a term."""
    return term_bps is not None and (1 - NEAR_FRACTION) * term_bps <= rate_bps <= (1 + NEAR_FRACTION) * term_bps


def diagnose(
    ceilings: RunCeilings, stats: IntervalStats, facts: RunFacts, rate_bps: float | None = None
) -> RunDiagnosis:
    """One label for the run, with the numbers it rests on."""
    rate = rate_bps if rate_bps is not None else stats.steady_rate_bps
    at_min = ceilings.at_min_rtt
    terms = at_min.ceilings.terms()
    evidence: list[str] = []
    if rate is None or rate <= 0:
        return RunDiagnosis(Diagnosis.UNKNOWN, rate, at_min.ceiling_bps, at_min.limit, None, ("no rate measured",))
    ceiling = at_min.ceiling_bps
    fraction = rate / ceiling if ceiling else None
    load_terms = ceilings.under_load.ceilings.terms() if ceilings.under_load else {}
    for limit, term in terms.items():
        shown = rate_text(term.rate_bps) if term.known else f"unknown ({term.reason})"
        evidence.append(f"{limit.value.replace('_', ' ')} ceiling {shown}")
    evidence.append(f"steady rate {rate_text(rate)} at {at_min.rtt_ms} ms ({at_min.rtt_source})")
    if stats.window_limited_share is not None:
        evidence.append(f"snd_wnd < snd_cwnd in {stats.window_limited_share:.0%} of intervals")
    if stats.retransmits is not None:
        share_text = f" ({stats.retransmit_rate:.3%} of segments)" if stats.retransmit_rate is not None else ""
        evidence.append(f"{stats.retransmits} retransmits{share_text}, {stats.cwnd_collapses} cwnd collapses")
    if facts.loss_fraction is not None:
        evidence.append(f"independent loss {facts.loss_fraction:.3%} ({facts.loss_source})")

    def result(label: Diagnosis, *why: str) -> RunDiagnosis:
        return RunDiagnosis(
            label,
            rate,
            ceiling,
            at_min.limit,
            fraction,
            (*why, *evidence),
            not_converged=stats.not_converged,
            binding_bps=binding_rate(label, rate, terms, load_terms, send_held_rate(facts, ceilings)),
        )

    # A term reached: the textbook cases. Two terms can be close (an observed send fraction
    # is only a lower bound); the receiver's window shrinking below cwnd then decides.
    reached = [
        limit
        for limit in sorted(
            (limit for limit, term in terms.items() if term.known), key=lambda limit: terms[limit].rate_bps or 0.0
        )
        if not (limit is Limit.LOSS and not stats.retransmits) and near(rate, terms[limit].rate_bps)
    ]
    if reached:
        window_evidence = (stats.window_limited_share or 0.0) >= 0.5
        limit = Limit.RECEIVE_WINDOW if window_evidence and Limit.RECEIVE_WINDOW in reached else reached[0]
        share = rate / (terms[limit].rate_bps or rate)
        return result(LIMIT_LABELS[limit], f"{rate_text(rate)} is {share:.0%} of the {limit.value} ceiling")
    retransmit_rate = stats.retransmit_rate
    # The path's own loss as the pings bound it from below: one ping lost of a hundred (a
    # 0.05% head-end in a CI run) does not show the path losing 1%, and it made seed 002's
    # policed run read as "loss".
    path_loss = facts.loss_floor if facts.loss_floor is not None else facts.loss_fraction
    self_inflicted = retransmit_rate is not None and (
        (path_loss and retransmit_rate >= SELF_INFLICTED_LOSS_FACTOR * path_loss)
        or (not path_loss and retransmit_rate >= HEAVY_RETRANSMIT_RATE)
    )
    collapse = collapsed(rate, stats, facts, ceilings) if not self_inflicted else None
    policed = collapse is not None or (self_inflicted and (fraction is None or fraction < POLICER_MAX_FRACTION))

    def policer() -> RunDiagnosis:
        if collapse is not None:
            return result(Diagnosis.POLICER, collapse)
        assert retransmit_rate is not None
        own = f"{(facts.loss_fraction or 0):.3%}" if facts.loss_fraction is not None else "not measured"
        if facts.loss_floor is not None and facts.loss_fraction and facts.loss_floor < facts.loss_fraction:
            own += f" (at least {facts.loss_floor:.3%} at 95%)"
        return result(
            Diagnosis.POLICER,
            f"TCP lost {retransmit_rate:.2%} of its segments while the path's own loss is "
            f"{own}: the flow causes its loss (a policer or a shallow queue)",
        )

    # A loss-based sender behind a policer saws far below its rate, losing heavily; an RTT grown
    # beside that came from elsewhere (a loaded host delaying packets: seed 002 on a busy CI
    # machine), so the policer is judged before the queue. A flat run at a queue is the link
    # (Reno fills a 7-packet queue at 2 ms and loses 2 %), and BBR ignores loss, so its loss
    # says nothing of a queue: for those the queue test goes first.
    flat = stats.rate_cv is not None and stats.rate_cv < FLAT_RATE_CV
    if policed and not flat and not is_bbr(facts.congestion_control):
        return policer()
    held = sender_held(facts, ceilings, stats)
    if held:
        return result(Diagnosis.SEND_BUFFER, held)
    # A bottleneck with a buffer queues what exceeds its rate: the RTT under load far above the
    # flow's unloaded RTT, holding packets. A policer or random loss drops without queueing,
    # and a window below the path's BDP never fills one, so a standing queue is the path's
    # capacity whatever the loss beside it (BBR keeps one and loses a little at a shallow
    # buffer). Where the flow sat far above every known RTT mode of an ECMP path, it may be on
    # an unseen member instead, unless it sat farther above the largest mode than the modes lie
    # apart: a queue then needs the window to be what filled it (the rate is the window over
    # the loaded RTT) or a lossless flow well below its ceilings, as before; which member a
    # flow took is for the sweeps to show (their modes decide the base RTT).
    load_rtt, base_rtt = (ceilings.under_load.rtt_ms if ceilings.under_load else None), at_min.rtt_ms
    window_under_load = load_terms[Limit.RECEIVE_WINDOW].rate_bps if Limit.RECEIVE_WINDOW in load_terms else None
    if (
        load_rtt is not None
        and base_rtt is not None
        and load_rtt > QUEUE_RTT_FACTOR * base_rtt
        and queue_holds_packets(rate, load_rtt - base_rtt, facts.mss_bytes)
        and (
            ceilings.flow_above_path is None
            or beyond_every_member(ceilings.flow_above_path.rtt_ms, facts.mode_rtts_ms)
            or near(rate, window_under_load)
            or (stats.retransmits == 0 and (fraction or 1.0) < 1 - NEAR_FRACTION)
        )
    ):
        return result(
            Diagnosis.CAPACITY,
            f"a bottleneck at about {rate_text(rate)}: RTT {load_rtt:.1f} ms under load against {base_rtt:.1f} ms "
            f"unloaded, {queued_text(rate, load_rtt - base_rtt)} waiting in a queue",
        )
    if policed:
        return policer()
    if stats.window_limited_share is not None and stats.window_limited_share >= 0.5:
        slow = slow_receiver(facts, ceilings)
        if slow:
            return result(Diagnosis.BELOW_CEILINGS, slow)
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
        return result(Diagnosis.LOSS, f"{rate_text(rate)} is near the loss ceiling {rate_text(loss_term.rate_bps)}")
    explained = window_explains(rate, ceilings)
    if explained is not None:
        limit, low, high = explained
        return result(
            LIMIT_LABELS[limit],
            f"{rate_text(rate)} is what the {TERM_WORDS[limit]} allows between its least and largest share in "
            f"flight ({rate_text(low)} to {rate_text(high)}), and nothing shows a bottleneck on the path",
        )
    if stats.rate_cv is not None and stats.rate_cv < FLAT_RATE_CV and (fraction is None or fraction < 0.9):
        return result(
            Diagnosis.CAPACITY,
            f"flat at {rate_text(rate)} (per-second variation {stats.rate_cv:.1%}, outlying seconds left out) below "
            "the hosts' ceilings: a bottleneck on the path",
        )
    return result(
        Diagnosis.BELOW_CEILINGS,
        "below every ceiling: suspect a middlebox, a policer, CPU or NUMA, or the other direction; "
        "compare TCP with paced UDP, 1 with N streams, forward with reverse",
    )
