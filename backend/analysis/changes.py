"""Regression detectors: throughput drops, throughput steps, RTT shifts, loss steps, route changes.

Pure functions over plain values (the methods and parameters of shared reference
probes-and-detection.md section 4), no Django. Every detector walks a whole time-ordered
series and returns the episodes it finds in it, so recomputing over the same data gives the
same answer: the caller stores each episode as a finding keyed by path, metric and
`started_at`, idempotently, and a later recomputation over a longer series finds the same
episodes again (with `cleared_at` filled in once the path has recovered).

Inputs are sorted by time here (a stable sort, so equal times keep their order); values that
are not finite are skipped. What an episode's times mean:

- `started_at`: the first point (test, window, trace run) of the changed regime, as the rule
  estimates it;
- `detected_at`: the point whose data confirmed it (for windows: the window's start; its data
  is complete at start + window length);
- `cleared_at`: the first point of the run of points that confirmed the recovery, None while
  the episode is still open at the end of the series.

Flood control that belongs to one detector lives here (hysteresis, confirmation by N points,
minimum effect, one open episode per metric and rule); grouping of episodes across paths is
the caller's.
"""

from __future__ import annotations

import bisect
import math
import statistics
import warnings
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special, stats

# 1.4826 x MAD estimates the standard deviation of normal data.
MAD_TO_SIGMA = 1.4826
# Winsorizing band of the throughput rules: trailing median +/- 4 robust sigmas over 30 points.
WINSOR_K = 4.0
WINSOR_N = 30
# Fewer trailing points than this and a point is taken as it is: a median of 2 says nothing.
WINSOR_MIN_N = 5
# A dead-flat lab path has MAD 0; without a floor every later point would be clipped to the
# median and the history could never learn the path's real spread. 0.01 in ln = 1%.
WINSOR_SCALE_FLOOR_LN = 0.01
# RTT z-scores: a floor on the scale so a flat path does not turn 10 us into z = infinity.
RTT_SCALE_FLOOR_MS = 0.05
RTT_SCALE_FLOOR_FRACTION = 0.005
RTT_Z_CLIP = 4.0
# Windows back within the minimum effect that clear an RTT episode (hysteresis).
RTT_CLEAR_WINDOWS = 3
# Loss baseline prior: (lost + 0.5) / (sent + 1), so a loss-free day is not a zero rate.
LOSS_PRIOR_LOST = 0.5
LOSS_PRIOR_SENT = 1.0

RttStatistic = Literal["min_ms", "p50_ms", "p90_ms"]


class Direction(StrEnum):
    UP = "up"
    DOWN = "down"


class Metric(StrEnum):
    THROUGHPUT = "throughput"
    RTT = "rtt"
    LOSS = "loss"
    ROUTE = "route"


@dataclass(frozen=True)
class Point:
    """One measurement: a throughput test's rate in bit/s (or any value a rule documents)."""

    time: datetime
    value: float


@dataclass(frozen=True)
class Episode:
    """A change a rule found: when it started, when it was confirmed and when it cleared."""

    metric: Metric
    rule: str  # "throughput_fast", "throughput_slow", "rtt_cusum", "loss", "route"
    started_at: datetime  # first point that belongs to the changed regime
    detected_at: datetime  # the point at which the rule confirmed it
    cleared_at: datetime | None  # None while still open at the end of the series
    direction: Direction
    baseline: float  # in the metric's unit (bit/s, ms, fraction, fingerprint count)
    current: float  # level after the change (median of the confirming points)
    # Relative change for throughput ((current-baseline)/baseline), ms for RTT, percentage
    # points for loss, count of new fingerprints for routes.
    magnitude: float
    evidence: dict[str, object] = field(default_factory=dict)  # JSON-serializable numbers it rests on


@dataclass(frozen=True)
class RttWindow:
    """Probe results of one aligned window; the RTT statistics are None when every probe was lost."""

    start: datetime
    end: datetime
    sent: int
    lost: int
    min_ms: float | None
    p50_ms: float | None
    p90_ms: float | None

    @property
    def loss_fraction(self) -> float | None:
        return self.lost / self.sent if self.sent > 0 else None


# --- shared helpers ---------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _mad(values: Sequence[float], center: float) -> float:
    return statistics.median([abs(value - center) for value in values])


def _winsorize(value: float, trailing: Sequence[float]) -> float:
    """Clip value to median +/- 4 x 1.4826 x MAD of the trailing points (scale floored)."""
    if len(trailing) < WINSOR_MIN_N:
        return value
    center = statistics.median(trailing)
    half_width = WINSOR_K * max(MAD_TO_SIGMA * _mad(trailing, center), WINSOR_SCALE_FLOOR_LN)
    return min(max(value, center - half_width), center + half_width)


@dataclass(frozen=True)
class _LnSeries:
    """A throughput series on ln(rate): the usable points and the count of skipped ones before each."""

    times: list[datetime]
    ln_rates: list[float]
    nonpositive_before: list[int]  # skipped zero/negative rates before usable point i (cumulative)
    nonfinite_before: list[int]

    def skipped(self, first: int, last: int) -> tuple[int, int]:
        """Skipped (nonpositive, nonfinite) points between usable points first and last."""
        return (
            self.nonpositive_before[last] - self.nonpositive_before[first],
            self.nonfinite_before[last] - self.nonfinite_before[first],
        )


