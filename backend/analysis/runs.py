"""The ceilings of one throughput run, from what was true when it ran.

Pure: the caller hands in the run's iperf3 options and summary, its per-interval TCP_INFO,
both hosts' tuning at the time of the run, and the path's RTT and loss from the other
probes. Out come the four ceiling terms at the flow's own minimum RTT, under load, and at
every RTT mode of the path, with where each input came from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis.ceilings import (
    DEFAULT_SEND_FRACTION,
    MAX_WINDOW_BYTES,
    UNSCALED_WINDOW_BYTES,
    Limit,
    PathCeilings,
    link_ceiling,
    loss_ceiling,
    receive_window_fraction,
    socket_buffer_bytes,
    window_ceiling,
)
from analysis.tuning import HostTuning

# IPv4 (20) + TCP (20) + timestamps (12): what Linux takes off the path MTU for the MSS.
TCP_IP_OVERHEAD_BYTES = 52
# tcp-ceilings.md: measured scaling ratios range about 0.3 to 0.9. An observed window below
# 0.3 of the buffer means the window never grew to the cap (something else limited the run),
# so it says nothing about the ratio.
OBSERVED_FRACTION_RANGE = (0.3, 0.95)
# A flow with this share of the peer's largest window in flight was bound by that window.
WINDOW_FILLED_SHARE = 0.8
# tcp-ceilings.md: the sender keeps about 0.5 to 0.9 of its buffer in flight.
MAX_SEND_FRACTION = 0.9


@dataclass(frozen=True)
class RunFacts:
    """Everything one run's ceilings rest on."""

    streams: int
    sender: HostTuning
    receiver: HostTuning
    window_request_bytes: int | None = None  # iperf3 -w
    congestion_control: str | None = None  # what the sender used (iperf3 reports it)
    mss_request_bytes: int | None = None  # iperf3 -M
    pmtu_bytes: int | None = None  # TCP_INFO's path MTU
    run_min_rtt_ms: float | None = None  # the flow's own minimum RTT (TCP_INFO)
    run_mean_rtt_ms: float | None = None  # mean RTT under load
    path_min_rtt_ms: float | None = None  # ping / flow sweep minimum
    mode_rtts_ms: tuple[float, ...] = ()  # one per RTT mode of the path
    # A flow sweep found ECMP members on the path (either way) in the past week, though the
    # current sweeps may show one: a 1-in-128 member rarely gets the two flows a mode needs.
    ecmp_seen: bool = False
    loss_fraction: float | None = None  # from ping / flow sweeps, not from retransmits
    loss_source: str = ""
    # The least loss those pings support (the 95% Wilson lower bound): 1 lost of 100 is not
    # 1% for sure. None: take loss_fraction as it is.
    loss_floor: float | None = None
    max_snd_wnd_bytes: int | None = None
    # Bytes the run kept in flight (steady rate x RTT under load): a lower bound of the share
    # of the send buffer that can be in flight.
    inflight_bytes: float | None = None
    # iperf3's start.sndbuf_actual / rcvbuf_actual of the sender's / receiver's socket, when
    # that socket is the client's (iperf3 reports only the client's).
    sndbuf_actual_bytes: int | None = None
    rcvbuf_actual_bytes: int | None = None
    # The largest congestion window of the run (TCP_INFO): whether congestion control held
    # the bytes in flight.
    max_snd_cwnd_bytes: int | None = None

    @property
    def mtu_bytes(self) -> int | None:
        candidates = [value for value in (self.pmtu_bytes, self.sender.mtu_bytes, self.receiver.mtu_bytes) if value]
        return self.pmtu_bytes or (min(candidates) if candidates else None)

    @property
    def mss_bytes(self) -> int | None:
        if self.mss_request_bytes:
            return self.mss_request_bytes
        mtu = self.mtu_bytes
        return mtu - TCP_IP_OVERHEAD_BYTES if mtu and mtu > TCP_IP_OVERHEAD_BYTES else None

    @property
    def link_rate_bps(self) -> float | None:
        """The slower NIC of the two ends (a fast host sending to a slow one: seed 003)."""
        rates = [rate for rate in (self.sender.link_rate_bps, self.receiver.link_rate_bps) if rate]
        return min(rates) if rates else None


