"""The series a case's path yields: flow sweeps and the modes production makes of them, and
throughput runs attributed to their member as analysis.runs does."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

import numpy as np
import numpy.typing as npt

from analysis.bench_case_model import (
    DIP_SHARE,
    EPOCH,
    FAST_CEILING_BPS,
    MODES_LOOKBACK_SWEEPS,
    RUN_FRACTION,
    SWEEP_FLOWS,
    SWEEP_SAMPLES,
    SWEEP_VARIANTS,
    WEEK_S,
    Case,
    ScenarioNoise,
    float_array,
)
from analysis.changes.episodes import Point
from analysis.members import judged_point, on_unseen_member
from analysis.modes import FlowRtts, ModeAnalysis, SweepSummary, current_modes, per_flow_modes
from analysis.runs import RunFacts, flow_base_rtt
from analysis.tuning import HostTuning


class Sweeps:
    """Real per_flow_modes results for a case, cached per split of the 16 flows over the members.

    A sweep's verdict depends on how many flows each member got (a member needs two to be a
    mode) and, much less, on the samples: a few real analyses per split stand for all of them.
    """

    def __init__(self, case: Case, noise: ScenarioNoise, rng: np.random.Generator, moved_ms: float = 0.0):
        self.case = case
        self.noise = noise
        self.rng = rng
        rtts = list(case.member_rtts_ms)
        rtts[-1] += moved_ms  # "a member's RTT moving": the minority (slow) member
        self.rtts = tuple(rtts)
        self._cache: dict[tuple[int, ...], list[ModeAnalysis]] = {}

    def analysis(self, counts: tuple[int, ...]) -> ModeAnalysis:
        variants = self._cache.setdefault(counts, [])
        if len(variants) < SWEEP_VARIANTS:
            flows: list[FlowRtts] = []
            for member, count in enumerate(counts):
                for _ in range(count):
                    excess = self.rng.choice(self.noise.sweep_excess_ms, SWEEP_SAMPLES)
                    samples = tuple(float(value) for value in self.rtts[member] + excess)
                    flows.append(FlowRtts(len(flows), 40000 + len(flows), samples))
            variants.append(per_flow_modes(flows))
            return variants[-1]
        return variants[int(self.rng.integers(len(variants)))]

    def splits(self, n: int) -> list[tuple[int, ...]]:
        counts = self.rng.multinomial(SWEEP_FLOWS, self.case.shares, n)
        return [tuple(int(value) for value in row) for row in counts]

    def series(self, n: int) -> list[ModeAnalysis]:
        return [self.analysis(split) for split in self.splits(n)]


def standing_modes(sweeps: Sweeps, n: int = 300) -> list[tuple[float, ...]]:
    """The mode RTTs a throughput run's ceilings would use: current_modes over a day of sweeps."""
    analyses = sweeps.series(n + MODES_LOOKBACK_SWEEPS)
    summaries = [
        SweepSummary(
            key=str(index),
            started_at=EPOCH + timedelta(seconds=900 * index),
            verdict=analysis.verdict,
            modes=tuple((mode.rtt_ms, mode.share) for mode in analysis.modes),
            flows_used=analysis.flows_used,
            disturbed=False,
        )
        for index, analysis in enumerate(analyses)
    ]
    pool: list[tuple[float, ...]] = []
    for end in range(MODES_LOOKBACK_SWEEPS, len(summaries)):
        chosen = current_modes(summaries[end - MODES_LOOKBACK_SWEEPS : end]).sweep
        pool.append(tuple(rtt for rtt, _ in chosen.modes) if chosen is not None else ())
    return pool


_HOST = HostTuning()


@cache
def _attributed(
    run_min_rtt_ms: float, modes: tuple[float, ...], ecmp_seen: bool
) -> tuple[float | None, float, float | None]:
    """(the RTT the run's ceiling is taken at, the member scale, the flow's own RTT where it lay
    far above every known one) as analysis.runs decides them.

    Window-limited: a ceiling is window / RTT, so the member's ceiling over the fastest
    member's is the fastest mode's RTT over the member's (analysis.runs.run_member).
    """
    # As analysis.services.inputs: the modes only while the current sweep shows ECMP, else its
    # one RTT as the path's minimum; ECMP seen in the past week on an ECMP path.
    ecmp_now = len(modes) > 1
    facts = RunFacts(
        streams=1,
        sender=_HOST,
        receiver=_HOST,
        run_min_rtt_ms=run_min_rtt_ms,
        path_min_rtt_ms=min(modes) if modes else None,
        mode_rtts_ms=modes if ecmp_now else (),
        ecmp_seen=ecmp_seen,
    )
    flow = flow_base_rtt(facts)
    if flow.member_rtt_ms is None or len(modes) < 2:
        return flow.rtt_ms, 1.0, flow.above_path_ms
    return flow.rtt_ms, min(1.0, min(modes) / flow.member_rtt_ms), flow.above_path_ms


