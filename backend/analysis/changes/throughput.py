"""Throughput regressions: the fast rule (drops confirmed by a few tests) and the slow rule
(lasting steps up or down, by E-divisive means with a t-test).

Pure. Both rules work on ln(rate in bit/s) of one series of comparable runs (the same streams,
-w and congestion control), so a relative change is a difference and lognormal noise is
symmetric; zero, negative and non-finite rates are skipped and counted in the evidence.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from analysis.changes.edivisive import change_points, relative_change, welch_p, welch_p_prefixes
from analysis.changes.episodes import MAD_TO_SIGMA, Direction, Episode, Metric, Point, iso, mad

# Winsorizing band of the throughput rules: trailing median +/- 4 robust sigmas over 30 points.
WINSOR_K = 4.0
WINSOR_N = 30
# Fewer trailing points than this and a point is taken as it is: a median of 2 says nothing.
WINSOR_MIN_N = 5
# Two points decide a deep drop only when it is this many robust sigmas deep as well: on a
# path with 10% noise, two tests in a row 3 sigmas down come about once a path-year.
DEEP_SIGMAS = 4.0
# A dead-flat lab path has MAD 0; without a floor every later point would be clipped to the
# median and the history could never learn the path's real spread. 0.01 in ln = 1%.
WINSOR_SCALE_FLOOR_LN = 0.01
# The pair test: two runs whose mean lies 3 robust sigmas (and 20 %) below the baseline, each
# of them 2 sigmas below on its own. Two runs both 4 sigmas deep (the deep test) find a 25 %
# cut within two runs only where the runs scatter under 6 %; the mean of two has a sigma of
# 1/sqrt(2), so at 3 sigmas it is as rare on an unchanged path (about 1e-4 a run with the
# each-point condition, for normal scatter) and finds a 25 % cut by its second run up to a
# scatter of about 8 %, half the time at 10 %.
PAIR_SIGMAS = 3.0
PAIR_EACH_SIGMAS = 2.0
# Tests below the baseline that open the fast rule's ordinary (not deep) drop: after this many
# runs since a change, a path without a finding has been judged unchanged.
FAST_CONFIRM_N = 3
# A lasting step lasts: its new level must hold this long before the slow rule reports it.
# Production runs a test every few hours and the demo every 10 minutes, so five runs span far
# more; in the lab, a run every 11 s made five runs of a busy emulator a 55-second "step".
# Short drops are the fast rule's, which judges depth instead.
MIN_LASTING = timedelta(minutes=30)


def _winsorize(value: float, trailing: Sequence[float]) -> float:
    """Clip value to median +/- 4 x 1.4826 x MAD of the trailing points (scale floored)."""
    if len(trailing) < WINSOR_MIN_N:
        return value
    center = statistics.median(trailing)
    half_width = WINSOR_K * max(MAD_TO_SIGMA * mad(trailing, center), WINSOR_SCALE_FLOOR_LN)
    return min(max(value, center - half_width), center + half_width)


@dataclass(frozen=True)
class _LnSeries:
    """A throughput series on ln(rate): the usable points and the count of skipped ones before each."""

    times: list[datetime]
    ln_rates: list[float]
    nonpositive_before: list[int]  # skipped zero/negative rates before usable point i (cumulative)
    nonfinite_before: list[int]
    rates_over_ceiling: list[float | None]  # rate / Point.ceiling of usable point i, None if unknown
    ambiguous: list[bool]  # Point.ambiguous of usable point i

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
    rates_over_ceiling: list[float | None] = []
    ambiguous: list[bool] = []
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
            ceiling = point.ceiling
            usable = ceiling is not None and math.isfinite(ceiling) and ceiling > 0
            rates_over_ceiling.append(point.value / ceiling if usable and ceiling else None)
            ambiguous.append(point.ambiguous)
    return _LnSeries(times, ln_rates, nonpositive_before, nonfinite_before, rates_over_ceiling, ambiguous)


# --- fast rule ------------------------------------------------------------------------------


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
    confirm_n: int
    prior: str | None
    recovered: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Test:
    """One way the fast rule can open: this many confirming points, this deep.

    Without each_sigmas every confirming point must lie below the threshold. With it, their
    mean must (each point counted at most twice the drop deep, so one collapsed run cannot
    carry the other), and every point must lie each_sigmas (and half of min_drop_ln) below the
    median on its own."""

    confirm_n: int
    min_drop_ln: float
    sigmas: float  # the drop must also be this many robust sigmas of the baseline
    each_sigmas: float | None = None


def _confirms(points: Sequence[float], test: _Test, median_ln: float, sigma_ln: float, threshold: float) -> bool:
    """Whether the confirming points (raw ln rates) lie below the test's threshold."""
    if test.each_sigmas is None:
        return all(value < threshold for value in points)
    # Each point low on its own, by half the drop at least: on a quiet path 2 sigmas is a
    # hair, and one deep run beside one 5 % low would be a pair.
    each = median_ln - max(test.each_sigmas * sigma_ln, test.min_drop_ln / 2)
    if not all(value < each for value in points):
        return False
    floor = median_ln - 2 * (median_ln - threshold)
    return statistics.fmean(max(value, floor) for value in points) < threshold


