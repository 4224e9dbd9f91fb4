"""RTT modes of a path: ECMP members seen per flow, pooled dip candidates, and modes in time.

Pure functions over plain values (see shared reference probes-and-detection.md, sections 2
and 3). RTT samples are right-skewed with heavy tails, which fools mixture models and the
bimodality coefficient; attributing samples to the source port (flow) that chose the ECMP
member is what separates paths reliably. A pooled dip test only makes a candidate, and modes
that separate in time are a route change or congestion, not ECMP. Too little data gives an
`insufficient` verdict with a reason instead of a guess.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import diptest
import numpy as np
import numpy.typing as npt
from scipy import stats

# "All flows see the same RTT distribution" must be rejected this firmly, by Kruskal-Wallis or
# by the permutation test of the flows' minima (each at half of it: Bonferroni).
KRUSKAL_ALPHA = 0.01
# Permutations of the minima test (fixed seed): its smallest p is 1 / (this + 1).
PERMUTATIONS = 999
# Split sorted per-flow minima where a gap exceeds max(this, IQR_FACTOR x median per-flow IQR),
# the IQR taken as twice the lower half's (median - lower quartile): delays only ever add, so
# a late tail (a queue burst, a starved emulator) widens the upper half, not the lower.
SPLIT_FLOOR_MS = 0.2
IQR_FACTOR = 0.5
# A flow's minimum stands for its path's RTT only where the path was idle for more than one of
# its samples: at least this share of the flows must have a second sample within the mode gap
# (min_gap_ms) of their minimum. Below it a queue or a stalled host swamped the sweep (CI of
# 344c95f: one sweep of 8 and 12 ms members saw 10-350 ms, 3 of 16 minima seen twice, and
# "one mode at 10.02 ms" ended the path's ECMP modes), and there is no verdict.
CONFIRMED_SHARE_MIN = 0.5
# Adjacent modes must be at least max(this, MODE_GAP_SHARE x base RTT) apart to count as paths.
MODE_GAP_FLOOR_MS = 0.3
MODE_GAP_SHARE = 0.02
# Fixed seed for the dip test's tie-breaking jitter: the same samples always give the same answer.
JITTER_SEED = 20250101


class ModeVerdict(StrEnum):
    SINGLE = "single"  # enough data, one RTT mode
    ECMP = "ecmp"  # per-flow rule says several paths chosen by flow hash
    INSUFFICIENT = "insufficient"  # too little data to decide (the reason says why)


@dataclass(frozen=True)
class FlowRtts:
    flow: int
    src_port: int
    rtts_ms: tuple[float, ...]  # answered samples only (callers drop losses)


@dataclass(frozen=True)
class RttMode:
    rtt_ms: float  # median of the cluster's per-flow minimum RTTs
    min_rtt_ms: float  # smallest per-flow minimum in the cluster
    flow_count: int
    share: float  # flow_count / flows used
    src_ports: tuple[int, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "rtt_ms": self.rtt_ms,
            "min_rtt_ms": self.min_rtt_ms,
            "flow_count": self.flow_count,
            "share": self.share,
            "src_ports": list(self.src_ports),
        }


@dataclass(frozen=True)
class ModeAnalysis:
    verdict: ModeVerdict
    modes: tuple[RttMode, ...]  # sorted by rtt_ms; one mode for SINGLE; empty for INSUFFICIENT
    kruskal_p: float | None
    gap_ms: float | None  # largest gap between adjacent cluster medians (None with one cluster)
    min_gap_ms: float | None  # the required gap: max(0.3 ms, 2% of base RTT)
    flows_used: int
    samples_used: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict.value,
            "modes": [mode.to_dict() for mode in self.modes],
            "kruskal_p": self.kruskal_p,
            "gap_ms": self.gap_ms,
            "min_gap_ms": self.min_gap_ms,
            "flows_used": self.flows_used,
            "samples_used": self.samples_used,
            "reason": self.reason,
        }


def _valid_rtts(rtts_ms: Sequence[float]) -> tuple[list[float], int]:
    """The finite, non-negative RTTs and how many others were ignored."""
    valid = [float(rtt) for rtt in rtts_ms if math.isfinite(rtt) and rtt >= 0]
    return valid, len(rtts_ms) - len(valid)


def _ignored_note(ignored: int) -> str:
    return f"; ignored {ignored} non-finite or negative RTTs" if ignored else ""


def _minimum_seen_twice(rtts: Sequence[float]) -> bool:
    """Whether another sample lies within the mode gap of the flow's minimum (a flow of one
    sample cannot say, and is not held against the sweep)."""
    if len(rtts) < 2:
        return True
    low, second = sorted(rtts)[:2]
    return second - low <= min_gap_ms(low)


def min_gap_ms(base_rtt_ms: float) -> float:
    """The gap two RTT levels need to count as separate: max(0.3 ms, 2% of the base RTT)."""
    return max(MODE_GAP_FLOOR_MS, MODE_GAP_SHARE * base_rtt_ms)


def _kruskal_p(samples: list[list[float]]) -> float:
    # All-identical samples have no ranks to compare (scipy returns NaN with a warning, older
    # releases raise): nothing separates the flows, so p = 1.
    if len({rtt for sample in samples for rtt in sample}) < 2:
        return 1.0
    p = float(stats.kruskal(*samples).pvalue)
    return p if math.isfinite(p) else 1.0


def _minima_p(samples: list[list[float]]) -> float:
    """Permutation p of "the flows' minimum RTTs differ no more than chance makes them".

    Kruskal-Wallis ranks whole distributions, so late tails that hit a third of the samples
    (a burst, a starved emulator) drown two members' separate minima; a flow's minimum stands
    while one of its samples is on time. The statistic is the variance of the flows' minima,
    set against the same samples dealt out to the flows at random (valid for any statistic
    where the flows are one path, and samples are exchangeable between them).
    """
    sizes = [len(sample) for sample in samples]
    pooled = np.concatenate([np.asarray(sample, dtype=np.float64) for sample in samples])
    if np.ptp(pooled) == 0:
        return 1.0
    # Each deal's samples laid out flow by flow, padded with +inf to the longest flow.
    width = max(sizes)
    slots = np.array([flow * width + index for flow, size in enumerate(sizes) for index in range(size)])
    rng = np.random.default_rng(JITTER_SEED)
    deals = np.vstack(
        [np.arange(pooled.size), rng.permuted(np.tile(np.arange(pooled.size), (PERMUTATIONS, 1)), axis=1)]
    )
    grid = np.full((deals.shape[0], len(sizes) * width), np.inf)
    grid[:, slots] = pooled[deals]
    spread = grid.reshape(deals.shape[0], len(sizes), width).min(axis=2).var(axis=1)
    return float((1 + np.count_nonzero(spread[1:] >= spread[0])) / (PERMUTATIONS + 1))


def _mode(flows: list[tuple[float, FlowRtts]], flows_used: int) -> RttMode:
    minima = [minimum for minimum, _ in flows]
    return RttMode(
        rtt_ms=statistics.median(minima),
        min_rtt_ms=min(minima),
        flow_count=len(flows),
        share=len(flows) / flows_used,
        src_ports=tuple(sorted(flow.src_port for _, flow in flows)),
    )


def per_flow_modes(flows: Sequence[FlowRtts], *, min_flows: int = 4, min_samples_per_flow: int = 3) -> ModeAnalysis:
    """Decide single path vs ECMP from RTT samples attributed to flows (source ports).

    Flows that differ (Kruskal-Wallis, or a permutation test of their minima where late tails
    blur whole distributions: p < 0.005 each), at least two clusters of per-flow minimum RTTs with
    two or more flows each, and adjacent cluster medians at least max(0.3 ms, 2% of base) apart.
    """
    used: list[tuple[FlowRtts, list[float]]] = []
    ignored = short = 0
    for flow in flows:
        valid, dropped = _valid_rtts(flow.rtts_ms)
        ignored += dropped
        if len(valid) >= min_samples_per_flow:
            used.append((flow, valid))
        else:
            short += 1
    flows_used, samples_used = len(used), sum(len(valid) for _, valid in used)
    notes = f"; left out {short} flows with fewer than {min_samples_per_flow} samples" if short else ""
    notes += _ignored_note(ignored)
    # Kruskal-Wallis needs at least two groups, whatever the caller asked for.
    if flows_used < max(min_flows, 2):
        reason = f"{flows_used} flows with at least {min_samples_per_flow} samples, need {max(min_flows, 2)}{notes}"
        return ModeAnalysis(ModeVerdict.INSUFFICIENT, (), None, None, None, flows_used, samples_used, reason)

    confirmed = sum(1 for _, valid in used if _minimum_seen_twice(valid))
    if confirmed < CONFIRMED_SHARE_MIN * flows_used:
        reason = (
            f"{flows_used} flows, only {confirmed} with a second sample near their minimum: a queue or a stalled host"
            f" swamped the sweep, so the minima are not the paths' RTTs{notes}"
        )
        return ModeAnalysis(ModeVerdict.INSUFFICIENT, (), None, None, None, flows_used, samples_used, reason)

    kruskal_p = _kruskal_p([valid for _, valid in used])
    minima_p = None if kruskal_p < KRUSKAL_ALPHA / 2 else _minima_p([valid for _, valid in used])
    differ = kruskal_p < KRUSKAL_ALPHA / 2 or (minima_p is not None and minima_p < KRUSKAL_ALPHA / 2)
    ranked = sorted(((min(valid), flow) for flow, valid in used), key=lambda item: item[0])
    iqr_ms = statistics.median(2 * float(np.subtract(*np.percentile(valid, [50, 25]))) for _, valid in used)
    split_ms = max(SPLIT_FLOOR_MS, IQR_FACTOR * iqr_ms)
    clusters: list[list[tuple[float, FlowRtts]]] = [[ranked[0]]]
    for previous, current in itertools.pairwise(ranked):
        if current[0] - previous[0] > split_ms:
            clusters.append([])
        clusters[-1].append(current)
    # A cluster of one flow is one odd flow (a slow reflector, a queue that hit one port), not
    # a path: drop it from the modes, but it was measured, so it still counts in flows_used.
    kept = [cluster for cluster in clusters if len(cluster) >= 2]
    outliers = len(clusters) - len(kept)
    if outliers:
        notes += f"; dropped {outliers} single-flow outlier clusters"
    base_ms = kept[0][0][0] if kept else ranked[0][0]
    required_ms = min_gap_ms(base_ms)
    medians = [statistics.median(minimum for minimum, _ in cluster) for cluster in kept]
    gaps = [upper - lower for lower, upper in itertools.pairwise(medians)]
    gap_ms = max(gaps) if gaps else None
    # Neighbours closer than the required gap are one path seen twice: merge them so that every
    # reported mode is at least the required gap away from the next one.
    merged: list[list[tuple[float, FlowRtts]]] = []
    for index, cluster in enumerate(kept):
        if merged and gaps[index - 1] < required_ms:
            merged[-1].extend(cluster)
        else:
            merged.append(list(cluster))
    summary = f"Kruskal-Wallis p={kruskal_p:.1g}"
    if minima_p is not None:
        summary += f", minima p={minima_p:.1g}"
    if gap_ms is not None:
        summary += f", gap {gap_ms:.2f} ms {'>=' if gap_ms >= required_ms else '<'} {required_ms:.2f} ms"
    if differ and len(merged) >= 2:
        modes = tuple(_mode(cluster, flows_used) for cluster in merged)
        parts = ", ".join(f"{mode.flow_count} at {mode.rtt_ms:.2f} ms" for mode in modes)
        reason = f"{flows_used} flows: {parts} ({summary}){notes}"
        return ModeAnalysis(ModeVerdict.ECMP, modes, kruskal_p, gap_ms, required_ms, flows_used, samples_used, reason)
    mode = _mode(ranked, flows_used)
    if not differ:
        why = "neither Kruskal-Wallis nor the flows' minima find a difference between flows"
    elif len(kept) < 2:
        why = "fewer than two clusters of two or more flows"
    else:
        why = "clusters too close to be separate paths"
    reason = f"{flows_used} flows: one mode at {mode.rtt_ms:.2f} ms, {why} ({summary}){notes}"
    return ModeAnalysis(ModeVerdict.SINGLE, (mode,), kruskal_p, gap_ms, required_ms, flows_used, samples_used, reason)


@dataclass(frozen=True)
class DipResult:
    candidate: bool  # dip p < alpha with n >= min_samples: a candidate only, never a verdict
    p_value: float | None
    samples: int
    reason: str


def ping_rounding_step_ms(rtt_ms: float) -> float:
    """iputils ping prints 3 decimals below 1 ms, 2 below 10 ms, 1 below 100 ms, integers above."""
    if rtt_ms < 1:
        return 0.001
    if rtt_ms < 10:
        return 0.01
    return 0.1 if rtt_ms < 100 else 1.0


def _dip_p_value(values: npt.NDArray[np.float64]) -> float:
    """Hartigan's dip test p-value (diptest ships no type information)."""
    _dip, p_value = diptest.diptest(values)
    return float(p_value)


