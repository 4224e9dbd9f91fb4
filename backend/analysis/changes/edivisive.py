"""The statistics of the slow throughput rule: E-divisive means and Welch's t-test.

Pure numpy/scipy over one series of ln(rate) values, as Hunter / Apache Otava use them:
binary segmentation at the maximum of the E-divisive statistic, each split kept only when
Welch's t-test and a minimum relative change agree, then a pruning pass that retests every
change point against its final neighbours.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt
from scipy import stats


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


def welch_p_prefixes(left: npt.NDArray[np.float64], right: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
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


def relative_change(left_mean_ln: float, right_mean_ln: float) -> float:
    """The relative change of the rate between two mean ln(rate) levels (ratio of geometric means - 1)."""
    return math.exp(right_mean_ln - left_mean_ln) - 1


def _passes(x: npt.NDArray[np.float64], start: int, change: int, end: int, p_max: float, min_relative: float) -> float:
    """The split's p-value when it passes both tests, else nan."""
    left, right = x[start:change], x[change:end]
    if abs(relative_change(float(left.mean()), float(right.mean()))) < min_relative:
        return math.nan
    p = welch_p(left, right)
    return p if p <= p_max else math.nan


def change_points(
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
            relative = abs(relative_change(float(left.mean()), float(right.mean())))
            p = welch_p(left, right) if relative >= min_relative else 1.0
            if (p > p_max or relative < min_relative) and p > worst_p:
                worst, worst_p = position - 1, p
        if worst < 0:
            break
        del found[worst]
    return found
