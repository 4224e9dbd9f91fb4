"""What a throughput run's per-interval TCP_INFO says beyond iperf3's end summary.

Pure: the steady rate (the trimmed mean of the per-second sums after the omitted seconds),
retransmits, windows smaller than cwnd, cwnd collapses and whether slow start had finished
(tcp-ceilings.md section 5). The diagnosis reads them next to the ceilings.

The per-second rate's variation and the slow-start test are robust: one noisy second (a
scheduler hiccup, a burst of cross traffic) must not turn a flat bottleneck into "below
every ceiling" on one run in four, so identical runs get the same label.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IntervalRow:
    """One iperf3 interval of one stream, as stored (TCP_INFO fields None when not reported)."""

    stream: int
    start_s: float
    end_s: float
    omitted: bool
    sender: bool
    bytes: int
    bits_per_s: float
    retransmits: int | None = None
    snd_cwnd_bytes: int | None = None
    snd_wnd_bytes: int | None = None
    rtt_us: int | None = None
    pmtu: int | None = None


def per_second_rows(rates: Sequence[float], stream: int = 5, **tcp_info: int | None) -> list[IntervalRow]:
    """One sender row a second at each rate, with the same TCP_INFO fields in every row: the
    shape the benches and tests build runs from."""
    return [
        IntervalRow(
            stream=stream,
            start_s=second,
            end_s=second + 1,
            omitted=False,
            sender=True,
            bytes=int(rate / 8),
            bits_per_s=rate,
            **tcp_info,
        )
        for second, rate in enumerate(rates)
    ]


@dataclass(frozen=True)
class IntervalStats:
    """What the intervals say beyond the end summary."""

    steady_rate_bps: float | None
    intervals: int
    window_limited_share: float | None  # stream-intervals with snd_wnd < snd_cwnd
    retransmits: int | None
    retransmit_rate: float | None  # retransmitted segments per segment sent
    # In the omitted seconds (slow start): a flow that lost there climbs back a segment per RTT
    # and can spend the measured seconds far below its ceilings without losing again.
    omitted_retransmits: int | None
    retransmit_bursts: int  # intervals holding more than half of all retransmits / 4 (spiky loss)
    cwnd_collapses: int  # drops of snd_cwnd by half or more from one interval to the next
    rate_cv: float | None  # coefficient of variation of the per-second rate, outlying seconds trimmed
    not_converged: bool
    pmtu_bytes: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "steady_rate_bps": self.steady_rate_bps,
            "intervals": self.intervals,
            "window_limited_share": self.window_limited_share,
            "retransmits": self.retransmits,
            "retransmit_rate": self.retransmit_rate,
            "omitted_retransmits": self.omitted_retransmits,
            "retransmit_bursts": self.retransmit_bursts,
            "cwnd_collapses": self.cwnd_collapses,
            "rate_cv": self.rate_cv,
            "not_converged": self.not_converged,
            "pmtu_bytes": self.pmtu_bytes,
        }


def interval_stats(rows: Sequence[IntervalRow], mss_bytes: int | None) -> IntervalStats:
    """Steady rate (trimmed mean of the per-second sums after the omitted seconds) and TCP
    evidence.

    tcp-ceilings.md section 5 takes the median of non-omitted intervals as the steady rate;
    the trimmed mean is as robust to one odd second and, unlike the median, does not snap to
    one of the levels iperf3's write-sized counting gives (trimmed_mean). A last third above
    1.1x the first third means slow start had not finished.
    """
    measured = [row for row in rows if not row.omitted and row.end_s > row.start_s]
    # A reverse run carries both ends' intervals (the client's as receiver, the server's as
    # sender, with its TCP_INFO): the rate is what arrived, counted once.
    delivered = [row for row in measured if not row.sender] or measured
    per_second: dict[float, float] = defaultdict(float)
    for row in delivered:
        per_second[round(row.end_s, 3)] += row.bits_per_s
    rates = [per_second[key] for key in sorted(per_second)]
    steady = trimmed_mean(rates)
    sender_rows = [row for row in measured if row.sender]
    with_windows = [row for row in sender_rows if row.snd_wnd_bytes and row.snd_cwnd_bytes]
    window_limited = (
        sum(1 for row in with_windows if (row.snd_wnd_bytes or 0) < (row.snd_cwnd_bytes or 0)) / len(with_windows)
        if with_windows
        else None
    )
    retransmit_values = [row.retransmits for row in sender_rows if row.retransmits is not None]
    retransmits = sum(retransmit_values) if retransmit_values else None
    omitted_values = [row.retransmits for row in rows if row.omitted and row.sender and row.retransmits is not None]
    sent_bytes = sum(row.bytes for row in sender_rows)
    retransmit_rate = (
        retransmits / (sent_bytes / mss_bytes) if retransmits is not None and mss_bytes and sent_bytes > 0 else None
    )
    bursts = 0
    if retransmits:
        bursts = sum(1 for value in retransmit_values if value > retransmits / 4)
    collapses = 0
    by_stream: dict[int, list[IntervalRow]] = defaultdict(list)
    for row in sender_rows:
        by_stream[row.stream].append(row)
    for stream_rows in by_stream.values():
        stream_rows.sort(key=lambda row: row.end_s)
        for before, after in itertools.pairwise(stream_rows):
            if before.snd_cwnd_bytes and after.snd_cwnd_bytes and after.snd_cwnd_bytes <= before.snd_cwnd_bytes / 2:
                collapses += 1
    pmtus = [row.pmtu for row in rows if row.pmtu]
    return IntervalStats(
        steady_rate_bps=steady,
        intervals=len(rates),
        window_limited_share=window_limited,
        retransmits=retransmits,
        retransmit_rate=retransmit_rate,
        omitted_retransmits=sum(omitted_values) if omitted_values else None,
        retransmit_bursts=bursts,
        cwnd_collapses=collapses,
        rate_cv=trimmed_cv(rates),
        not_converged=still_rising(rates),
        pmtu_bytes=max(pmtus) if pmtus else None,
    )


# Seconds left out of the variation: the tenth farthest from the median, at least one once
# there are this many (with fewer, one second is too large a share of the run to ignore).
TRIM_SHARE = 0.1
TRIM_MIN_SECONDS = 5
# Slow start had not finished when the last third's median exceeds the first third's by this.
RISING_FACTOR = 1.1


def _kept(rates: Sequence[float]) -> list[float]:
    """The per-second rates without the tenth farthest from their median (at least one from
    TRIM_MIN_SECONDS on)."""
    median = statistics.median(rates)
    trim = max(1, int(len(rates) * TRIM_SHARE)) if len(rates) >= TRIM_MIN_SECONDS else 0
    return sorted(rates, key=lambda rate: abs(rate - median))[: len(rates) - trim]


def trimmed_mean(rates: Sequence[float]) -> float | None:
    """The steady rate: the mean of the per-second rates kept by _kept.

    Not their median: iperf3 counts a sender's bytes as its writes complete, so a window-held
    flow's seconds alternate between a few levels (42 and 52 Mbit/s for a 47 Mbit/s flow); the
    median picks one level, 10 % off, where the trimmed mean averages them and still drops
    the one stalled or bursting second.
    """
    return statistics.fmean(_kept(rates)) if rates else None


def trimmed_cv(rates: Sequence[float]) -> float | None:
    """Coefficient of variation of the per-second rates without the seconds farthest from
    their median (a tenth, at least one from TRIM_MIN_SECONDS on).

    A ramp or a sawtooth varies in most of its seconds and stays far from flat; a flat run with
    one noisy second becomes flat again. Trimming (rather than the MAD alone) keeps a run
    that is flat in just over half its seconds and low in the rest from passing as flat.
    """
    if len(rates) < 2:
        return None
    kept = _kept(rates)
    mean = statistics.fmean(kept)
    return statistics.pstdev(kept) / mean if mean > 0 else None


def still_rising(rates: Sequence[float]) -> bool:
    """Slow start had not finished: the last third's median above the first third's by 10%.

    Medians, not means: one slow second in the first third of a flat run is noise, not a ramp.
    """
    if len(rates) < 3:
        return False
    third = len(rates) // 3
    first, last = statistics.median(rates[:third]), statistics.median(rates[-third:])
    return first > 0 and last > RISING_FACTOR * first