def pooled_dip_candidate(rtts_ms: Sequence[float], *, min_samples: int = 50, alpha: float = 0.05) -> DipResult:
    """Hartigan's dip test on pooled RTTs (e.g. from ping): a bimodality candidate, never a verdict."""
    valid, ignored = _valid_rtts(rtts_ms)
    note = _ignored_note(ignored)
    if len(valid) < min_samples:
        return DipResult(False, None, len(valid), f"{len(valid)} samples, the dip test needs {min_samples}{note}")
    values = np.asarray(valid, dtype=np.float64)
    # Ping rounds RTTs, so many samples tie; ties put steps in the empirical CDF that the dip
    # test reads as structure (almost every rounded unimodal sample comes out "bimodal").
    # Spreading each value uniformly within its rounding interval undoes that; a fixed seed
    # keeps the answer reproducible. The jitter is below the printed precision, so it adds
    # nothing that ping could have shown.
    steps = np.asarray([ping_rounding_step_ms(rtt) for rtt in valid], dtype=np.float64)
    values = values + np.random.default_rng(JITTER_SEED).uniform(-0.5, 0.5, values.size) * steps
    p_value = _dip_p_value(values)
    candidate = p_value < alpha
    verdict = "bimodality candidate (confirm per flow)" if candidate else "no sign of several modes"
    return DipResult(
        candidate, p_value, len(valid), f"dip test p={p_value:.2g} over {len(valid)} samples: {verdict}{note}"
    )