def _ln_series(points: Iterable[Point]) -> _LnSeries:
    times: list[datetime] = []
    ln_rates: list[float] = []
    nonpositive_before: list[int] = []
    nonfinite_before: list[int] = []
    nonpositive = nonfinite = 0
    for point in sorted(points, key=lambda p: p.time):
        if not math.isfinite(point.value):
            nonfinite += 1
        elif point.value <= 0:
            nonpositive += 1  # a failed test reported as 0 bit/s: ln is undefined, and it is not a rate
        else:
            times.append(point.time)
            ln_rates.append(math.log(point.value))
            nonpositive_before.append(nonpositive)
            nonfinite_before.append(nonfinite)
    return _LnSeries(times, ln_rates, nonpositive_before, nonfinite_before)


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")


# --- throughput: fast rule --------------------------------------------------------------------


@dataclass
class _FastOpen:
    started: int
    detected: int
    baseline_first: int
    baseline_n: int
    median_ln: float
    sigma_ln: float
    open_threshold_ln: float
    clear_threshold_ln: float
    recovered: list[int] = field(default_factory=list)


def throughput_fast_rule(
    points: Sequence[Point],
    *,
    baseline_n: int = 30,
    confirm_n: int = 3,
    min_baseline: int = 10,
    min_drop_ln: float = math.log(1 / 0.9),
) -> list[Episode]:
    """Throughput drops that last confirm_n tests: the fast rule of section 4.

    Works on ln(rate in bit/s). Each point is winsorized at the trailing median +/- 4 x 1.4826
    x MAD of the previous up to 30 points of the normal regime (points inside an episode never
    become baseline). An episode opens when the last confirm_n points are all below
    median(baseline) - max(3 sigma_r, min_drop_ln), where the baseline is the up to baseline_n
    normal points before those confirm_n and sigma_r = 1.4826 x MAD of the baseline; with fewer
    than min_baseline baseline points there is no decision. The confirming points are compared
    with their raw ln values: winsorized, a 50% drop on a quiet path would be clipped to a few
    percent and never cross the threshold.

    `started_at` is the first confirming point, moved back over directly preceding points that
    were already below the open threshold (a drop confirmed late still starts where it began).
    The baseline is then frozen; the episode clears after confirm_n consecutive points above
    median - 1.5 sigma_r (`cleared_at` is the first of them) and the rule carries on, so there
    is at most one open episode. Only drops (DOWN) are detected: the reference describes drops,
    and a faster path is not a regression. Zero, negative and non-finite rates are skipped and
    counted in the evidence.
    """
    if confirm_n < 1 or baseline_n < 2 or min_baseline < 2:
        raise ValueError("confirm_n must be >= 1, baseline_n and min_baseline >= 2")
    series = _ln_series(points)
    x = series.ln_rates
    episodes: list[Episode] = []
    # (usable index, winsorized ln) of the points of the normal regime, oldest first.
    history: list[tuple[int, float]] = []
    keep = baseline_n + confirm_n + WINSOR_N + 1
    current: _FastOpen | None = None

    def append_normal(index: int) -> None:
        trailing = [value for _, value in history[-WINSOR_N:]]
        history.append((index, _winsorize(x[index], trailing)))
        if len(history) > 4 * keep:
            del history[:-keep]

    for i in range(len(x)):
        if current is not None:
            if x[i] > current.clear_threshold_ln:
                current.recovered.append(i)
            else:
                current.recovered.clear()
            if len(current.recovered) >= confirm_n:
                episodes.append(_fast_episode(series, current, confirm_n, cleared=True))
                for index in current.recovered:
                    append_normal(index)
                current = None
            continue
        append_normal(i)
        # The confirming points are the last confirm_n normal points; they are contiguous
        # because points leave the normal regime only as an open episode's tail.
        if len(history) < confirm_n + min_baseline or history[-confirm_n][0] != i - confirm_n + 1:
            continue
        first = i - confirm_n + 1
        baseline = [value for _, value in history[-(confirm_n + baseline_n) : -confirm_n]]
        median_ln = statistics.median(baseline)
        sigma_ln = MAD_TO_SIGMA * _mad(baseline, median_ln)
        threshold = median_ln - max(3 * sigma_ln, min_drop_ln)
        if not all(x[j] < threshold for j in range(first, i + 1)):
            continue
        started = first
        position = len(history) - confirm_n - 1
        while position >= 0 and history[position][0] == started - 1 and x[started - 1] < threshold:
            started -= 1
            position -= 1
        baseline_first = history[-(confirm_n + len(baseline))][0]
        del history[position + 1 :]
        current = _FastOpen(
            started=started,
            detected=i,
            baseline_first=baseline_first,
            baseline_n=len(baseline),
            median_ln=median_ln,
            sigma_ln=sigma_ln,
            open_threshold_ln=threshold,
            clear_threshold_ln=median_ln - 1.5 * sigma_ln,
        )
    if current is not None:
        episodes.append(_fast_episode(series, current, confirm_n, cleared=False))
    return episodes