@dataclass
class ThroughputSeries:
    points: list[Point]
    dips: set[int]  # runs an injected dip hit
    members: npt.NDArray[np.int64]
    scaled: int  # runs judged against a slower member (scale < 1)


def throughput_series(
    case: Case,
    noise: ScenarioNoise,
    modes_pool: Sequence[tuple[float, ...]],
    rng: np.random.Generator,
    n: int,
    interval_s: float,
    change_at: int | None = None,
    change: str = "",
) -> ThroughputSeries:
    """n runs of one case; from change_at on, `change`: "capacity" (a bottleneck at 70% of the
    slowest member's rate: every run drops 30% or more), "fast-bottleneck" (a bottleneck at 70%
    of the fast member's rate: a slower member's runs drop less, at a 35% gap 5%) or
    "tuning-down" (rate and ceiling x 0.6)."""
    rtts = float_array(case.member_rtts_ms)
    members = rng.choice(len(rtts), n, p=case.shares)
    ceilings = FAST_CEILING_BPS * rtts[0] / rtts[members]
    rates = RUN_FRACTION * ceilings
    times_s = np.arange(n) * interval_s
    if case.step_at is not None:
        stepped = np.arange(n) >= int(case.step_at * n)
        rates[stepped] *= case.step_factor
        ceilings[stepped] *= case.step_factor
    low, high = case.drift_per_week
    if high > 0:
        rates *= np.exp(math.log1p(-rng.uniform(low, high)) * times_s / WEEK_S)
    if change_at is not None:
        if change in ("capacity", "fast-bottleneck"):
            slowest = rtts[0] / rtts[-1] if change == "capacity" else 1.0
            rates[change_at:] = np.minimum(rates[change_at:], 0.7 * RUN_FRACTION * FAST_CEILING_BPS * slowest)
        elif change == "tuning-down":
            rates[change_at:] *= 0.6
            ceilings[change_at:] *= 0.6
    rates *= np.exp(rng.choice(noise.residuals_ln, n))
    dips: set[int] = set()
    dipped = rng.random(n) < DIP_SHARE
    if change_at is not None:
        # The delay measured is the change's own: no dip just before it keeps an episode open.
        dipped[max(0, change_at - 10) :] = False
    for start in np.flatnonzero(dipped):
        length = 2 if rng.random() < 0.2 else 1
        rates[start : start + length] *= rng.uniform(0.05, 0.5)
        dips.update(range(int(start), min(n, int(start) + length)))
    excess = noise.load_excess_ms
    pooled = np.concatenate(excess)
    run_min = rtts[members].copy()
    for member in range(len(rtts)):
        on = members == member
        source = pooled if case.pooled_excess else excess[min(member, len(excess) - 1)]
        run_min[on] += rng.choice(source, int(on.sum()))
    pool_index = rng.integers(len(modes_pool), size=n) if modes_pool else np.zeros(n, dtype=np.int64)
    points: list[Point] = []
    scaled = 0
    for i in range(n):
        modes = modes_pool[int(pool_index[i])] if modes_pool else ()
        flow_rtt, scale, above_ms = _attributed(round(float(run_min[i]), 3), modes, case.ecmp)
        # The ceiling at the RTT the run is judged at (the ceiling a stored run carries).
        window_bps_s = float(ceilings[i]) * float(rtts[members[i]]) / 1000
        ceiling = window_bps_s / (flow_rtt / 1000) if flow_rtt else None
        above = {"window_ceiling_bps": window_bps_s / (above_ms / 1000)} if above_ms else None
        ambiguous = on_unseen_member({"flow_above_path": above}, float(rates[i]))
        moment = EPOCH + timedelta(seconds=float(times_s[i]))
        points.append(judged_point(moment, float(rates[i]), ceiling, scale, ambiguous=ambiguous))
        scaled += scale < 1
    return ThroughputSeries(points, dips, members, scaled)
