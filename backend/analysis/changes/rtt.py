"""RTT shifts: a two-sided CUSUM of robust z-scores over one window statistic.

Pure. The windows come from analysis.changes.windows (or the service's SQL); min_ms follows
the path (a route or its propagation delay), p50_ms and p90_ms follow queueing.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from analysis.changes.episodes import MAD_TO_SIGMA, Direction, Episode, Metric, iso, require_positive
from analysis.changes.windows import RttWindow

# RTT z-scores: a floor on the scale so a flat path does not turn 10 us into z = infinity.
# The floor follows the RTT only a little: at 0.5 % a 90 ms path could not show a 1.5 ms step.
RTT_SCALE_FLOOR_MS = 0.05
RTT_SCALE_FLOOR_FRACTION = 0.001
RTT_Z_CLIP = 4.0
# The CUSUM's allowance (k) and decision threshold (h), in robust sigmas.
RTT_CUSUM_K = 0.5
RTT_CUSUM_H = 8.0
# Windows back within the minimum effect that clear an RTT episode (hysteresis).
RTT_CLEAR_WINDOWS = 3

RttStatistic = Literal["min_ms", "p50_ms", "p90_ms"]

# q90 - q10 of normal data is 2.563 sigma.
INTERDECILE_TO_SIGMA = 2.563


def rtt_scale(pool: RollingRobust, median_ms: float) -> float:
    """The baseline's spread in ms: 1.4826 x MAD, or the interdecile range in sigmas where that
    is wider. Pings hashed onto ECMP members a sweep could not tell apart leave a mixture whose
    middle half is tight and whose tenth either side is not; the MAD alone would call each
    window from those tails a 4-sigma event."""
    spread = max(MAD_TO_SIGMA * pool.mad(), (pool.quantile(0.9) - pool.quantile(0.1)) / INTERDECILE_TO_SIGMA)
    return max(spread, RTT_SCALE_FLOOR_MS, RTT_SCALE_FLOOR_FRACTION * abs(median_ms))


class RollingRobust:
    """A time-bounded pool of values with its median and MAD at O(log n) per query.

    Values are kept sorted (bisect), so the median is an index; the MAD is the middle of the
    deviations below and above the median, two sorted sequences whose k-th smallest element is
    found by binary search instead of sorting the deviations each time.
    """

    def __init__(self) -> None:
        self._entries: deque[tuple[float, float]] = deque()  # (time s, value) in time order
        self._sorted: list[float] = []

    def __len__(self) -> int:
        return len(self._sorted)

    def add(self, time_s: float, value: float) -> None:
        self._entries.append((time_s, value))
        bisect.insort(self._sorted, value)

    def _remove(self, value: float) -> None:
        del self._sorted[bisect.bisect_left(self._sorted, value)]

    def evict_before(self, time_s: float) -> None:
        while self._entries and self._entries[0][0] < time_s:
            self._remove(self._entries.popleft()[1])

    def pop_since(self, time_s: float) -> None:
        while self._entries and self._entries[-1][0] >= time_s:
            self._remove(self._entries.pop()[1])

    def median(self) -> float:
        values, n = self._sorted, len(self._sorted)
        middle = n // 2
        return values[middle] if n % 2 else (values[middle - 1] + values[middle]) / 2

    def quantile(self, q: float) -> float:
        """numpy's linear interpolation over the pooled values."""
        values = self._sorted
        position = q * (len(values) - 1)
        low = math.floor(position)
        high = min(low + 1, len(values) - 1)
        return values[low] + (values[high] - values[low]) * (position - low)

    def mad(self) -> float:
        values, n = self._sorted, len(self._sorted)
        center = self.median()
        split = bisect.bisect_left(values, center)  # values[:split] < center <= values[split:]
        below, above = split, n - split

        def kth(k: int) -> float:
            # Deviations below: center - values[split - 1 - i]; above: values[split + j] - center.
            low, high = max(0, k + 1 - above), min(k + 1, below)
            while low < high:
                i = (low + high) // 2
                j = k + 1 - i
                if j > 0 and i < below and center - values[split - 1 - i] < values[split + j - 1] - center:
                    low = i + 1
                else:
                    high = i
            i, j = low, k + 1 - low
            candidates = []
            if i > 0:
                candidates.append(center - values[split - i])
            if j > 0:
                candidates.append(values[split + j - 1] - center)
            return max(candidates)

        middle = n // 2
        return kth(middle) if n % 2 else (kth(middle - 1) + kth(middle)) / 2


# --- two-sided CUSUM ------------------------------------------------------------------------