@dataclass(frozen=True)
class RunInputs:
    """A run's facts and where each came from: what its stored ceilings rest on."""

    facts: RunFacts
    sources: dict[str, str]  # sender_facts, receiver_facts, loss, modes: one sentence each

    def to_dict(self) -> dict[str, Any]:
        facts = self.facts
        return {
            "streams": facts.streams,
            "sender": facts.sender.to_dict(),
            "receiver": facts.receiver.to_dict(),
            "window_request_bytes": facts.window_request_bytes,
            "congestion_control": facts.congestion_control,
            "mss_bytes": facts.mss_bytes,
            "mtu_bytes": facts.mtu_bytes,
            "link_rate_bps": facts.link_rate_bps,
            "run_min_rtt_ms": facts.run_min_rtt_ms,
            "run_mean_rtt_ms": facts.run_mean_rtt_ms,
            "path_min_rtt_ms": facts.path_min_rtt_ms,
            "mode_rtts_ms": list(facts.mode_rtts_ms),
            "loss_fraction": facts.loss_fraction,
            "loss_source": facts.loss_source,
            "max_snd_wnd_bytes": facts.max_snd_wnd_bytes,
            "sources": self.sources,
        }


# Fewer pings than this give no loss rate worth a ceiling (1 lost of 10 is not p = 0.1).
MIN_LOSS_SAMPLES = 100
# 95% two-sided.
Z_95 = 1.96


def wilson_lower_bound(successes: int, trials: int, z: float = Z_95) -> float:
    """The Wilson score interval's lower end for successes of trials: a proportion's least
    plausible value, sound for the small counts of rare events (0 for 0 successes)."""
    if trials <= 0 or successes <= 0:
        return 0.0
    p = successes / trials
    z2 = z * z
    centre = p + z2 / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return max(0.0, (centre - spread) / (1 + z2 / trials))


def options_key(facts: RunFacts) -> str:
    """Runs comparable in a regression series: same streams, -w and congestion control."""
    return f"P{facts.streams}/w{facts.window_request_bytes or 0}/{facts.congestion_control or 'default'}"


@dataclass(frozen=True)
class Buffers:
    """The socket buffers and window fractions of a run, each with where it came from."""

    receive_bytes: int | None
    receive_source: str
    receive_fraction: float | None
    receive_fraction_source: str
    send_bytes: int | None
    send_source: str
    send_fraction: float = DEFAULT_SEND_FRACTION
    send_fraction_source: str = "planning value 0.5"

    def to_dict(self) -> dict[str, Any]:
        return {
            "receive_bytes": self.receive_bytes,
            "receive_source": self.receive_source,
            "receive_fraction": self.receive_fraction,
            "receive_fraction_source": self.receive_fraction_source,
            "send_bytes": self.send_bytes,
            "send_source": self.send_source,
            "send_fraction": self.send_fraction,
            "send_fraction_source": self.send_fraction_source,
        }


def _buffer(requested: int | None, autotune_max: int | None, core_max: int | None, side: str) -> tuple[int | None, str]:
    size = socket_buffer_bytes(requested, autotune_max, core_max)
    if requested is not None:
        if size is None:
            return None, f"iperf3 -w {requested} but net.core.{side}mem_max unknown"
        return size, f"iperf3 -w {requested} doubled, capped by net.core.{side}mem_max={core_max}"
    if size is None:
        return None, f"net.ipv4.tcp_{side}mem unknown"
    return size, f"net.ipv4.tcp_{side}mem max (autotuning)"


