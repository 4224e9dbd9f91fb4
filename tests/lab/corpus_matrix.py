"""The labelled corpus's scenarios, drawn from a matrix, each with its truth.

A scenario is one path, tx -> rx, whose data direction is the link's a_to_b. What binds it is
chosen (receive window, send buffer, link rate, a policer with a small or a large burst,
random or bursty loss, a shallow queue), and every other limit is configured at least
MARGIN times higher, so the truth holds whatever a window's kernel fraction turns out to be.
The draw also sets the congestion control (cubic, bbr, reno), the MTU (1500, 9000), the RTT
(2-300 ms, log-uniform), ECMP (none, or 2-6 members with unequal weights on the forward, the
reverse or both directions), whether the run is iperf3 -R (the server sends), and CPU
contention on the hosts.

The truth is computed from the configuration alone: each limit's nominal rate, the smallest
of them (BBR has no loss ceiling), the labels a correct diagnosis may give, and the RTT
members with their shares of flows. Pure: no lab, no root.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field
from typing import Any

LIMITS = (
    "receive_window",
    "send_buffer",
    "link_rate",
    "policer_small_burst",
    "policer_large_burst",
    "random_loss",
    "bursty_loss",
    "shallow_queue",
)
CONGESTION_CONTROLS = ("cubic", "bbr", "reno")
MTUS = (1500, 9000)
ECMP_KINDS = ("none", "forward", "reverse", "both")
# Every limit but the binding one is configured at least this many times higher: a window's
# share of its buffer is 0.3-0.95 (scaling_ratio, send-side overhead), a factor of three.
MARGIN = 6.0
# Rates the user-space emulator carries on this 2-core machine with room to spare, per MTU
# (docs/lab.md's benchmark: packets per second bound it, so jumbo frames go further).
RATE_RANGE_MBPS = {1500: (10.0, 120.0), 9000: (20.0, 300.0)}
# Above this the links are left unlimited: the emulator itself is then the widest limit.
MAX_LINK_MBPS = 1000.0
# Nominal window fractions the truth assumes (the configured buffer is sized from them).
RECEIVE_FRACTION = 0.5
SEND_FRACTION = 0.5
IPV4_TCP_OVERHEAD = 52
MIN_BUFFER_BYTES = 16 * 1024
# What one throughput run lasts (lab_corpus.RUN_SECONDS) and the loss events a loss-limited
# truth needs in it.
RUN_SECONDS = 10
MIN_LOSS_EVENTS = 10
# The smallest tcp_wmem maximum this kernel (6.18) holds a sender to. Under it the corpus's
# runs kept 1.3-3.8 times the maximum in flight (c033: sk_sndbuf 17,408 B, wmem_queued up to
# 114 KB, sndbuf-limited 0.1 % of the time; c057, c065, c081 alike) and ran at 2-4 times the
# "send buffer" rate, while every draw from 66 KB up ran at it: no single truth below.
MIN_BINDING_SEND_BUFFER = 64 * 1024
MATHIS_C = 1.22
LABELS = {
    "receive_window": "receive_window",
    "send_buffer": "send_buffer",
    "link_rate": "capacity",
    "policer": "policer",
    "loss": "loss",
}


@dataclass(frozen=True)
class Member:
    extra_delay_ms: float
    weight: int


@dataclass(frozen=True)
class Draw:
    """One cell of the matrix."""

    index: int
    limit: str
    congestion_control: str
    mtu: int
    rtt_ms: float
    rate_mbps: float
    ecmp: str
    forward_members: tuple[Member, ...]
    reverse_members: tuple[Member, ...]
    reverse_test: bool  # iperf3 -R: rx is the client, tx (the server) sends
    cpu_contention: bool
    loss: float = 0.0
    burst_bytes: int = 0
    gilbert: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"c{self.index:03d}-{self.limit.replace('_', '-')}-{self.congestion_control}-{self.mtu}"


def _members(rng: random.Random, rtt_ms: float) -> tuple[Member, ...]:
    """2-6 members with unequal weights; extra delays 0.3 ms up to max(3 ms, 15% of the RTT),
    spread so that each member is its own RTT mode (at least 0.3 ms apart)."""
    count = rng.randint(2, 6)
    top = max(3.0, 0.15 * rtt_ms)
    extras = sorted(rng.sample(range(1, 100), count - 1))
    delays = [0.0, *(round(0.3 + (top - 0.3) * step / 100 * (1 + i * 0.05), 2) for i, step in enumerate(extras))]
    for i in range(1, len(delays)):
        delays[i] = max(delays[i], round(delays[i - 1] + 0.3 + 0.02 * rtt_ms, 2))
    weights = [rng.randint(1, 8) for _ in delays]
    if len(set(weights)) == 1:
        weights[0] += 1
    return tuple(Member(delay, weight) for delay, weight in zip(delays, weights, strict=True))


def draw(rng: random.Random, index: int) -> Draw:
    limit = LIMITS[index % len(LIMITS)]  # each limit as often as the others
    cc = rng.choice(CONGESTION_CONTROLS)
    mtu = rng.choice(MTUS)
    rtt = round(math.exp(rng.uniform(math.log(2), math.log(300))), 1)
    low, high = RATE_RANGE_MBPS[mtu]
    rate = round(math.exp(rng.uniform(math.log(low), math.log(high))), 1)
    ecmp = rng.choice(ECMP_KINDS)
    forward = _members(rng, rtt) if ecmp in ("forward", "both") else ()
    reverse = _members(rng, rtt) if ecmp in ("reverse", "both") else ()
    loss, burst, gilbert = 0.0, 0, {}
    mss = mtu - IPV4_TCP_OVERHEAD
    if limit in ("random_loss", "bursty_loss"):
        # The loss-event rate at which Mathis gives the drawn rate at this RTT.
        events = (MATHIS_C * mss * 8 / (rtt / 1000 * rate * 1e6)) ** 2
        events = min(max(events, 2e-5), 0.02)
        # Where the loss had to be clipped, the rate follows it: the other limits are sized
        # from the rate, so they stay MARGIN times above what binds.
        rate = round(MATHIS_C * mss * 8 / (rtt / 1000) / math.sqrt(events) / 1e6, 1)
        if limit == "random_loss":
            loss = round(events, 6)
        else:
            leave = round(rng.uniform(0.3, 0.6), 2)
            gilbert = {"p_enter_bad": round(events, 6), "p_leave_bad": leave, "loss_bad": 0.8, "loss_good": 0.0}
    if limit in ("receive_window", "send_buffer"):
        # A buffer is at least MIN_BUFFER_BYTES: at a short RTT that is the least rate it gives.
        rate = max(rate, math.ceil(MIN_BUFFER_BYTES * RECEIVE_FRACTION * 8 / (rtt / 1000) / 1e5) / 10)
    if limit == "policer_small_burst":
        # A few KB, as seed 002's 8 KB, but never under two packets: a burst smaller than
        # one packet drops every packet, which is an outage, not a policer.
        burst = max(rng.choice([4000, 8000, 16000]), 2 * (mtu + 14))
    if limit == "policer_large_burst":
        bdp = rate * 1e6 * rtt / 1000 / 8
        burst = int(max(64_000, rng.uniform(0.5, 1.0) * bdp))
    return Draw(
        index=index,
        limit=limit,
        congestion_control=cc,
        mtu=mtu,
        rtt_ms=rtt,
        rate_mbps=rate,
        ecmp=ecmp,
        forward_members=forward,
        reverse_members=reverse,
        reverse_test=rng.random() < 0.25,
        cpu_contention=rng.random() < 0.2,
        loss=loss,
        burst_bytes=burst,
        gilbert=gilbert,
    )


def _buffer_for(rate_mbps: float, rtt_ms: float, fraction: float) -> int:
    """The buffer whose window gives rate_mbps at rtt_ms, at a nominal fraction, whole KiB."""
    return max(MIN_BUFFER_BYTES, math.ceil(rate_mbps * 1e6 * rtt_ms / 1000 / 8 / fraction / 1024) * 1024)


def _link_mbps(draw: Draw) -> float | None:
    """The data direction's link rate: the drawn rate where a link binds, else MARGIN times
    it (None: left unlimited where that is beyond what the emulator carries)."""
    if draw.limit in ("link_rate", "shallow_queue"):
        return draw.rate_mbps
    wide = MARGIN * draw.rate_mbps
    return wide if wide <= MAX_LINK_MBPS else None


def _slowest_rtt_ms(draw: Draw) -> float:
    forward = max((m.extra_delay_ms for m in draw.forward_members), default=0.0)
    reverse = max((m.extra_delay_ms for m in draw.reverse_members), default=0.0)
    return draw.rtt_ms + forward + reverse


def _fastest_rtt_ms(draw: Draw) -> float:
    return draw.rtt_ms  # every member set has a 0-extra member


def buffers(draw: Draw) -> tuple[int, int]:
    """(tcp_rmem max at the receiver, tcp_wmem max at the sender). A window limit is sized for
    the drawn rate at the path's fastest RTT; the other buffer, and both where no window binds,
    MARGIN times what the widest limit needs at the slowest RTT."""
    slow = _slowest_rtt_ms(draw)
    link = _link_mbps(draw) or MAX_LINK_MBPS * 3
    wide_rcv = _buffer_for(MARGIN * max(link, draw.rate_mbps), slow, RECEIVE_FRACTION)
    wide_snd = _buffer_for(MARGIN * max(link, draw.rate_mbps), slow, SEND_FRACTION)
    wide_rcv, wide_snd = min(wide_rcv, 512 * 2**20), min(wide_snd, 512 * 2**20)
    rcv = _buffer_for(draw.rate_mbps, draw.rtt_ms, RECEIVE_FRACTION) if draw.limit == "receive_window" else wide_rcv
    snd = _buffer_for(draw.rate_mbps, draw.rtt_ms, SEND_FRACTION) if draw.limit == "send_buffer" else wide_snd
    if draw.limit in ("random_loss", "bursty_loss") and draw.congestion_control == "bbr":
        # BBR does not back off on loss below ~2%: a receive window is what binds it here,
        # with the loss still on the path (a loss-based reading would be wrong).
        rcv = _buffer_for(draw.rate_mbps, draw.rtt_ms, RECEIVE_FRACTION)
    return rcv, snd


def _direction(base_ms: float, members: tuple[Member, ...]) -> dict[str, Any]:
    if not members:
        return {"delay_ms": base_ms}
    return {"ecmp": [{"delay_ms": round(base_ms + m.extra_delay_ms, 3), "weight": m.weight} for m in members]}


def scenario(draw: Draw) -> dict[str, Any]:
    """The fathom-lab scenario of a draw (deploy/lab/scenarios' format)."""
    rcv, snd = buffers(draw)
    one_way = draw.rtt_ms / 2
    forward: dict[str, Any] = _direction(one_way, draw.forward_members)
    reverse: dict[str, Any] = _direction(one_way, draw.reverse_members)
    link = _link_mbps(draw)
    if link is not None:
        forward["rate_mbps"] = link
        bdp = link * 1e6 * _slowest_rtt_ms(draw) / 1000 / 8
        forward["queue_bytes"] = (
            int(max(4 * draw.mtu, 0.05 * bdp)) if draw.limit == "shallow_queue" else int(max(64_000, 1.5 * bdp))
        )
    if draw.limit.startswith("policer"):
        forward["policer"] = {"rate_mbps": draw.rate_mbps, "burst_bytes": draw.burst_bytes}
    if draw.loss:
        forward["loss"] = draw.loss
    if draw.gilbert:
        forward["gilbert_elliott"] = dict(draw.gilbert)
    # The kernel starts a socket at the default (the middle value) and autotunes up to the
    # maximum, never below the default: a limit under the usual default lowers the default too.
    sysctls = {
        "net.ipv4.tcp_rmem": f"4096 {min(131072, rcv)} {rcv}",
        "net.ipv4.tcp_wmem": f"4096 {min(16384, snd)} {snd}",
    }
    return {
        "name": draw.name,
        "description": f"corpus cell {draw.index}: {draw.limit} at {draw.rate_mbps} Mbit/s, {draw.rtt_ms} ms",
        "hosts": [
            {"name": "tx", "sysctls": dict(sysctls), "congestion_control": draw.congestion_control},
            {"name": "rx", "sysctls": dict(sysctls), "congestion_control": draw.congestion_control},
        ],
        "links": [{"name": "path", "between": ["tx", "rx"], "mtu": draw.mtu, "a_to_b": forward, "b_to_a": reverse}],
    }


def rtt_members(draw: Draw) -> list[dict[str, float]]:
    """The flows' RTT members: every forward member with every reverse one (hashed apart), with
    its share of flows; members closer than 0.05 ms are one."""
    forward = draw.forward_members or (Member(0.0, 1),)
    reverse = draw.reverse_members or (Member(0.0, 1),)
    f_total, r_total = sum(m.weight for m in forward), sum(m.weight for m in reverse)
    shares: dict[float, float] = {}
    for f in forward:
        for r in reverse:
            rtt = round(draw.rtt_ms + f.extra_delay_ms + r.extra_delay_ms, 2)
            key = next((k for k in shares if abs(k - rtt) < 0.05), rtt)
            shares[key] = shares.get(key, 0.0) + f.weight / f_total * r.weight / r_total
    return [{"rtt_ms": rtt, "share": round(share, 4)} for rtt, share in sorted(shares.items())]


def loss_events_per_run(draw: Draw) -> float:
    """Loss events a run of RUN_SECONDS expects at the drawn rate: under a few, the run meets
    its loss a handful of times or not at all, and reaches the next limit between them."""
    events = draw.loss or draw.gilbert.get("p_enter_bad", 0.0)
    packets = draw.rate_mbps * 1e6 * RUN_SECONDS / 8 / draw.mtu
    return events * packets


def truth(draw: Draw) -> dict[str, Any]:
    """What binds the path, from the configuration: each limit's nominal rate at the path's
    fastest RTT, the smallest, and the labels a right diagnosis may give."""
    rcv, snd = buffers(draw)
    rtt_s = draw.rtt_ms / 1000
    mss = draw.mtu - IPV4_TCP_OVERHEAD
    goodput = mss / draw.mtu  # of an IP-level rate
    terms: dict[str, float] = {
        "receive_window": RECEIVE_FRACTION * rcv * 8 / rtt_s / 1e6,
        "send_buffer": SEND_FRACTION * snd * 8 / rtt_s / 1e6,
    }
    link = _link_mbps(draw)
    if link is not None:
        terms["link_rate"] = link * goodput
    if draw.limit.startswith("policer"):
        terms["policer"] = draw.rate_mbps * goodput
    events = draw.loss or draw.gilbert.get("p_enter_bad", 0.0)
    if events and draw.congestion_control != "bbr":
        terms["loss"] = MATHIS_C * mss * 8 / rtt_s / math.sqrt(events) / 1e6
    binding = min(terms, key=lambda key: terms[key])
    label = LABELS[binding]
    also: list[str] = []
    if draw.limit == "policer_large_burst":
        also = ["capacity"]  # a burst of a BDP lets TCP fill it like a link
    if draw.limit == "shallow_queue":
        # A queue of a few packets: loss-based TCP drops itself below the link (the seeds'
        # fast-to-slow host), BBR paces at it and fills it.
        label, also = ("capacity", ["policer"]) if draw.congestion_control == "bbr" else ("policer", ["capacity"])
    unclear = ""
    if binding == "loss" and loss_events_per_run(draw) < MIN_LOSS_EVENTS:
        # Mathis is a long-run average: with under MIN_LOSS_EVENTS losses a run, some runs
        # meet none and reach the next limit. No single label is the truth of such a run.
        unclear = "too few loss events a run"
    if binding == "send_buffer" and snd < MIN_BINDING_SEND_BUFFER:
        unclear = f"a tcp_wmem under {MIN_BINDING_SEND_BUFFER // 1024} KiB, which the kernel does not hold to"
    if unclear:
        label, also = "ambiguous", []
    return {
        "label": label,
        "also": also,
        **({"unclear": unclear} if unclear else {}),
        "limit": draw.limit,
        "rate_mbps": round(terms[binding], 2),
        "terms_mbps": {key: round(value, 2) for key, value in terms.items()},
        "members": rtt_members(draw),
        "reverse_test": draw.reverse_test,
        "cpu_contention": draw.cpu_contention,
    }


def matrix(seed: int, count: int, first: int = 0) -> list[Draw]:
    """count draws from the seed; the first-th onwards, so a corpus can be extended."""
    rng = random.Random(seed)  # noqa: S311 (a reproducible draw, not a secret)
    draws = [draw(rng, index) for index in range(first + count)]
    return draws[first:]


def describe(draw: Draw) -> dict[str, Any]:
    return asdict(draw)


def from_description(described: dict[str, Any]) -> Draw:
    """The draw that describe() wrote, so a recorded scenario's truth can be computed again."""
    values = dict(described)
    for key in ("forward_members", "reverse_members"):
        values[key] = tuple(Member(**member) for member in values.get(key) or ())
    return Draw(**values)