@dataclass
class _CusumOpen:
    started: int
    detected: int
    side: Direction
    median_ms: float
    scale_ms: float
    min_effect_ms: float
    baseline_windows: int
    cusum: float
    step: int  # the pinned start of the step, before `started` is widened to min_windows
    recovered: list[int] = field(default_factory=list)


def windows_to_decide(h: float = RTT_CUSUM_H, k: float = RTT_CUSUM_K) -> int:
    """The fewest windows a shift takes to push a sum past h: z is clipped at RTT_Z_CLIP, so each
    window adds at most RTT_Z_CLIP - k (3 with the defaults)."""
    return max(1, math.ceil(h / (RTT_Z_CLIP - k))) if k < RTT_Z_CLIP else 1


def rtt_cusum(
    windows: Sequence[RttWindow],
    *,
    baseline_s: float = 86400,
    k: float = RTT_CUSUM_K,
    h: float = RTT_CUSUM_H,
    min_shift_ms: float = 0.5,
    min_shift_scales: float = 2.0,
    min_baseline_windows: int = 6,
    statistic: RttStatistic = "min_ms",
) -> list[Episode]:
    """Lasting RTT shifts, up or down, in one window statistic: a two-sided CUSUM of robust z-scores.

    Each window's statistic (min_ms: the path; p50_ms/p90_ms: queueing) is standardized against
    the median and scale of the windows of the preceding baseline_s, scale = max(1.4826 x MAD,
    interdecile range / 2.563, 0.05 ms, 0.1% of the median; see rtt_scale) so a dead-flat lab
    path does not give infinite z; z is winsorized at +/-4. S+ = max(0, S+ + z - k),
    S- = max(0, S- - z - k). When a side exceeds h, the change start is estimated within the
    windows since that side last was 0 (see _shift_start: the same sum in ms against the
    midpoint of the old and new levels), and an
    episode opens when the level since then (median of those windows) differs from the baseline
    median by at least max(min_shift_ms, min_shift_scales x scale); `started_at` is that
    start. When the effect is too small the side restarts from 0 (signal dismissed), so a
    lasting offset below the minimum effect or skewed noise cannot keep the sum armed.

    Windows inside an episode (from `started_at`) never enter the baseline, which is frozen while
    the episode is open; it clears when the statistic is back within the minimum effect for 3
    consecutive windows, after which the sums restart from 0. Windows whose statistic is None
    (every probe lost) are skipped: loss is loss_rule's. With fewer than min_baseline_windows
    baseline windows there is no decision. Magnitude = current - baseline in ms, current being
    the median of the step's windows so far. An RTT that stays shifted (a new route) keeps its
    episode open: accepting a new normal is the caller's.
    """
    if statistic not in ("min_ms", "p50_ms", "p90_ms"):
        raise ValueError(f"unknown statistic {statistic!r}")
    require_positive("baseline_s", baseline_s)
    require_positive("h", h)
    ordered = sorted(windows, key=lambda w: w.start)
    times: list[datetime] = []
    values: list[float] = []
    for w in ordered:
        value = getattr(w, statistic)
        if value is not None and math.isfinite(value):
            times.append(w.start)
            values.append(value)
    pool = RollingRobust()
    episodes: list[Episode] = []
    s_up = s_down = 0.0
    start_up = start_down = 0
    current: _CusumOpen | None = None
    z_scores = [0.0] * len(values)
    min_windows = windows_to_decide(h, k)
    for i, value in enumerate(values):
        time_s = times[i].timestamp()
        if current is not None:
            if abs(value - current.median_ms) < current.min_effect_ms:
                current.recovered.append(i)
            else:
                current.recovered.clear()
            if len(current.recovered) >= RTT_CLEAR_WINDOWS:
                episodes.append(_cusum_episode(times, values, current, statistic, k, h, cleared=True))
                pool.evict_before(time_s - baseline_s)
                for index in current.recovered:
                    pool.add(times[index].timestamp(), values[index])
                current = None
                s_up = s_down = 0.0
                start_up = start_down = i + 1
            continue
        pool.evict_before(time_s - baseline_s)
        if len(pool) < min_baseline_windows:
            start_up = start_down = i + 1
            pool.add(time_s, value)
            continue
        median_ms = pool.median()
        scale_ms = rtt_scale(pool, median_ms)
        # The minimum effect follows the path's noise, not its RTT: a 1.5 ms step on a quiet
        # 90 ms path is a new route, 2 ms of jitter on a noisy 20 ms path is not.
        min_effect_ms = max(min_shift_ms, min_shift_scales * scale_ms)
        z = min(max((value - median_ms) / scale_ms, -RTT_Z_CLIP), RTT_Z_CLIP)
        s_up = max(0.0, s_up + z - k)
        s_down = max(0.0, s_down - z - k)
        if s_up == 0:
            start_up = i + 1
        if s_down == 0:
            start_down = i + 1
        z_scores[i] = z
        opened: _CusumOpen | None = None
        for side in (Direction.UP, Direction.DOWN):
            total, first = (s_up, start_up) if side is Direction.UP else (s_down, start_down)
            if total <= h:
                continue
            sign = 1.0 if side is Direction.UP else -1.0
            step = _shift_start(values, first, i, sign, median_ms, min_effect_ms, min_windows)
            # No fewer windows than the sum needs to pass h at the z clip: one busy window after
            # a few others must not become an episode of its own.
            started = min(step, i + 1 - min_windows)
            level = statistics.median(values[started : i + 1])
            if sign * (level - median_ms) >= min_effect_ms:
                opened = _CusumOpen(started, i, side, median_ms, scale_ms, min_effect_ms, len(pool), total, step)
                break
            # Evidence of a shift smaller than the minimum effect: dismiss it and restart that
            # side, so neither a small lasting offset nor skewed noise keeps the sum armed. A
            # step fewer than min_windows old that windows of noise before it diluted keeps its
            # own windows (their sum stays below h, so they alone never reopen it).
            rearmed, rearmed_from = 0.0, i + 1
            if first < step and i + 1 - step < min_windows:
                rearmed_from = step
                for index in range(step, i + 1):
                    rearmed = max(0.0, rearmed + sign * z_scores[index] - k)
                    if rearmed == 0:
                        rearmed_from = index + 1
            if side is Direction.UP:
                s_up, start_up = rearmed, rearmed_from
            else:
                s_down, start_down = rearmed, rearmed_from
        pool.add(time_s, value)
        if opened is not None:
            pool.pop_since(times[opened.started].timestamp())
            current = opened
    if current is not None:
        episodes.append(_cusum_episode(times, values, current, statistic, k, h, cleared=False))
    return episodes


