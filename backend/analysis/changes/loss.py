"""Loss steps: windows whose loss is both significantly and materially above a pooled baseline.

Pure. Reads the same aligned windows as the RTT CUSUM (analysis.changes.windows); a window's
loss is lost / sent of its probes.
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scipy import special

from analysis.changes.episodes import Direction, Episode, Metric, iso, require_positive
from analysis.changes.windows import RttWindow

# Loss baseline prior: (lost + 0.5) / (sent + 1), so a loss-free day is not a zero rate.
LOSS_PRIOR_LOST = 0.5
LOSS_PRIOR_SENT = 1.0


@dataclass
class _LossOpen:
    started: int
    detected: int
    baseline: float
    baseline_lost: int
    baseline_sent: int
    p_values: list[float]
    recovered: list[int] = field(default_factory=list)
    pooled: _Pooled | None = None  # set when a pooled span, not single windows, confirmed it


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

    The baseline rate is pooled over the windows of the baseline_s that end a quarter of
    baseline_s (or half the series' age, if less) before the first confirming window, so a
    step's first windows are not its own baseline; it is (lost + 0.5) / (sent + 1), so a
    loss-free day is not a zero rate that makes any loss infinitely unlikely. A window counts
    when its loss >= baseline + min_pp percentage points and the binomial upper tail
    P(X >= lost | sent, baseline) < p_max; on a path whose baseline shows bursty loss, the
    window before them must be as lossy too (see _persists). `started_at` is the first
    confirming window, moved back over directly preceding windows at or above baseline +
    min_pp/2 (not recovered by the clearing rule either), so a step confirmed late starts where
    it began; `current` is the median loss fraction from there to `detected_at`. The baseline
    is frozen while the episode is open; it clears after confirm_windows windows back below
    baseline + min_pp/2 (hysteresis), and windows inside an episode never become baseline. Windows with
    nothing sent are skipped. With fewer than min_baseline_windows baseline windows there is no
    decision. Only increases (UP) are detected: less loss is not a regression.

    A step too small for any window to call rare (1 % loss at 10 probes a window loses one
    probe an hour) is found by pooling the windows of the last POOLED_SPANS_S instead (see
    _pooled_step); such an episode clears when the longest span after it pools back below
    baseline + min_pp/2.
    """
    if confirm_windows < 1:
        raise ValueError("confirm_windows must be >= 1")
    require_positive("baseline_s", baseline_s)
    ordered = [w for w in sorted(windows, key=lambda w: w.start) if w.sent > 0]
    episodes: list[Episode] = []
    pool: deque[tuple[float, int, int, int]] = deque()  # (start s, sent, lost, index) of baseline windows
    pool_sent = pool_lost = 0
    current: _LossOpen | None = None
    min_fraction = min_pp / 100
    guard = baseline_s * BASELINE_GUARD_FRACTION

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
    sums = _Sums(ordered)
    for i in range(len(ordered)):
        if current is not None:
            if current.pooled is not None:
                current.recovered = _pooled_recovery(ordered, sums, current, i, current.baseline + min_fraction / 2)
            elif loss(i) < current.baseline + min_fraction / 2:
                current.recovered.append(i)
            else:
                current.recovered.clear()
            if current.recovered and (current.pooled is not None or len(current.recovered) >= confirm_windows):
                episodes.append(_loss_episode(ordered, current, min_pp, p_max, cleared=True))
                for index in current.recovered:
                    admit(index)
                frontier = i + 1
                current = None
            continue
        # The confirming run is the last confirm_windows windows, its baseline what came before
        # it and at least `guard` before it: the first windows of a step must not become the
        # baseline they are judged against (at 10 probes a window, three windows of a 10 %
        # onset in the pool make two lost probes ordinary).
        first = i - confirm_windows + 1
        if first < frontier:
            continue
        # (On a young series the guard is half its age, so a new path is judged as before.)
        start_s = ordered[first].start.timestamp()
        cutoff = start_s - min(guard, (start_s - ordered[0].start.timestamp()) / 2)
        while frontier < first and ordered[frontier].start.timestamp() < cutoff:
            admit(frontier)
            frontier += 1
        evict(cutoff - baseline_s)
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
        pooled = None
        if len(p_values) < confirm_windows:
            spread = functools.cache(lambda: _spread(pool))
            pooled = _pooled_step(ordered, sums, i, frontier, baseline, min_fraction, spread)
            if pooled is None:
                continue
            p_values = [pooled.p_value]
        elif not _persists(pool, loss, first, baseline + min_fraction):
            continue
        # A step confirmed late starts earlier: walk back over directly preceding windows
        # that were not below the clear threshold either (same hysteresis as clearing).
        started, baseline_lost, baseline_sent = (pooled.started if pooled else first), pool_lost, pool_sent
        while pooled is None and started > 0 and loss(started - 1) >= baseline + min_fraction / 2:
            if started - 1 < frontier and not take_back(started - 1):
                break
            started -= 1  # a window not yet in the pool, or taken back from it
        frontier = min(frontier, started)
        while frontier < started:  # the normal windows before the step: baseline later on
            admit(frontier)
            frontier += 1
        current = _LossOpen(started, i, baseline, baseline_lost, baseline_sent, p_values, pooled=pooled)
        frontier = i + 1
    if current is not None:
        episodes.append(_loss_episode(ordered, current, min_pp, p_max, cleared=False))
    return episodes


