"""Theoretical TCP throughput ceilings of a path, from host tuning, path RTT and loss.

Pure functions over plain values (see docs in shared reference tcp-ceilings.md): the link,
receive-window, send-buffer and loss ceilings, which of them wins, and how long slow start
takes. A term whose inputs are missing or meaningless is `unknown` with a reason instead of
a made-up number, so a diagnosis never rests on a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

# Ethernet framing around one IP packet on the wire: preamble 8, header 14, FCS 4, gap 12.
ETHERNET_OVERHEAD_BYTES = 38
# RFC 7323: the window field (16 bits) scaled by at most 2^14; without scaling, 16 bits.
MAX_WINDOW_BYTES = 65535 * 2**14
UNSCALED_WINDOW_BYTES = 65535
# Mathis et al. constant for Reno-like senders with delayed ACKs ignored: sqrt(3/2).
MATHIS_C = 1.22
# RFC 8312: CUBIC's average window is about 1.054 * (rtt^0.75 / p^0.75) segments.
CUBIC_C = 1.054
# Send-side fraction of sk_sndbuf that can be in flight when nothing better is known.
DEFAULT_SEND_FRACTION = 0.5
# Linux 6.6 replaced tcp_adv_win_scale with a measured scaling_ratio; plan with 50%.
SCALING_RATIO_KERNEL = (6, 6)
DEFAULT_SCALING_RATIO = 0.5
INITIAL_WINDOW_SEGMENTS = 10


class Limit(StrEnum):
    """The ceiling term that is smallest, i.e. what bounds a path."""

    LINK = "link"
    RECEIVE_WINDOW = "receive_window"
    SEND_BUFFER = "send_buffer"
    LOSS = "loss"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Term:
    """One ceiling term: a rate in bit/s, or None with the reason it is unknown."""

    rate_bps: float | None
    reason: str = ""

    @classmethod
    def unknown(cls, reason: str) -> Term:
        return cls(None, reason)

    @property
    def known(self) -> bool:
        return self.rate_bps is not None


def parse_kernel_version(release: str) -> tuple[int, int] | None:
    """'6.1.0-18-amd64' -> (6, 1); None when the release string has no major.minor."""
    parts = release.split(".", 2)
    if len(parts) < 2:
        return None
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or "x")
    except ValueError:
        return None


def receive_window_fraction(
    kernel_release: str | None,
    adv_win_scale: int | None,
    observed_fraction: float | None = None,
) -> tuple[float | None, str]:
    """The share of the receive buffer that becomes advertised window, and where it came from.

    Kernels before 6.6 use tcp_adv_win_scale (a > 0: 1 - 2^-a; a <= 0: 2^a). From 6.6 the
    kernel measures skb len/truesize per socket; plan with 0.5 unless a test observed the
    peer's window (iperf3 max_snd_wnd / buffer), which is then preferred.
    """
    if observed_fraction is not None and 0 < observed_fraction <= 1:
        return observed_fraction, "observed max_snd_wnd"
    version = parse_kernel_version(kernel_release) if kernel_release else None
    if version is not None and version >= SCALING_RATIO_KERNEL:
        return DEFAULT_SCALING_RATIO, f"kernel {version[0]}.{version[1]} scaling_ratio (planning value 0.5)"
    if adv_win_scale is None:
        if version is None:
            return None, "kernel version and tcp_adv_win_scale unknown"
        return None, "tcp_adv_win_scale unknown on a kernel before 6.6"
    if adv_win_scale > 0:
        return 1 - 2.0**-adv_win_scale, f"tcp_adv_win_scale={adv_win_scale}"
    return 2.0**adv_win_scale, f"tcp_adv_win_scale={adv_win_scale}"


def socket_buffer_bytes(
    requested_bytes: int | None, autotune_max_bytes: int | None, core_max_bytes: int | None
) -> int | None:
    """The buffer a socket ends up with.

    Without SO_RCVBUF/SO_SNDBUF (iperf3 without -w) autotuning grows it to tcp_[rw]mem[2].
    With iperf3 -w W the kernel doubles min(W, [rw]mem_max) and autotuning stops: a silent
    cap that seed 004 ran into.
    """
    if requested_bytes is not None:
        if core_max_bytes is None:
            return None
        return 2 * min(requested_bytes, core_max_bytes)
    return autotune_max_bytes


def link_ceiling(link_rate_bps: float | None, mss_bytes: int | None, mtu_bytes: int | None) -> Term:
    """Goodput of a saturated Ethernet link: the payload share of each frame on the wire."""
    if not link_rate_bps or link_rate_bps <= 0:
        return Term.unknown("link speed unknown")
    if not mtu_bytes or mtu_bytes <= 0:
        return Term.unknown("MTU unknown")
    mss = mss_bytes if mss_bytes and mss_bytes > 0 else mtu_bytes - 52  # IPv4 + TCP with timestamps
    return Term(link_rate_bps * mss / (mtu_bytes + ETHERNET_OVERHEAD_BYTES))


def window_ceiling(
    streams: int,
    window_fraction: float | None,
    buffer_bytes: int | None,
    rtt_s: float | None,
    what: str,
    max_window_bytes: int = MAX_WINDOW_BYTES,
) -> Term:
    """N x 8 x f x B / rtt: the rate a buffer-limited window sustains over one RTT."""
    if streams < 1:
        return Term.unknown("no streams")
    if buffer_bytes is None or buffer_bytes <= 0:
        return Term.unknown(f"{what} buffer size unknown")
    if window_fraction is None:
        return Term.unknown(f"{what} window fraction unknown")
    if rtt_s is None or rtt_s <= 0:
        return Term.unknown("RTT unknown or zero")
    window_bytes = min(window_fraction * buffer_bytes, max_window_bytes)
    return Term(streams * 8 * window_bytes / rtt_s)


def is_bbr(congestion_control: str | None) -> bool:
    """BBR (any version): it paces at its bandwidth estimate and does not back off on loss."""
    return bool(congestion_control) and str(congestion_control).lower().startswith("bbr")


def loss_ceiling(
    streams: int, mss_bytes: int | None, rtt_s: float | None, loss_rate: float | None, congestion_control: str | None
) -> Term:
    """Mathis for Reno-like senders, max(Mathis, CUBIC) for CUBIC, none for BBR."""
    if not congestion_control:
        return Term.unknown("the sender's congestion control is unknown (BBR has no loss ceiling)")
    algorithm = congestion_control.lower()
    if is_bbr(algorithm):
        return Term.unknown("BBR does not back off on loss below about 2%: no loss ceiling")
    if streams < 1:
        return Term.unknown("no streams")
    if not mss_bytes or mss_bytes <= 0:
        return Term.unknown("MSS unknown")
    if rtt_s is None or rtt_s <= 0:
        return Term.unknown("RTT unknown or zero")
    if loss_rate is None:
        return Term.unknown("loss not measured")
    if loss_rate <= 0:
        return Term.unknown("no loss measured: the loss ceiling has no finite bound")
    if loss_rate >= 1:
        return Term(0.0, "every packet lost")
    mathis_bps = streams * 8 * mss_bytes / rtt_s * MATHIS_C / math.sqrt(loss_rate)
    if algorithm == "cubic":
        cubic_segments = CUBIC_C * (rtt_s**0.75) / (loss_rate**0.75)
        cubic_bps = streams * 8 * mss_bytes * cubic_segments / rtt_s
        return Term(max(mathis_bps, cubic_bps))
    return Term(mathis_bps)


@dataclass(frozen=True)
class PathCeilings:
    link: Term
    receive_window: Term
    send_buffer: Term
    loss: Term

    def terms(self) -> dict[Limit, Term]:
        return {
            Limit.LINK: self.link,
            Limit.RECEIVE_WINDOW: self.receive_window,
            Limit.SEND_BUFFER: self.send_buffer,
            Limit.LOSS: self.loss,
        }

    @property
    def limit(self) -> Limit:
        known = {limit: term.rate_bps for limit, term in self.terms().items() if term.rate_bps is not None}
        if not known:
            return Limit.UNKNOWN
        return min(known, key=lambda limit: known[limit])

    @property
    def ceiling_bps(self) -> float | None:
        limit = self.limit
        return None if limit is Limit.UNKNOWN else self.terms()[limit].rate_bps


def slow_start_rounds(bdp_bytes: float, mss_bytes: int) -> int:
    """RTTs that slow start needs from an initial window of 10 segments to the BDP."""
    if bdp_bytes <= 0 or mss_bytes <= 0:
        return 0
    return max(0, math.ceil(math.log2(bdp_bytes / (INITIAL_WINDOW_SEGMENTS * mss_bytes))))


def buffer_for_rate_bytes(rate_bps: float, rtt_s: float, window_fraction: float) -> int:
    """The socket buffer whose window sustains rate_bps over rtt_s (what to set tcp_rmem[2] to)."""
    if rate_bps <= 0 or rtt_s <= 0 or not 0 < window_fraction <= 1:
        raise ValueError("rate, RTT and window fraction must be positive")
    return math.ceil(rate_bps * rtt_s / 8 / window_fraction)