def _shift_start(
    values: list[float], first: int, last: int, sign: float, median_ms: float, min_effect_ms: float, recent: int
) -> int:
    """The window from which on the windows sit nearer the new level than the baseline, searched
    from first to last.

    With the detector's k = 0.5, noise a little above the median keeps a sum positive for a
    few windows before a step, and "last at 0" starts the episode early (and dilutes its
    level). On a quiet lab path one scale is 0.05 ms, so a pre-step window 0.1 ms high has a
    z of 2 and looks like part of a 10 ms step to any sum in z units. So the sum is re-run in
    milliseconds against the midpoint between the baseline and the level of the newest
    `recent` windows (at least half the minimum effect above the baseline): a window at the new
    level adds half the step, one at the baseline takes half of it away, and each window's
    deviation is clipped at the full step so that one spike cannot pull the start to itself.
    """
    level = statistics.median(values[max(first, last + 1 - recent) : last + 1])
    half = max(sign * (level - median_ms) / 2, min_effect_ms / 2)
    best, best_index, total = -math.inf, last, 0.0
    for index in range(last, first - 1, -1):
        total += min(max(sign * (values[index] - median_ms), -2 * half), 2 * half) - half
        if total > best:
            best, best_index = total, index
    return best_index


def _cusum_episode(
    times: list[datetime],
    values: list[float],
    state: _CusumOpen,
    statistic: str,
    k: float,
    h: float,
    *,
    cleared: bool,
) -> Episode:
    # The level after the step: its windows from the pinned start (a window or two before it
    # may be in `started` when the step passed h quickly) to the newest one not yet back at the
    # baseline, so the magnitude settles on the step's full size as windows arrive.
    last = state.recovered[0] - 1 if state.recovered else len(values) - 1
    current_ms = statistics.median(values[state.step : max(last, state.detected) + 1])
    return Episode(
        metric=Metric.RTT,
        rule="rtt_cusum",
        started_at=times[state.step],
        detected_at=times[state.detected],
        cleared_at=times[state.recovered[0]] if cleared else None,
        direction=state.side,
        baseline=state.median_ms,
        current=current_ms,
        magnitude=current_ms - state.median_ms,
        evidence={
            "statistic": statistic,
            "baseline_median_ms": state.median_ms,
            "baseline_scale_ms": state.scale_ms,
            "baseline_windows": state.baseline_windows,
            "min_effect_ms": state.min_effect_ms,
            "cusum": state.cusum,
            "k": k,
            "h": h,
            "windows_to_detect": state.detected - state.started + 1,
            "clear_confirmed_at": iso(times[state.recovered[-1]]) if cleared else None,
        },
    )