# The baseline ends this share of baseline_s before the windows it judges (6 h of 24 h).
BASELINE_GUARD_FRACTION = 0.25
# A baseline whose window counts spread this much beyond a binomial's has bursty loss.
BURSTY_DISPERSION = 1.5
# Below half a day of 5-minute windows the baseline says too little of the path's bursts.
DISPERSION_MIN_WINDOWS = 144


def dispersion(pool: Sequence[tuple[float, int, int, int]]) -> float:
    """Pearson's dispersion of the pool's lost counts (start, sent, lost, index per window):
    about 1 for independent losses, more where losses come in bursts; 1 with no loss."""
    sent = sum(window[1] for window in pool)
    lost = sum(window[2] for window in pool)
    if not pool or lost <= 0 or lost >= sent:
        return 1.0
    p = lost / sent
    pearson = sum((w_lost - w_sent * p) ** 2 / (w_sent * p * (1 - p)) for _, w_sent, w_lost, _ in pool)
    return pearson / len(pool)


def _persists(
    pool: Sequence[tuple[float, int, int, int]],
    loss: Callable[[int], float],
    first: int,
    threshold: float,
) -> bool:
    """Whether the run of lossy windows ending in the confirming ones is long enough.

    Bursty loss (a burst takes two or three of a window's ten probes) makes a window
    binomially rare and is that path's everyday: two such windows in a row come a few times
    a month. Where the baseline's windows spread beyond a binomial, a step must last one
    window more (the windows right before the confirming ones count); elsewhere the
    confirming windows are enough. A baseline of fewer than DISPERSION_MIN_WINDOWS windows
    is not asked.
    """
    if len(pool) < DISPERSION_MIN_WINDOWS or dispersion(pool) <= BURSTY_DISPERSION:
        return True
    before = first - 1
    return before >= 0 and loss(before) >= threshold


# Spans pooled into one test when no window shows a step on its own: at the default 10 probes
# every 5 minutes a 1 % onset loses about one probe an hour, which no window can call rare and
# a few hours of windows can.
POOLED_SPANS_S = (3600, 3 * 3600, 6 * 3600)
# Three spans tested at every window, each overlapping the last: a far smaller tail than a
# window's keeps them under one false alarm a path-year between them.
POOLED_P_MAX = 1e-6
# A rate, not an event: the span's worst window is left out of the test (one 5-minute outage
# is not a loss rate) and the loss must be in at least this many of its windows.
POOLED_MIN_LOSSY_WINDOWS = 3


@dataclass(frozen=True)
class _Pooled:
    """A span of windows whose pooled loss confirmed a step."""

    first: int  # the span's first window
    started: int  # its first window with a loss: where the step shows first
    sent: int
    lost: int
    p_value: float
    span_s: int
    p_max: float = POOLED_P_MAX


class _Sums:
    """Prefix sums of the windows' probes, losses and lossy windows, and their start times,
    so a span's totals cost two lookups."""

    def __init__(self, windows: Sequence[RttWindow]) -> None:
        self.starts = [w.start.timestamp() for w in windows]
        self.sent, self.lost, self.lossy = [0], [0], [0]
        for w in windows:
            self.sent.append(self.sent[-1] + w.sent)
            self.lost.append(self.lost[-1] + w.lost)
            self.lossy.append(self.lossy[-1] + (w.lost > 0))

    def first_from(self, moment_s: float, lowest: int) -> int:
        """The first window at or after moment_s, and not before index lowest."""
        return max(lowest, bisect.bisect_left(self.starts, moment_s))

    def totals(self, first: int, last: int) -> tuple[int, int, int]:
        """(sent, lost, lossy windows) of windows first..last."""
        return (
            self.sent[last + 1] - self.sent[first],
            self.lost[last + 1] - self.lost[first],
            self.lossy[last + 1] - self.lossy[first],
        )