class TimeModeKind(StrEnum):
    NONE = "none"
    ROUTE_CHANGE = "route_change"  # base RTT stepped from one level to another and stayed
    CONGESTION = "congestion"  # higher levels come and go (episodes), base level returns


@dataclass(frozen=True)
class TimeModes:
    kind: TimeModeKind
    levels_ms: tuple[float, ...]  # the distinct base-RTT levels seen (medians of groups), ascending
    change_times: tuple[datetime, ...]  # when the level switched
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "levels_ms": list(self.levels_ms),
            "change_times": [moment.isoformat() for moment in self.change_times],
            "reason": self.reason,
        }


def time_separated_modes(points: Sequence[tuple[datetime, float]], *, min_points: int = 4) -> TimeModes:
    """Base-RTT levels over time from single-mode measurements: route change, congestion, or none."""
    valid = sorted(
        ((moment, float(rtt)) for moment, rtt in points if math.isfinite(rtt) and rtt >= 0), key=lambda p: p[0]
    )
    note = _ignored_note(len(points) - len(valid))
    if len(valid) < min_points:
        return TimeModes(TimeModeKind.NONE, (), (), f"{len(valid)} points, need {min_points}{note}")
    ordered = sorted(rtt for _, rtt in valid)
    required_ms = min_gap_ms(ordered[0])
    bounds = [upper for lower, upper in itertools.pairwise(ordered) if upper - lower >= required_ms]
    groups: list[list[float]] = [[] for _ in range(len(bounds) + 1)]
    labels = [sum(rtt >= bound for bound in bounds) for _, rtt in valid]
    for label, (_, rtt) in zip(labels, valid, strict=True):
        groups[label].append(rtt)
    levels = tuple(statistics.median(group) for group in groups)
    shown = ", ".join(f"{level:.2f} ms" for level in levels)
    if len(levels) == 1:
        return TimeModes(TimeModeKind.NONE, levels, (), f"{len(valid)} points at one level {shown}{note}")
    runs = [0] + [index for index in range(1, len(labels)) if labels[index] != labels[index - 1]]
    changes = tuple(valid[index][0] for index in runs[1:])
    run_labels = [labels[index] for index in runs]
    counts = [len(group) for group in groups]
    tail = f" (not ECMP: modes separate in time, not by flow){note}"
    if len(run_labels) == len(levels):
        path = " -> ".join(f"{levels[label]:.2f} ms" for label in run_labels)
        return TimeModes(
            TimeModeKind.ROUTE_CHANGE, levels, changes, f"route change: base RTT {path}, then stayed{tail}"
        )
    # Congestion raises the floor for a while and the lowest level comes back, and the lowest
    # level is where the path spends most of its time; if it is the lower level that comes and
    # goes, the route flaps between paths instead.
    if run_labels.count(0) >= 2 and all(counts[0] > count for count in counts[1:]):
        # One episode is a stretch above the base level, however many upper levels it visits.
        rises = sum(1 for before, after in itertools.pairwise(run_labels) if before == 0 and after != 0)
        episodes = rises + (run_labels[0] != 0)
        upper = ", ".join(f"{level:.2f} ms" for level in levels[1:])
        reason = f"congestion: base RTT {levels[0]:.2f} ms rose to {upper} in {episodes} episodes"
        return TimeModes(TimeModeKind.CONGESTION, levels, changes, reason + f" and returned{tail}")
    reason = f"route flapping: base RTT switched {len(changes)} times between {shown}{tail}"
    return TimeModes(TimeModeKind.ROUTE_CHANGE, levels, changes, reason)