def run_buffers(facts: RunFacts) -> Buffers:
    requested = facts.window_request_bytes if facts.window_request_bytes else None
    receiver = facts.receiver
    autotune_max = receiver.tcp_rmem_max_bytes
    if receiver.moderate_rcvbuf is False:
        autotune_max = receiver.tcp_rmem_default_bytes
    receive, receive_source = _buffer(requested, autotune_max, receiver.rmem_max_bytes, "r")
    if requested is None and receiver.moderate_rcvbuf is False:
        receive_source = "net.ipv4.tcp_rmem default: tcp_moderate_rcvbuf=0 turns autotuning off"
    send, send_source = _buffer(requested, facts.sender.tcp_wmem_max_bytes, facts.sender.wmem_max_bytes, "w")
    # With -w the kernel's grant is what iperf3 read back: no guessing about the cap.
    if requested is not None and facts.sndbuf_actual_bytes:
        send, send_source = facts.sndbuf_actual_bytes, f"iperf3 sndbuf_actual with -w {requested}"
    if requested is not None and facts.rcvbuf_actual_bytes:
        receive, receive_source = facts.rcvbuf_actual_bytes, f"iperf3 rcvbuf_actual with -w {requested}"
    observed = None
    # The peer's largest window tells the ratio only when autotuning grew it to the cap, i.e.
    # when the flow filled it: otherwise the window simply was not needed any larger.
    window_filled = bool(
        facts.max_snd_wnd_bytes
        and facts.inflight_bytes
        and facts.inflight_bytes >= WINDOW_FILLED_SHARE * facts.max_snd_wnd_bytes
    )
    if receive and facts.max_snd_wnd_bytes and window_filled:
        ratio = facts.max_snd_wnd_bytes / receive
        low, high = OBSERVED_FRACTION_RANGE
        observed = ratio if low <= ratio <= high else None
    fraction, fraction_source = receive_window_fraction(facts.receiver.kernel, facts.receiver.adv_win_scale, observed)
    send_fraction, send_fraction_source = DEFAULT_SEND_FRACTION, f"planning value {DEFAULT_SEND_FRACTION}"
    if send and facts.inflight_bytes and facts.inflight_bytes / send > DEFAULT_SEND_FRACTION:
        # The run itself disproved the planning value: it had more than half the buffer in
        # flight. That is only a lower bound, so plan with the top of the measured range.
        send_fraction = MAX_SEND_FRACTION
        send_fraction_source = (
            f"{facts.inflight_bytes:.0f} bytes were in flight (over half the buffer): top of the 0.5-0.9 range"
        )
    return Buffers(
        receive, receive_source, fraction, fraction_source, send, send_source, send_fraction, send_fraction_source
    )


@dataclass(frozen=True)
class CeilingSet:
    """The four terms at one RTT."""

    rtt_ms: float | None
    rtt_source: str
    ceilings: PathCeilings

    @property
    def limit(self) -> Limit:
        return self.ceilings.limit

    @property
    def ceiling_bps(self) -> float | None:
        return self.ceilings.ceiling_bps

    def to_dict(self) -> dict[str, Any]:
        return {
            "rtt_ms": self.rtt_ms,
            "rtt_source": self.rtt_source,
            "limit": self.limit.value,
            "ceiling_bps": self.ceiling_bps,
            "terms": {
                limit.value: {"rate_bps": term.rate_bps, "reason": term.reason}
                for limit, term in self.ceilings.terms().items()
            },
        }


@dataclass(frozen=True)
class RunMember:
    """The ECMP member a run's flow took: which RTT mode, its ceiling, and how it compares.

    `scale` is this member's ceiling over the fastest member's: a run at 94% of a slow
    member's ceiling is as good as one at 94% of the fast one's, so the regression rules
    compare rate / scale. 1.0 where the members' ceilings are the same (a capacity-limited
    path) or unknown.
    """

    index: int  # 1 = the lowest RTT
    count: int
    rtt_ms: float
    ceiling_bps: float | None
    scale: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "count": self.count,
            "rtt_ms": self.rtt_ms,
            "ceiling_bps": self.ceiling_bps,
            "scale": self.scale,
        }