def _pair_sigma(baseline: Sequence[float], median_ln: float, sigma_ln: float) -> float:
    """The baseline's spread for the pair test: the larger of its robust sigma and its standard
    deviation (of the winsorized points). The MAD of 30 points misses the spread by a fifth as
    often as not; two points 3.6 such sigmas deep each paged on a path scattering 10 %."""
    return max(sigma_ln, statistics.pstdev(baseline, median_ln) if len(baseline) > 1 else 0.0)


def _prior_holds(series: _LnSeries, indices: Sequence[int], min_fraction: float) -> bool:
    """The short baseline ran at its ceilings: then a deep drop below it means something."""
    fractions = [fraction for index in indices if (fraction := series.rates_over_ceiling[index]) is not None]
    return bool(fractions) and len(fractions) == len(indices) and statistics.median(fractions) >= min_fraction


def throughput_fast_rule(
    points: Sequence[Point],
    *,
    baseline_n: int = 30,
    confirm_n: int = FAST_CONFIRM_N,
    min_baseline: int = 10,
    min_drop_ln: float = math.log(1 / 0.9),
    deep_confirm_n: int = 2,
    deep_drop_ln: float = math.log(1 / 0.8),
    prior_min_baseline: int = 2,
    prior_drop_ln: float = math.log(1 / 0.7),
    prior_min_fraction: float = 0.8,
) -> list[Episode]:
    """Throughput drops that last a few tests: the fast rule of section 4, with two shortcuts.

    Works on ln(rate in bit/s). Each point is winsorized at the trailing median +/- 4 x 1.4826
    x MAD of the previous up to 30 points of the normal regime (points inside an episode never
    become baseline). An episode opens when the last confirm_n points are all below
    median(baseline) - max(3 sigma_r, min_drop_ln), where the baseline is the up to baseline_n
    normal points before those confirm_n and sigma_r = 1.4826 x MAD of the baseline; with fewer
    than min_baseline baseline points there is no decision. The confirming points are compared
    with their raw ln values: winsorized, a 50% drop on a quiet path would be clipped to a few
    percent and never cross the threshold.

    A deep drop needs fewer tests: deep_confirm_n points below median - max(4 sigma_r,
    deep_drop_ln) open it (a 30% cut is found by its second test), and so do deep_confirm_n
    points whose mean is below median - max(3 sigma_r, deep_drop_ln) when each is also
    max(2 sigma_r, deep_drop_ln / 2) below the median (sigma_r here at least the baseline's
    standard deviation; PAIR_SIGMAS: a 25% cut on a path scattering 5-10%). A new path need not wait
    for min_baseline: from prior_min_baseline points on, when those ran at a median of at least
    prior_min_fraction of their ceilings (Point.ceiling), deep_confirm_n points more than
    prior_drop_ln below them open an episode; a short baseline's own spread says little, so
    the prior (the ceilings say what the path can do) stands in for it. Points marked ambiguous
    (Point.ambiguous: a run on an ECMP member no sweep has shown, analysis.members
    .on_unseen_member) confirm only through the confirm_n test: two runs in a row on a
    1-in-128 member come a few times a year at the demo's pace, three almost never.

    `started_at` is the first confirming point, moved back over directly preceding points that
    were already below the open threshold (a drop confirmed late still starts where it began).
    The baseline is then frozen; the episode clears after confirm_n consecutive points above
    median - max(1.5 sigma_r, min_drop_ln / 2) (`cleared_at` is the first of them) and the
    rule carries on, so there is at most one open episode. Only drops (DOWN) are detected:
    the reference describes drops, and a faster path is not a regression. Zero, negative and
    non-finite rates are skipped and counted in the evidence.
    """
    if confirm_n < 1 or deep_confirm_n < 1 or baseline_n < 2 or min_baseline < 2 or prior_min_baseline < 1:
        raise ValueError("confirm_n must be >= 1, baseline_n and min_baseline >= 2, prior_min_baseline >= 1")
    series = _ln_series(points)
    x = series.ln_rates
    episodes: list[Episode] = []
    # (usable index, winsorized ln) of the points of the normal regime, oldest first.
    history: list[tuple[int, float]] = []
    keep = baseline_n + confirm_n + WINSOR_N + 1
    current: _FastOpen | None = None
    tests = sorted(
        (
            _Test(confirm_n, min_drop_ln, 3.0),
            _Test(deep_confirm_n, deep_drop_ln, DEEP_SIGMAS),
            _Test(deep_confirm_n, deep_drop_ln, PAIR_SIGMAS, PAIR_EACH_SIGMAS),
        ),
        key=lambda test: test.confirm_n,
    )

    def append_normal(index: int) -> None:
        trailing = [value for _, value in history[-WINSOR_N:]]
        history.append((index, _winsorize(x[index], trailing)))
        if len(history) > 4 * keep:
            del history[:-keep]

    def opened(i: int) -> _FastOpen | None:
        """The episode the last points open, trying the quickest test first."""
        for test in tests:
            count = test.confirm_n
            # The confirming points are the last `count` normal points; they are contiguous
            # because points leave the normal regime only as an open episode's tail.
            if len(history) <= count or history[-count][0] != i - count + 1:
                continue
            first = i - count + 1
            if count < confirm_n and any(series.ambiguous[first : i + 1]):
                continue  # a run its own RTT may explain confirms only through the longer test
            entries = history[-(count + baseline_n) : -count]
            baseline = [value for _, value in entries]
            prior: str | None = None
            if len(baseline) >= min_baseline:
                median_ln = statistics.median(baseline)
                sigma_ln = MAD_TO_SIGMA * mad(baseline, median_ln)
                if test.each_sigmas is not None:
                    sigma_ln = _pair_sigma(baseline, median_ln, sigma_ln)
                threshold = median_ln - max(test.sigmas * sigma_ln, test.min_drop_ln)
            elif (
                count == deep_confirm_n
                and test.each_sigmas is None
                and len(baseline) >= prior_min_baseline
                and _prior_holds(series, [index for index, _ in entries], prior_min_fraction)
            ):
                median_ln = statistics.median(baseline)
                sigma_ln = MAD_TO_SIGMA * mad(baseline, median_ln)
                threshold = median_ln - max(DEEP_SIGMAS * sigma_ln, prior_drop_ln)
                prior = "ceilings"
            else:
                continue
            if not _confirms(x[first : i + 1], test, median_ln, sigma_ln, threshold):
                continue
            started = first
            position = len(history) - count - 1
            while position >= 0 and history[position][0] == started - 1 and x[started - 1] < threshold:
                started -= 1
                position -= 1
            baseline_first = entries[0][0]
            del history[position + 1 :]
            # Recovered within 1.5 sigma of the median or half the smallest drop that opens an
            # episode: a steady path's MAD is a percent or two, and a margin that narrow kept
            # a path back at its rate "down" for as long as one run in two was a hair low. A
            # short baseline's MAD may be 0: the prior's own margin keeps the hysteresis.
            floor = min_drop_ln / 2 if prior is None else prior_drop_ln / 3
            clear_margin = max(1.5 * sigma_ln, floor)
            return _FastOpen(
                started=started,
                detected=i,
                baseline_first=baseline_first,
                baseline_n=len(baseline),
                median_ln=median_ln,
                sigma_ln=sigma_ln,
                open_threshold_ln=threshold,
                clear_threshold_ln=median_ln - clear_margin,
                confirm_n=count,
                prior=prior,
            )
        return None

    for i in range(len(x)):
        if current is not None:
            if x[i] > current.clear_threshold_ln:
                current.recovered.append(i)
            else:
                current.recovered.clear()
            if len(current.recovered) >= confirm_n:
                episodes.append(_fast_episode(series, current, cleared=True))
                for index in current.recovered:
                    append_normal(index)
                current = None
            continue
        append_normal(i)
        current = opened(i)
    if current is not None:
        episodes.append(_fast_episode(series, current, cleared=False))
    return episodes