# Newer one-mode sweeps keep an ECMP sweep's modes standing while the chance that flow hashing
# alone hid the other members from all of them is at least this.
HOLD_ALPHA = 0.01
# Draws of the members' shares that held_probability averages over.
HOLD_DRAWS = 4000


@dataclass(frozen=True)
class SweepSummary:
    """What choosing a path's current modes needs of one analysed flow sweep."""

    key: str  # the caller's handle on the sweep (its run id)
    started_at: datetime
    verdict: ModeVerdict
    modes: tuple[tuple[float, float], ...]  # (rtt_ms, share of flows) per mode, by RTT
    flows_used: int
    disturbed: bool  # a throughput run of either agent overlapped it


@dataclass(frozen=True)
class CurrentModes:
    sweep: SweepSummary | None  # the sweep whose modes stand now; None without a decided sweep
    newest: SweepSummary | None  # the newest sweep considered
    held_by: int  # newer one-mode sweeps the ECMP modes were held through (0: sweep is newest)
    miss_probability: float | None  # chance that hashing alone gave all of those one mode
    reason: str


def miss_probability(shares: Sequence[float], flows: int) -> float:
    """Probability that a sweep of `flows` flows, hashed onto members with these shares, puts
    two or more flows on at most one member, so the per-flow rule can see only one mode."""
    total = sum(share for share in shares if share > 0)
    weights = [share / total for share in shares if share > 0] if total > 0 else []
    if len(weights) < 2 or flows < 2:
        return 1.0
    return float(_miss_probabilities(np.array([weights]), flows)[0])