def _spread(pool: Sequence[tuple[float, int, int, int]]) -> float:
    """How much the baseline's losses spread beyond a binomial's (1 for independent losses):
    a bursty path's pooled counts are divided by it (quasi-binomial), so its everyday bursts
    are not a rate step."""
    return max(1.0, dispersion(pool)) if len(pool) >= DISPERSION_MIN_WINDOWS else 1.0


def _pooled_step(
    windows: Sequence[RttWindow],
    sums: _Sums,
    last: int,
    lowest: int,
    baseline: float,
    min_fraction: float,
    spread: Callable[[], float],
) -> _Pooled | None:
    """The shortest span of POOLED_SPANS_S ending with window `last` (none of its windows
    before `lowest`, the first not yet in the baseline) whose pooled loss is materially and
    significantly above baseline, its worst window left out; None when none is."""
    end_s = windows[last].end.timestamp()
    for span_s in POOLED_SPANS_S:
        first = sums.first_from(end_s - span_s, lowest)
        if first > last:
            continue
        sent, lost, lossy = sums.totals(first, last)
        if lossy < POOLED_MIN_LOSSY_WINDOWS or lost < (baseline + min_fraction) * sent:
            continue
        worst = max(windows[first : last + 1], key=lambda w: w.lost)
        factor = spread()
        k, n = math.floor((lost - worst.lost) / factor), math.floor((sent - worst.sent) / factor)
        if k < 1 or n < k:
            continue
        p = float(special.bdtrc(k - 1, n, baseline))
        if p < POOLED_P_MAX:
            started = next(index for index in range(first, last + 1) if windows[index].lost)
            return _Pooled(first, started, sent, lost, p, span_s)
    return None


def _pooled_recovery(
    windows: Sequence[RttWindow], sums: _Sums, state: _LossOpen, last: int, threshold: float
) -> list[int]:
    """The windows of a pooled step's recovery once the longest span after its detection pools
    below threshold: those after the span's last loss (or the last window alone); [] while
    the step holds, or before a span has passed. A rate of a lost probe an hour takes hours
    to show gone, as it took to show: a shorter span of no loss is its everyday luck."""
    assert state.pooled is not None
    span_s = POOLED_SPANS_S[-1]
    first = sums.first_from(windows[last].end.timestamp() - span_s, state.detected + 1)
    if first > last or windows[last].end.timestamp() - windows[first].start.timestamp() < span_s:
        return []
    sent, lost, _ = sums.totals(first, last)
    if not sent or lost >= threshold * sent:
        return []
    lossy = [index for index in range(first, last + 1) if windows[index].lost]
    after = lossy[-1] + 1 if lossy else first
    return list(range(after, last + 1)) or [last]


def _loss_episode(windows: list[RttWindow], state: _LossOpen, min_pp: float, p_max: float, *, cleared: bool) -> Episode:
    pooled = state.pooled
    if pooled is not None:  # one test over the span: its pooled rate, and the span as one window
        # (Confirmed the moment the count crossed the bar, so a high estimate of a small step.)
        current = pooled.lost / pooled.sent
        shown = [
            {
                "start": iso(windows[pooled.first].start),
                "sent": pooled.sent,
                "lost": pooled.lost,
                "p_value": pooled.p_value,
            }
        ]
    else:
        changed = windows[state.started : state.detected + 1]
        confirming = windows[state.detected + 1 - len(state.p_values) : state.detected + 1]
        current = statistics.median([w.lost / w.sent for w in changed])
        shown = [
            {"start": iso(w.start), "sent": w.sent, "lost": w.lost, "p_value": p}
            for w, p in zip(confirming, state.p_values, strict=True)
        ]
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
            "windows": shown,
            "min_pp": min_pp,
            "p_max": pooled.p_max if pooled is not None else p_max,
            "clear_confirmed_at": iso(windows[state.recovered[-1]].start) if cleared else None,
            **({"pooled_s": pooled.span_s} if pooled is not None else {}),
        },
    )