@dataclass(frozen=True)
class FlowAbovePath:
    """A flow whose own minimum RTT lay far above every RTT the path is known to have.

    Either it built a queue, or it took an ECMP member no flow sweep has shown (a member of
    1 in 128 rarely gets the two flows a sweep needs to show it). At its own RTT a window
    gives window_ceiling_bps; a run near that rate looks exactly like one on such a member.
    """

    rtt_ms: float
    window_ceiling_bps: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"rtt_ms": self.rtt_ms, "window_ceiling_bps": self.window_ceiling_bps}


@dataclass(frozen=True)
class RunCeilings:
    buffers: Buffers
    at_min_rtt: CeilingSet
    under_load: CeilingSet | None
    per_mode: tuple[CeilingSet, ...] = field(default=())
    member: RunMember | None = None
    flow_above_path: FlowAbovePath | None = None

    @property
    def scale(self) -> float:
        return self.member.scale if self.member is not None else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "buffers": self.buffers.to_dict(),
            "at_min_rtt": self.at_min_rtt.to_dict(),
            "under_load": self.under_load.to_dict() if self.under_load else None,
            "per_mode": [mode.to_dict() for mode in self.per_mode],
            "member": self.member.to_dict() if self.member is not None else None,
            "flow_above_path": self.flow_above_path.to_dict() if self.flow_above_path is not None else None,
        }


def ceilings_at(facts: RunFacts, buffers: Buffers, rtt_ms: float | None, rtt_source: str) -> CeilingSet:
    rtt_s = rtt_ms / 1000 if rtt_ms is not None and rtt_ms > 0 else None
    mss = facts.mss_bytes
    return CeilingSet(
        rtt_ms=rtt_ms,
        rtt_source=rtt_source,
        ceilings=PathCeilings(
            link=link_ceiling(facts.link_rate_bps, mss, facts.mtu_bytes),
            receive_window=window_ceiling(
                facts.streams,
                buffers.receive_fraction,
                buffers.receive_bytes,
                rtt_s,
                "receive",
                UNSCALED_WINDOW_BYTES if facts.receiver.window_scaling is False else MAX_WINDOW_BYTES,
            ),
            send_buffer=window_ceiling(facts.streams, buffers.send_fraction, buffers.send_bytes, rtt_s, "send"),
            loss=loss_ceiling(facts.streams, mss, rtt_s, facts.loss_fraction, facts.congestion_control),
        ),
    )


@dataclass(frozen=True)
class FlowRtt:
    """The unloaded RTT a run's flow saw, where it came from, and its ECMP member if known."""

    rtt_ms: float | None
    source: str
    member_rtt_ms: float | None = None  # the RTT mode the flow's minimum lies on
    above_path_ms: float | None = None  # the flow's own minimum, when far above every known RTT


def far_above(rtt_ms: float, known_ms: float) -> bool:
    """More than max(1 ms, 10%) above: beyond a sweep's or a ping's spread around a member."""
    return rtt_ms > known_ms + max(1.0, 0.1 * known_ms)