def _miss_probabilities(weights: npt.NDArray[np.float64], flows: int) -> npt.NDArray[np.float64]:
    """miss_probability for each row of member shares (rows sum to 1, two or more members)."""
    members = weights.shape[1]
    probability = np.zeros(weights.shape[0])
    for seen in range(members):
        others = [index for index in range(members) if index != seen]
        # Every other member gets zero or one flow; `seen` gets the rest.
        for counts in itertools.product((0, 1), repeat=len(others)):
            rest = flows - sum(counts)
            if rest < 0:
                continue
            term = math.factorial(flows) // math.factorial(rest) * weights[:, seen] ** rest
            for count, other in zip(counts, others, strict=True):
                term = term * weights[:, other] ** count
            probability += term
    return np.minimum(probability, 1.0)


def held_probability(flow_counts: Sequence[float], later_flows: Sequence[int]) -> float:
    """Chance that flow hashing alone gave each later sweep (of these many flows) one mode,
    with the members' shares known only from the flows counted on them so far.

    Shares from one or two sweeps are coarse (10 of 16 flows on a 3:1 path is as likely as
    12): plugged in as exact they end a real member after one unlucky sweep. The shares are
    drawn from their posterior (Dirichlet, Jeffreys prior, fixed seed) and the chance
    averaged; with many sweeps pooled it tends to the plug-in value.
    """
    if len(flow_counts) < 2 or not later_flows:
        return 1.0
    rng = np.random.default_rng(JITTER_SEED)
    weights = rng.dirichlet(np.asarray(flow_counts, dtype=np.float64) + 0.5, HOLD_DRAWS)
    chances = np.ones(HOLD_DRAWS)
    for flows in later_flows:
        chances *= _miss_probabilities(weights, flows) if flows >= 2 else 1.0
    return float(chances.mean())