def _fast_episode(series: _LnSeries, state: _FastOpen, confirm_n: int, *, cleared: bool) -> Episode:
    x = series.ln_rates
    changed = x[state.started : state.detected + 1]
    baseline_bps = math.exp(state.median_ln)
    current_bps = math.exp(statistics.median(changed))
    nonpositive, nonfinite = series.skipped(state.baseline_first, state.detected)
    cleared_at = series.times[state.recovered[0]] if cleared else None
    return Episode(
        metric=Metric.THROUGHPUT,
        rule="throughput_fast",
        started_at=series.times[state.started],
        detected_at=series.times[state.detected],
        cleared_at=cleared_at,
        direction=Direction.DOWN,
        baseline=baseline_bps,
        current=current_bps,
        magnitude=current_bps / baseline_bps - 1,
        evidence={
            "baseline_points": state.baseline_n,
            "baseline_from": _iso(series.times[state.baseline_first]),
            "baseline_median_bps": baseline_bps,
            "sigma_r_ln": state.sigma_ln,
            "open_threshold_bps": math.exp(state.open_threshold_ln),
            "clear_threshold_bps": math.exp(state.clear_threshold_ln),
            "confirm_n": confirm_n,
            "changed_bps": [math.exp(value) for value in changed],
            "skipped_nonpositive": nonpositive,
            "skipped_nonfinite": nonfinite,
            "clear_confirmed_at": _iso(series.times[state.recovered[-1]]) if cleared else None,
        },
    )


# --- throughput: slow rule (E-divisive means with a t-test) ----------------------------------


def winsorize_outliers(values: npt.NDArray[np.float64], n: int = WINSOR_N) -> npt.NDArray[np.float64]:
    """Values clipped to the trailing band where they are outliers on both sides.

    The band is median +/- 4 x 1.4826 x MAD (floored) of the previous up to n raw values. A
    point is clipped only when it is also that far from the median of the following up to n
    values: an isolated dip is, the first points of a lasting step are not. Clipping those as
    well would hold a large step at the band's edge until the trailing median catches up, and
    move its change point by half a window. Points with fewer than 5 before them, and the last
    point (nothing after it), are left as they are.
    """
    count = len(values)
    out = values.astype(np.float64, copy=True)
    if count <= WINSOR_MIN_N:
        return out
    centers = np.full(count, np.nan)
    half_widths = np.full(count, np.nan)
    for i in range(WINSOR_MIN_N, min(n, count)):
        centers[i] = np.median(values[:i])
        half_widths[i] = MAD_TO_SIGMA * np.median(np.abs(values[:i] - centers[i]))
    windows = np.lib.stride_tricks.sliding_window_view(values, n) if count >= n else None
    if windows is not None and count > n:
        # windows[j] = values[j : j + n]: it precedes value j + n and follows value j - 1.
        centers[n:] = np.median(windows[:-1], axis=1)
        half_widths[n:] = MAD_TO_SIGMA * np.median(np.abs(windows[:-1] - centers[n:, None]), axis=1)
    half_widths = WINSOR_K * np.maximum(half_widths, WINSOR_SCALE_FLOOR_LN)
    following = np.full(count, np.nan)
    full = max(0, count - n)  # values 0 .. full-1 have n values after them
    if windows is not None and full:
        following[:full] = np.median(windows[1 : full + 1], axis=1)
    for i in range(full, count - 1):
        following[i] = np.median(values[i + 1 :])
    with np.errstate(invalid="ignore"):
        outlier = (np.abs(values - centers) > half_widths) & (np.abs(values - following) > half_widths)
    out[outlier] = np.clip(values, centers - half_widths, centers + half_widths)[outlier]
    return out


def energy_statistic(values: npt.NDArray[np.float64], min_segment: int) -> npt.NDArray[np.float64]:
    """E-divisive (alpha = 1) divergence q(s) of every split s of values into [0, s) and [s, n).

    q(s) = n1 n2 / (n1 + n2) x (2 mean|x - y| - mean|x - x'| - mean|y - y'|) over pairs across
    and within the two sides (Matteson and James 2014), as Hunter / Apache Otava use it. Splits
    with a side shorter than min_segment are -inf. O(n^2) through prefix sums of the distance
    matrix, which is nothing at n = 50.
    """
    n = len(values)
    q = np.full(n + 1, -np.inf)
    if n < 2 * min_segment:
        return q
    distances = np.abs(values[:, None] - values[None, :])
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = distances.cumsum(axis=0).cumsum(axis=1)
    s = np.arange(min_segment, n - min_segment + 1)
    n1 = s.astype(np.float64)
    n2 = (n - s).astype(np.float64)
    square = prefix[s, s]
    across = prefix[s, n] - square
    within_left = square / 2
    within_right = (prefix[n, n] - 2 * prefix[s, n] + square) / 2
    divergence = 2 * across / (n1 * n2) - within_left / (n1 * (n1 - 1) / 2) - within_right / (n2 * (n2 - 1) / 2)
    q[s] = n1 * n2 / (n1 + n2) * divergence
    return q


def welch_p(left: npt.NDArray[np.float64], right: npt.NDArray[np.float64]) -> float:
    """Two-sided p-value of Welch's t-test; two constant sides are 0 if they differ, else 1."""
    if len(left) < 2 or len(right) < 2:
        return 1.0
    if float(np.var(left)) == 0.0 and float(np.var(right)) == 0.0:
        return 0.0 if float(np.mean(left)) != float(np.mean(right)) else 1.0
    with warnings.catch_warnings():
        # Nearly constant sides make scipy warn about precision loss; the p-value is still right.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_ind(left, right, equal_var=False)
    p = float(result.pvalue)
    return p if math.isfinite(p) else 1.0