def flow_base_rtt(facts: RunFacts) -> FlowRtt:
    """The unloaded RTT of the run's own flow: its ECMP member's mode where that is clear.

    iperf3's min_rtt is the smallest smoothed RTT of its intervals, so it includes whatever
    queue the flow built. It picks the member only when it lies near a mode; far above every
    mode the queue hides which member the flow took, and the path's minimum is used.
    """
    run_min = facts.run_min_rtt_ms if facts.run_min_rtt_ms and facts.run_min_rtt_ms > 0 else None
    path_min = facts.path_min_rtt_ms if facts.path_min_rtt_ms and facts.path_min_rtt_ms > 0 else None
    modes = sorted(mode for mode in facts.mode_rtts_ms if mode > 0)
    if run_min is not None and modes:
        largest = modes[-1]
        if not far_above(run_min, largest):
            below = [mode for mode in modes if mode <= run_min + max(0.5, 0.05 * mode)]
            if below:
                source = f"the flow's RTT mode {modes.index(below[-1]) + 1} of {len(modes)} (flow sweep)"
                return FlowRtt(below[-1], source, below[-1])
            return FlowRtt(run_min, "the run's own minimum RTT (TCP_INFO; below every mode)")
        hidden = f"the path's minimum RTT: the flow's {run_min:.1f} ms hides its ECMP member behind a queue"
        return FlowRtt(modes[0], hidden, above_path_ms=run_min)
    if run_min is not None and path_min is not None:
        if path_min <= run_min:
            # Far above the path's minimum: a queue, or (where ECMP was seen) an unseen member.
            above = run_min if facts.ecmp_seen and far_above(run_min, path_min) else None
            return FlowRtt(path_min, "the path's minimum RTT (ping, flow sweep)", above_path_ms=above)
        return FlowRtt(run_min, "the run's own minimum RTT (TCP_INFO)")
    if run_min is not None:
        return FlowRtt(run_min, "the run's own minimum RTT (TCP_INFO)")
    if path_min is not None:
        return FlowRtt(path_min, "the path's minimum RTT (ping, flow sweep)")
    return FlowRtt(None, "no RTT measured")


def run_member(
    facts: RunFacts, member_rtt_ms: float | None, at_member: CeilingSet, per_mode: Sequence[CeilingSet]
) -> RunMember | None:
    """The member of an ECMP path (two modes or more) the flow took, None when unknown.

    A run whose flow built a queue above every mode has no member: such a flow was held by
    capacity or a policer, which is the same on every member, so it is judged unscaled.
    """
    modes = sorted(mode for mode in facts.mode_rtts_ms if mode > 0)
    if member_rtt_ms is None or len(modes) < 2:
        return None
    ceilings = [mode.ceiling_bps for mode in per_mode if mode.ceiling_bps]
    fastest = max(ceilings) if len(ceilings) == len(per_mode) and ceilings else None
    own = at_member.ceiling_bps
    scale = min(1.0, own / fastest) if own and fastest else 1.0
    return RunMember(modes.index(member_rtt_ms) + 1, len(modes), member_rtt_ms, own, scale)


def run_ceilings(facts: RunFacts) -> RunCeilings:
    """Ceilings at the flow's unloaded RTT (its ECMP member), under load, and per mode."""
    buffers = run_buffers(facts)
    flow = flow_base_rtt(facts)
    under_load = None
    if facts.run_mean_rtt_ms and facts.run_mean_rtt_ms > 0:
        under_load = ceilings_at(facts, buffers, facts.run_mean_rtt_ms, "mean RTT under load (TCP_INFO)")
    per_mode = tuple(
        ceilings_at(facts, buffers, mode_rtt, f"RTT mode {index + 1} (flow sweep)")
        for index, mode_rtt in enumerate(facts.mode_rtts_ms)
    )
    at_min = ceilings_at(facts, buffers, flow.rtt_ms, flow.source)
    member = run_member(facts, flow.member_rtt_ms, at_min, per_mode)
    above = None
    if flow.above_path_ms is not None:
        own = ceilings_at(facts, buffers, flow.above_path_ms, "the flow's own minimum RTT (TCP_INFO)")
        above = FlowAbovePath(flow.above_path_ms, _window_ceiling(own))
    return RunCeilings(buffers, at_min, under_load, per_mode, member, above)


def _window_ceiling(at: CeilingSet) -> float | None:
    """The smaller of the receive-window and send-buffer terms: what a window gives at that RTT."""
    terms = at.ceilings.terms()
    rates = [
        term.rate_bps
        for limit, term in terms.items()
        if limit in (Limit.RECEIVE_WINDOW, Limit.SEND_BUFFER) and term.rate_bps is not None
    ]
    return min(rates) if rates else None