def current_modes(sweeps: Sequence[SweepSummary], *, alpha: float = HOLD_ALPHA) -> CurrentModes:
    """The modes a path has now, from its recent sweeps.

    Sweeps a throughput run overlapped are passed over while undisturbed ones exist: the run's
    queue blurs the modes. A flow sweep hashes its flows afresh each time, so with a minority
    member of share s a sweep of n flows sees only one mode with a fair probability (s = 1/4,
    n = 16: 6%). Newer one-mode sweeps whose RTT is one of the newest ECMP sweep's modes keep
    those modes standing until chance alone no longer explains them all (probability < alpha,
    over the shares the ECMP sweeps in view leave plausible); a one-mode sweep at another RTT
    ends them at once (a route change).
    """
    decided = sorted((s for s in sweeps if s.verdict != ModeVerdict.INSUFFICIENT), key=lambda s: s.started_at)
    quiet = [s for s in decided if not s.disturbed]
    pool = quiet or decided
    if not pool:
        return CurrentModes(None, None, 0, None, "no decided flow sweep")
    newest = pool[-1]
    passed = len(decided) - len(quiet) if quiet else 0
    note = f"; passed over {passed} sweeps a throughput run overlapped" if passed else ""
    last_ecmp = next((index for index in range(len(pool) - 1, -1, -1) if pool[index].verdict == ModeVerdict.ECMP), None)
    if newest.verdict == ModeVerdict.ECMP or last_ecmp is None:
        return CurrentModes(newest, newest, 0, None, f"newest sweep{note}")
    ecmp = pool[last_ecmp]
    later = pool[last_ecmp + 1 :]
    rtts = [rtt for rtt, _ in ecmp.modes]
    tolerance = min_gap_ms(min(rtts)) if rtts else 0.0
    stray = [s for s in later if not s.modes or min(abs(s.modes[0][0] - rtt) for rtt in rtts) >= tolerance]
    shown = ", ".join(f"{rtt:.2f}" for rtt in rtts)
    if stray:
        reason = (
            f"newest sweep: a one-mode sweep at {stray[0].modes[0][0] if stray[0].modes else float('nan'):.2f} ms"
            f" is none of the ECMP modes ({shown} ms) seen before it{note}"
        )
        return CurrentModes(newest, newest, 0, None, reason)
    # One sweep's shares are coarse (2 of 16 flows is 1/8): pool every ECMP sweep in view that
    # saw the same members, and weigh what is left uncertain (held_probability).
    alike = [
        s
        for s in pool[: last_ecmp + 1]
        if s.verdict == ModeVerdict.ECMP
        and len(s.modes) == len(rtts)
        and all(abs(rtt - other) < tolerance for (rtt, _), other in zip(s.modes, rtts, strict=True))
    ]
    counts = [sum(s.modes[index][1] * s.flows_used for s in alike) for index in range(len(rtts))]
    probability = held_probability(counts, [s.flows_used for s in later])
    count = f"the {len(later)} newer sweeps" if len(later) > 1 else "the newer sweep"
    if probability >= alpha:
        reason = (
            f"ECMP modes ({shown} ms) of the sweep at {ecmp.started_at.isoformat()} still stand: {count} saw"
            f" one of them only, which flow hashing alone explains (probability {probability:.2g}){note}"
        )
        return CurrentModes(ecmp, newest, len(later), probability, reason)
    reason = (
        f"newest sweep: {count} saw one mode only; by chance with probability {probability:.1g} < {alpha:g},"
        f" so the other ECMP modes ({shown} ms) are gone{note}"
    )
    return CurrentModes(newest, newest, 0, probability, reason)