def _welch_p_prefixes(left: npt.NDArray[np.float64], right: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Welch p-values of left against every prefix right[:m], m = 1..len(right) (1.0 where m < 2)."""
    m = np.arange(1, len(right) + 1, dtype=np.float64)
    sums = np.cumsum(right)
    means = sums / m
    squares = np.cumsum(right * right)
    with np.errstate(divide="ignore", invalid="ignore"):
        variances = np.maximum(squares - sums * means, 0.0) / (m - 1)
        left_term = float(np.var(left, ddof=1)) / len(left)
        right_terms = variances / m
        se2 = left_term + right_terms
        t = (means - float(np.mean(left))) / np.sqrt(se2)
        df = se2**2 / (left_term**2 / (len(left) - 1) + right_terms**2 / (m - 1))
        p = 2 * stats.t.sf(np.abs(t), df)
    flat = se2 == 0
    p = np.where(flat, np.where(means != float(np.mean(left)), 0.0, 1.0), p)
    p = np.where(np.isfinite(p), p, 1.0)
    p[m < 2] = 1.0
    return np.asarray(p, dtype=np.float64)


def _relative(left_mean_ln: float, right_mean_ln: float) -> float:
    return math.exp(right_mean_ln - left_mean_ln) - 1


@dataclass(frozen=True)
class _Split:
    start: int  # segment before the change: [start, change)
    change: int
    end: int  # segment after: [change, end)
    p_value: float


def _passes(x: npt.NDArray[np.float64], start: int, change: int, end: int, p_max: float, min_relative: float) -> float:
    """The split's p-value when it passes both tests, else nan."""
    left, right = x[start:change], x[change:end]
    if abs(_relative(float(left.mean()), float(right.mean()))) < min_relative:
        return math.nan
    p = welch_p(left, right)
    return p if p <= p_max else math.nan


def _bisect_window(
    x: npt.NDArray[np.float64], start: int, end: int, p_max: float, min_relative: float, min_segment: int
) -> list[int]:
    """Change points of x[start:end]: binary segmentation, then Otava's pruning pass."""
    found: list[int] = []
    pending = [(start, end)]
    while pending:
        a, b = pending.pop()
        q = energy_statistic(x[a:b], min_segment)
        if not np.isfinite(q).any():
            continue
        split = a + int(np.argmax(q))
        if math.isnan(_passes(x, a, split, b, p_max, min_relative)):
            continue
        found.append(split)
        pending.extend([(a, split), (split, b)])
    found.sort()
    # Each change point is retested against its final neighbours; the weakest failing one goes
    # and the rest are retested, until every remaining one passes (Hunter, ICPE 2023).
    while found:
        bounds = [start, *found, end]
        worst, worst_p = -1, -1.0
        for position in range(1, len(bounds) - 1):
            left, right = x[bounds[position - 1] : bounds[position]], x[bounds[position] : bounds[position + 1]]
            relative = abs(_relative(float(left.mean()), float(right.mean())))
            p = welch_p(left, right) if relative >= min_relative else 1.0
            if (p > p_max or relative < min_relative) and p > worst_p:
                worst, worst_p = position - 1, p
        if worst < 0:
            break
        del found[worst]
    return found


def throughput_slow_rule(
    points: Sequence[Point],
    *,
    window: int = 50,
    p_max: float = 1e-4,
    min_relative: float = 0.05,
    min_segment: int = 5,
) -> list[Episode]:
    """Lasting throughput steps, up or down: E-divisive means with a t-test (Hunter / Apache Otava).

    Works on ln(rate in bit/s), winsorized at the trailing median +/- 4 x 1.4826 x MAD of the
    previous 30 raw points where a point is an outlier against the following 30 as well (see
    winsorize_outliers), so occasional deep dips neither inflate the t-test's variance nor drag
    a side's mean; a relative change is then a difference of means (ratio of geometric means).
    The batch view is fine here: the slow rule judges segments of whole windows anyway.

    Walks the series in windows of `window` points that start at the current regime's start:
    within a window, binary segmentation splits at the maximum of the E-divisive
    statistic and keeps a split when Welch's t-test on the two sides gives p <= p_max and the
    relative change |exp(mean_after - mean_before) - 1| >= min_relative (each side at least
    min_segment points); the change points found are then retested against their final
    neighbours and the weakest failing one dropped until all pass. The earliest remaining change
    point is accepted and the next window starts there (re-baselining); without one, the
    window slides by half its length.

    Episode fields: `started_at` is the first point after the split; `detected_at` is the
    earliest point at which the before-segment against the after-segment up to that point
    passes both tests (cheap to compute, but the window the rule ran on when it found the split
    may have ended later); `baseline` and `current` are geometric means of the two segments in
    bit/s. A change point whose new level is within min_relative of the baseline of an open
    episode closes that episode (and any opened after it) at its first point and is not an
    episode itself; every other change point is one episode, direction from its sign.
    """
    if window < 2 * min_segment or min_segment < 2:
        raise ValueError("window must hold two segments of at least min_segment >= 2 points")
    series = _ln_series(points)
    raw = np.array(series.ln_rates, dtype=np.float64)
    x = winsorize_outliers(raw)
    n = len(x)
    splits: list[_Split] = []
    start = 0
    step = max(1, window // 2)
    while n - start >= 2 * min_segment:
        end = min(start + window, n)
        found = _bisect_window(x, start, end, p_max, min_relative, min_segment)
        if found:
            after_end = found[1] if len(found) > 1 else end
            splits.append(_Split(start, found[0], after_end, welch_p(x[start : found[0]], x[found[0] : after_end])))
            start = found[0]
            continue
        if end == n:
            break
        start = min(start + step, n - window)
    return _slow_episodes(series, raw, x, splits, p_max, min_relative)


def _slow_episodes(
    series: _LnSeries,
    raw: npt.NDArray[np.float64],
    x: npt.NDArray[np.float64],
    splits: list[_Split],
    p_max: float,
    min_relative: float,
) -> list[Episode]:
    closed: list[Episode] = []
    open_stack: list[tuple[Episode, float]] = []  # (episode, its baseline mean ln)
    for split in splits:
        left, right = x[split.start : split.change], x[split.change : split.end]
        before_ln, after_ln = float(left.mean()), float(right.mean())
        returned_to = next(
            (
                position
                for position, (_, baseline_ln) in enumerate(open_stack)
                if abs(_relative(baseline_ln, after_ln)) < min_relative
            ),
            None,
        )
        if returned_to is not None:
            for episode, _ in open_stack[returned_to:]:
                evidence = {**episode.evidence, "cleared_by_change_at": _iso(series.times[split.change])}
                closed.append(replace(episode, cleared_at=series.times[split.change], evidence=evidence))
            del open_stack[returned_to:]
            continue
        prefix_p = _welch_p_prefixes(left, right)
        relative_prefix = np.exp(np.cumsum(right) / np.arange(1, len(right) + 1) - before_ln) - 1
        passing = np.flatnonzero((prefix_p <= p_max) & (np.abs(relative_prefix) >= min_relative))
        detected = split.change + (int(passing[0]) if len(passing) else len(right) - 1)
        baseline_bps, current_bps = math.exp(before_ln), math.exp(after_ln)
        nonpositive, nonfinite = series.skipped(split.start, split.end - 1)
        episode = Episode(
            metric=Metric.THROUGHPUT,
            rule="throughput_slow",
            started_at=series.times[split.change],
            detected_at=series.times[detected],
            cleared_at=None,
            direction=Direction.UP if after_ln > before_ln else Direction.DOWN,
            baseline=baseline_bps,
            current=current_bps,
            magnitude=current_bps / baseline_bps - 1,
            evidence={
                "before_from": _iso(series.times[split.start]),
                "before_points": len(left),
                "after_to": _iso(series.times[split.end - 1]),
                "after_points": len(right),
                "p_value": split.p_value,
                "before_median_bps": math.exp(float(np.median(raw[split.start : split.change]))),
                "after_median_bps": math.exp(float(np.median(raw[split.change : split.end]))),
                "skipped_nonpositive": nonpositive,
                "skipped_nonfinite": nonfinite,
            },
        )
        open_stack.append((episode, before_ln))
    episodes = closed + [episode for episode, _ in open_stack]
    return sorted(episodes, key=lambda episode: episode.started_at)


# --- RTT windows --------------------------------------------------------------------------------


def rtt_windows(samples: Sequence[tuple[datetime, float | None]], *, window_s: int = 300) -> list[RttWindow]:
    """Probe samples (time, rtt in ms; None = lost) grouped into windows aligned to epoch multiples.

    Windows without samples are left out. A NaN, infinite or negative RTT is a broken sample,
    not a lost one, and is skipped. The percentiles are numpy's linear interpolation.
    """
    _positive("window_s", window_s)
    grouped: dict[int, tuple[datetime, list[float], int]] = {}
    for moment, rtt_ms in samples:
        if rtt_ms is not None and not (math.isfinite(rtt_ms) and rtt_ms >= 0):
            continue
        slot = math.floor(moment.timestamp() / window_s)
        _, received, lost = grouped.get(slot, (moment, [], 0))
        if rtt_ms is None:
            lost += 1
        else:
            received.append(rtt_ms)
        grouped[slot] = (moment, received, lost)
    windows: list[RttWindow] = []
    for slot in sorted(grouped):
        moment, received, lost = grouped[slot]
        start = datetime.fromtimestamp(slot * window_s, tz=moment.tzinfo)
        end = datetime.fromtimestamp((slot + 1) * window_s, tz=moment.tzinfo)
        if received:
            values = np.asarray(received, dtype=np.float64)
            p50, p90 = (float(v) for v in np.percentile(values, [50, 90]))
            windows.append(RttWindow(start, end, len(received) + lost, lost, float(values.min()), p50, p90))
        else:
            windows.append(RttWindow(start, end, lost, lost, None, None, None))
    return windows


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


# --- RTT: two-sided CUSUM ---------------------------------------------------------------------


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
    recovered: list[int] = field(default_factory=list)


def rtt_cusum(
    windows: Sequence[RttWindow],
    *,
    baseline_s: float = 86400,
    k: float = 0.5,
    h: float = 8.0,
    min_shift_ms: float = 0.5,
    min_shift_fraction: float = 0.02,
    min_baseline_windows: int = 6,
    statistic: RttStatistic = "min_ms",
) -> list[Episode]:
    """Lasting RTT shifts, up or down, in one window statistic: a two-sided CUSUM of robust z-scores.

    Each window's statistic (min_ms: the path; p50_ms/p90_ms: queueing) is standardized against
    the median and scale of the windows of the preceding baseline_s, scale = max(1.4826 x MAD,
    0.05 ms, 0.5% of the median) so a dead-flat lab path does not give infinite z; z is
    winsorized at +/-4. S+ = max(0, S+ + z - k), S- = max(0, S- - z - k). When a side exceeds
    h, the change start is estimated within the windows since that side last was 0 (see
    _shift_start: the same sum with a reference value of half the minimum effect), and an
    episode opens when the level since then (median of those windows) differs from the baseline
    median by at least max(min_shift_ms, min_shift_fraction x median); `started_at` is that
    start. When the effect is too small the side restarts from 0 (signal dismissed), so a
    lasting offset below the minimum effect or skewed noise cannot keep the sum armed.

    Windows inside an episode (from `started_at`) never enter the baseline, which is frozen while
    the episode is open; it clears when the statistic is back within the minimum effect for 3
    consecutive windows, after which the sums restart from 0. Windows whose statistic is None
    (every probe lost) are skipped: loss is loss_rule's. With fewer than min_baseline_windows
    baseline windows there is no decision. Magnitude = current - baseline in ms. An RTT that
    stays shifted (a new route) keeps its episode open: accepting a new normal is the caller's.
    """
    if statistic not in ("min_ms", "p50_ms", "p90_ms"):
        raise ValueError(f"unknown statistic {statistic!r}")
    _positive("baseline_s", baseline_s)
    _positive("h", h)
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
    min_windows = max(1, math.ceil(h / (RTT_Z_CLIP - k))) if k < RTT_Z_CLIP else 1
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
        scale_ms = max(MAD_TO_SIGMA * pool.mad(), RTT_SCALE_FLOOR_MS, RTT_SCALE_FLOOR_FRACTION * abs(median_ms))
        min_effect_ms = max(min_shift_ms, min_shift_fraction * abs(median_ms))
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
            started = _shift_start(z_scores, first, i, sign, max(k, min_effect_ms / scale_ms / 2))
            # No fewer windows than the sum needs to pass h at the z clip: one busy window after
            # a few others must not become an episode of its own.
            started = min(started, i + 1 - min_windows)
            level = statistics.median(values[started : i + 1])
            if sign * (level - median_ms) >= min_effect_ms:
                opened = _CusumOpen(started, i, side, median_ms, scale_ms, min_effect_ms, len(pool), total)
                break
            # Evidence of a shift smaller than the minimum effect: dismiss it and restart that
            # side, so neither a small lasting offset nor skewed noise keeps the sum armed.
            if side is Direction.UP:
                s_up, start_up = 0.0, i + 1
            else:
                s_down, start_down = 0.0, i + 1
        pool.add(time_s, value)
        if opened is not None:
            pool.pop_since(times[opened.started].timestamp())
            current = opened
    if current is not None:
        episodes.append(_cusum_episode(times, values, current, statistic, k, h, cleared=False))
    return episodes


def _shift_start(z_scores: list[float], first: int, last: int, sign: float, reference: float) -> int:
    """The window from which on sign x (z - reference) sums highest up to last, searched from first.

    With the detector's k = 0.5, noise a little above the median keeps a sum positive for a
    few windows before a step, and "last at 0" starts the episode early (and dilutes its
    level). Re-running the sum from `first` with a reference value of half the minimum effect
    in z units (a CUSUM tuned to the smallest shift that matters) pins the start to the step.
    The reference stays below the z clip so a clipped step still counts.
    """
    reference = min(reference, RTT_Z_CLIP / 2)
    best, best_index, total = -math.inf, last, 0.0
    for index in range(last, first - 1, -1):
        total += sign * z_scores[index] - reference
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
    current_ms = statistics.median(values[state.started : state.detected + 1])
    return Episode(
        metric=Metric.RTT,
        rule="rtt_cusum",
        started_at=times[state.started],
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
            "clear_confirmed_at": _iso(times[state.recovered[-1]]) if cleared else None,
        },
    )


# --- loss -------------------------------------------------------------------------------------


@dataclass
class _LossOpen:
    started: int
    detected: int
    baseline: float
    baseline_lost: int
    baseline_sent: int
    p_values: list[float]
    recovered: list[int] = field(default_factory=list)


def loss_rule(
    windows: Sequence[RttWindow],
    *,
    baseline_s: float = 86400,
    min_pp: float = 0.5,
    p_max: float = 1e-4,
    confirm_windows: int = 2,
    min_baseline_windows: int = 6,
) -> list[Episode]:
    """Loss steps: confirm_windows consecutive windows each significantly and materially above baseline.

    The baseline rate is pooled over the windows of the baseline_s before the first confirming
    window, (lost + 0.5) / (sent + 1) so a loss-free day is not a zero rate that makes any loss
    infinitely unlikely. A window counts when its loss >= baseline + min_pp percentage points
    and the binomial upper tail P(X >= lost | sent, baseline) < p_max. `started_at` is the
    first confirming window, moved back over directly preceding windows at or above baseline +
    min_pp/2 (not recovered by the clearing rule either), so a step confirmed late starts where
    it began; `current` is the median loss fraction from there to `detected_at`. The baseline
    is frozen while the episode is open; it clears after confirm_windows windows back below
    baseline + min_pp/2 (hysteresis), and windows inside an episode never become baseline. Windows with
    nothing sent are skipped. With fewer than min_baseline_windows baseline windows there is no
    decision. Only increases (UP) are detected: less loss is not a regression.
    """
    if confirm_windows < 1:
        raise ValueError("confirm_windows must be >= 1")
    _positive("baseline_s", baseline_s)
    ordered = [w for w in sorted(windows, key=lambda w: w.start) if w.sent > 0]
    episodes: list[Episode] = []
    pool: deque[tuple[float, int, int, int]] = deque()  # (start s, sent, lost, index) of baseline windows
    pool_sent = pool_lost = 0
    current: _LossOpen | None = None
    min_fraction = min_pp / 100

    def admit(index: int) -> None:
        nonlocal pool_sent, pool_lost
        w = ordered[index]
        pool.append((w.start.timestamp(), w.sent, w.lost, index))
        pool_sent += w.sent
        pool_lost += w.lost

    def evict(before_s: float) -> None:
        nonlocal pool_sent, pool_lost
        while pool and pool[0][0] < before_s:
            _, sent, lost, _ = pool.popleft()
            pool_sent -= sent
            pool_lost -= lost

    def take_back(index: int) -> bool:
        """Remove window index from the pool if it is the newest entry."""
        nonlocal pool_sent, pool_lost
        if not pool or pool[-1][3] != index:
            return False
        _, sent, lost, _ = pool.pop()
        pool_sent -= sent
        pool_lost -= lost
        return True

    def loss(index: int) -> float:
        return ordered[index].lost / ordered[index].sent

    frontier = 0  # windows before this index are in the pool, evicted or part of an episode
    for i in range(len(ordered)):
        if current is not None:
            if loss(i) < current.baseline + min_fraction / 2:
                current.recovered.append(i)
            else:
                current.recovered.clear()
            if len(current.recovered) >= confirm_windows:
                episodes.append(_loss_episode(ordered, current, min_pp, p_max, cleared=True))
                for index in current.recovered:
                    admit(index)
                frontier = i + 1
                current = None
            continue
        # The confirming run is the last confirm_windows windows, its baseline what came before.
        first = i - confirm_windows + 1
        if first < frontier:
            continue
        while frontier < first:
            admit(frontier)
            frontier += 1
        evict(ordered[first].start.timestamp() - baseline_s)
        if len(pool) < min_baseline_windows:
            continue
        baseline = (pool_lost + LOSS_PRIOR_LOST) / (pool_sent + LOSS_PRIOR_SENT)
        p_values: list[float] = []
        for j in range(first, i + 1):
            if loss(j) < baseline + min_fraction:
                break  # cheap test first: most windows stop here without a binomial tail
            # bdtrc(k, n, p) = P(X > k) is what scipy.stats.binom.sf(k, n, p) computes, without
            # the distribution object's argument handling that costs 100 times more per call.
            p = float(special.bdtrc(ordered[j].lost - 1, ordered[j].sent, baseline))
            if not p < p_max:
                break
            p_values.append(p)
        if len(p_values) == confirm_windows:
            # A step confirmed late starts earlier: walk back over directly preceding windows
            # that were not below the clear threshold either (same hysteresis as clearing).
            started, baseline_lost, baseline_sent = first, pool_lost, pool_sent
            while started > 0 and loss(started - 1) >= baseline + min_fraction / 2 and take_back(started - 1):
                started -= 1
            current = _LossOpen(started, i, baseline, baseline_lost, baseline_sent, p_values)
            frontier = i + 1
    if current is not None:
        episodes.append(_loss_episode(ordered, current, min_pp, p_max, cleared=False))
    return episodes


def _loss_episode(windows: list[RttWindow], state: _LossOpen, min_pp: float, p_max: float, *, cleared: bool) -> Episode:
    changed = windows[state.started : state.detected + 1]
    confirming = windows[state.detected + 1 - len(state.p_values) : state.detected + 1]
    current = statistics.median([w.lost / w.sent for w in changed])
    return Episode(
        metric=Metric.LOSS,
        rule="loss",
        started_at=windows[state.started].start,
        detected_at=windows[state.detected].start,
        cleared_at=windows[state.recovered[0]].start if cleared else None,
        direction=Direction.UP,
        baseline=state.baseline,
        current=current,
        magnitude=100 * (current - state.baseline),
        evidence={
            "baseline_lost": state.baseline_lost,
            "baseline_sent": state.baseline_sent,
            "windows": [
                {"start": _iso(w.start), "sent": w.sent, "lost": w.lost, "p_value": p}
                for w, p in zip(confirming, state.p_values, strict=True)
            ],
            "min_pp": min_pp,
            "p_max": p_max,
            "clear_confirmed_at": _iso(windows[state.recovered[-1]].start) if cleared else None,
        },
    )


# --- routes -----------------------------------------------------------------------------------


@dataclass
class _RouteOpen:
    started: int
    detected: int
    old: frozenset[str]
    new: frozenset[str]
    original: frozenset[str]
    cleared: int | None = None
    superseded: bool = False


class _KnownRoute:
    """The fingerprints of the last memory_n runs on the current route, counted so they age out."""

    def __init__(self, memory_n: int) -> None:
        self._memory_n = memory_n
        self._runs: deque[frozenset[str]] = deque()
        self._counts: dict[str, int] = {}
        self.age = 0  # runs since the route was established

    def __bool__(self) -> bool:
        return bool(self._runs)

    def add(self, run: frozenset[str]) -> None:
        self._runs.append(run)
        self.age += 1
        for fingerprint in run:
            self._counts[fingerprint] = self._counts.get(fingerprint, 0) + 1
        if len(self._runs) > self._memory_n:
            for fingerprint in self._runs.popleft():
                self._counts[fingerprint] -= 1
                if not self._counts[fingerprint]:
                    del self._counts[fingerprint]

    def reset(self, runs: Sequence[frozenset[str]]) -> None:
        self._runs.clear()
        self._counts.clear()
        self.age = 0
        for run in runs:
            self.add(run)

    def covers(self, run: frozenset[str]) -> bool:
        return all(fingerprint in self._counts for fingerprint in run)

    def fingerprints(self) -> frozenset[str]:
        return frozenset(self._counts)


def _confirms(runs: Sequence[frozenset[str]], known: frozenset[str], settled: bool) -> bool:
    """Runs that all left the known route, or (on a settled route) all saw one same new fingerprint."""
    if all(run.isdisjoint(known) for run in runs):
        return True
    return settled and bool(frozenset.intersection(*(run - known for run in runs)))


def route_changes(
    traces: Sequence[tuple[datetime, frozenset[str]]],
    *,
    confirm_n: int = 2,
    memory_n: int = 144,
    settle_n: int = 6,
) -> list[Episode]:
    """Route changes from trace runs, each the set of path fingerprints its flows saw.

    ECMP makes several fingerprints per run normal, and a flow may hash onto another member
    now and then, so runs are compared with the known route: the union of the fingerprints of
    the last memory_n runs on it (a day of traces every 10 min). A run whose set is a subset of
    the known route is no change. A change is confirmed by confirm_n consecutive runs that each
    saw something new and either all saw nothing of the known route (the path moved), or all
    saw one same new fingerprint (a replaced member that keeps appearing). When a streak of new
    runs does not confirm, its oldest run is learned as part of the known route (a member not
    seen before), and so is every run of a streak that a run inside the known route breaks.

    A route is only compared once it has settled: for its first settle_n runs (at the start of
    the series and after each change) new fingerprints are learned, not judged, because a few
    runs need not have seen every ECMP member yet. The one exception is a return into the route
    known before an open episode, which is confirmed at once. A second change within settle_n
    runs of the first is therefore missed (its fingerprints become part of the route), and so
    is a change within the first settle_n runs of the series: a caller that recomputes over a
    sliding time range sees its first runs as learning only.

    Needs runs that see most ECMP members (several flows per run, e.g. 16 source ports or
    scamper tracelb): with one flow per run, hashing twice in a row onto a member not seen yet
    looks exactly like the path moving there, until every member has been seen once.

    Episode: `started_at` is the first run of the confirming streak, `detected_at` its last;
    baseline = fingerprints known before, current = fingerprints of the confirming runs,
    magnitude = how many of those are new; evidence lists the sets. The episode stays open
    while the path is on the new route and clears (at the first run of the return) when a later
    change goes back within the route known before the first open change, which then is no
    episode of its own; a change to yet another route clears the open episode as superseded and
    opens the next. Direction is always UP (a change happened; a route has no better or worse
    direction here). Runs with an empty set (nothing answered) are skipped.
    """
    if confirm_n < 1 or memory_n < 1 or settle_n < 0:
        raise ValueError("confirm_n and memory_n must be >= 1, settle_n >= 0")
    ordered = [(moment, run) for moment, run in sorted(traces, key=lambda trace: trace[0]) if run]
    route = _KnownRoute(memory_n)
    pending: list[int] = []
    done: list[_RouteOpen] = []
    current: _RouteOpen | None = None
    for index, (_, run) in enumerate(ordered):
        if not route:
            route.add(run)
            continue
        if route.covers(run):
            for j in pending:
                route.add(ordered[j][1])
            pending.clear()
            route.add(run)
            continue
        pending.append(index)
        while len(pending) >= confirm_n:
            streak = [ordered[j][1] for j in pending[-confirm_n:]]
            known = route.fingerprints()
            settled = route.age >= settle_n
            returning = current is not None and frozenset().union(*streak) <= current.original
            if not (settled or returning) or not _confirms(streak, known, settled):
                # The oldest run of the streak was alternation: learn it, and with it any later
                # run of the streak that is now known (which breaks the streak there).
                route.add(ordered[pending.pop(0)][1])
                while pending and any(route.covers(ordered[j][1]) for j in pending):
                    route.add(ordered[pending.pop(0)][1])
                continue
            new = frozenset().union(*streak)
            started = pending[-confirm_n]
            if current is not None:
                current.cleared = started
                done.append(current)
                if new <= current.original:
                    current = None
                else:
                    current.superseded = True
                    current = _RouteOpen(started, index, known, new, current.original)
            else:
                current = _RouteOpen(started, index, known, new, known)
            route.reset(streak)
            pending.clear()
    if current is not None:
        done.append(current)
    times = [moment for moment, _ in ordered]
    return [
        Episode(
            metric=Metric.ROUTE,
            rule="route",
            started_at=times[change.started],
            detected_at=times[change.detected],
            cleared_at=times[change.cleared] if change.cleared is not None else None,
            direction=Direction.UP,
            baseline=float(len(change.old)),
            current=float(len(change.new)),
            magnitude=float(len(change.new - change.old)),
            evidence={
                "old_fingerprints": sorted(change.old),
                "new_fingerprints": sorted(change.new),
                "added": sorted(change.new - change.old),
                "removed": sorted(change.old - change.new),
                "original_fingerprints": sorted(change.original),
                "superseded": change.superseded,
                "confirm_n": confirm_n,
            },
        )
        for change in sorted(done, key=lambda change: change.started)
    ]