def _fast_episode(series: _LnSeries, state: _FastOpen, *, cleared: bool) -> Episode:
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
            "baseline_from": iso(series.times[state.baseline_first]),
            "baseline_median_bps": baseline_bps,
            "sigma_r_ln": state.sigma_ln,
            "open_threshold_bps": math.exp(state.open_threshold_ln),
            "clear_threshold_bps": math.exp(state.clear_threshold_ln),
            "confirm_n": state.confirm_n,
            "prior": state.prior,
            "changed_bps": [math.exp(value) for value in changed],
            "skipped_nonpositive": nonpositive,
            "skipped_nonfinite": nonfinite,
            "clear_confirmed_at": iso(series.times[state.recovered[-1]]) if cleared else None,
        },
    )


# --- slow rule ------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class _Split:
    start: int  # segment before the change: [start, change)
    change: int
    end: int  # segment after: [change, end)
    p_value: float


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
    bit/s. A change point whose new level is back within min_relative of the baseline of an
    open episode, or past it the other way (a drop recovering above its baseline), closes that
    episode (and any opened after it) at its first point and is not an episode itself; so is a
    new level not yet held for MIN_LASTING (30 minutes: `detected_at` is never earlier); every
    other change point is one episode, direction from its sign.
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
        found = change_points(x, start, end, p_max, min_relative, min_segment)
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
        # Back to an open episode's baseline, or past it the other way: a drop whose path
        # recovers to more than its noisy baseline is over, not a drop plus a rise.
        returned_to = next(
            (
                position
                for position, (episode, baseline_ln) in enumerate(open_stack)
                if (
                    relative_change(baseline_ln, after_ln) > -min_relative
                    if episode.direction == Direction.DOWN
                    else relative_change(baseline_ln, after_ln) < min_relative
                )
            ),
            None,
        )
        if returned_to is not None:
            for episode, _ in open_stack[returned_to:]:
                evidence = {**episode.evidence, "cleared_by_change_at": iso(series.times[split.change])}
                closed.append(replace(episode, cleared_at=series.times[split.change], evidence=evidence))
            del open_stack[returned_to:]
            continue
        prefix_p = welch_p_prefixes(left, right)
        relative_prefix = np.exp(np.cumsum(right) / np.arange(1, len(right) + 1) - before_ln) - 1
        step_at = series.times[split.change]
        lasted = np.array([time - step_at >= MIN_LASTING for time in series.times[split.change : split.end]])
        if not lasted[-1]:
            continue  # not held long enough yet: the next pass, with more runs, judges it again
        passing = np.flatnonzero((prefix_p <= p_max) & (np.abs(relative_prefix) >= min_relative) & lasted)
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
                "before_from": iso(series.times[split.start]),
                "before_points": len(left),
                "after_to": iso(series.times[split.end - 1]),
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
