"""A corpus scenario's path over weeks at production cadence, unchanged or with a change put in.

A scenario records about 95 s of one lab path; the regression rules judge months. Production
pings 10 packets every 5 minutes, sweeps 16 flows every 15 minutes and runs a throughput test
every 6 hours (meshes.specs.DEFAULT_TESTS); its series are drawn from the scenario's own
recordings by bootstrap, so every figure rests on what the lab path really did:

- a 5-minute ping window takes its RTTs from one flow of the scenario's idle sweeps (ping's
  ICMP flow hashes onto one ECMP member, as a sweep's flow does, and a new ping process may
  take another) and its losses from a block of 10 consecutive idle pings, so bursty loss
  stays bursty. Windows are judged within their ECMP member with the modes of the newest
  sweep, as analysis.services.findings does, and an RTT step between two known members is
  an annotation there, not an alarm (analysis.members.member_switch);
- a throughput run is one of the scenario's runs the emulator did not set, as the service
  stores it: its rate, ceiling and ECMP member scale;
- a sweep is 16 flows drawn from the idle sweeps' flows (from a pool of such sweeps, since
  finding the modes of one takes milliseconds).

Changes are put in at a known moment: an RTT step on every member, extra random loss on
every probe, a cut of every run's rate. Only the idle pings feed the RTT and loss series:
production leaves out the pings a throughput test overlapped (analysis.services.own_load).

Pure: no database; seeded per scenario, so every figure is the same on every run.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from analysis.changes.ecmp import ModeObservation, SweepObservation
from analysis.changes.episodes import Point
from analysis.changes.policer_rate import SUSPECT_BASELINE_N, RampPoint, suspect
from analysis.changes.windows import RttWindow
from analysis.members import MemberLevel, judged_point, on_unseen_member, run_scale
from analysis.modes import FlowRtts, ModeVerdict, per_flow_modes
from analysis.policer import from_ramp
from analysis.run_judgement import JudgedRun
from analysis.truth.corpus import RecordedRun, Scenario

PING_WINDOW_S = 300
PINGS_PER_WINDOW = 10
SWEEP_EVERY_S = 900
SWEEP_FLOWS = 16
RUN_EVERY_S = 6 * 3600
SWEEP_POOL = 96
EPOCH = datetime(2026, 1, 5, tzinfo=UTC)
# What the service asks of a sweep (analysis.services.sweep_modes).
MIN_FLOWS, MIN_SAMPLES_PER_FLOW = 12, 8


def seeded(scenario: Scenario, purpose: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{scenario.name}/{purpose}".encode()))


def _busy(runs: Sequence[RecordedRun], when: float) -> bool:
    return any(run.started_at <= when < run.ended_at for run in runs)


@dataclass(frozen=True)
class PingSource:
    """What a scenario's idle path offers a ping window: flows' RTTs and a loss sequence."""

    rtts: npt.NDArray[np.float64]  # one row per idle-sweep flow, padded with NaN
    counts: npt.NDArray[np.int64]  # answered samples per row
    lost: npt.NDArray[np.bool_]  # per idle ping, in time order
    modes: tuple[MemberLevel, ...]  # the ECMP modes of the idle sweeps; () on a single path

    @classmethod
    def of(cls, scenario: Scenario) -> PingSource | None:
        flows = [flow.rtts_ms for sweep in scenario.sweeps if not sweep.during_run for flow in sweep.flows]
        flows = [rtts for rtts in flows if rtts]
        pings = sorted((when, rtt) for when, rtt in [*scenario.idle_pings, *scenario.pings]
                       if not _busy(scenario.runs, when))  # fmt: skip
        if not flows or len(pings) < PINGS_PER_WINDOW:
            return None
        width = max(len(rtts) for rtts in flows)
        table = np.full((len(flows), width), np.nan)
        for row, rtts in enumerate(flows):
            table[row, : len(rtts)] = rtts
        idle = [FlowRtts(flow.flow, flow.src_port, flow.rtts_ms)
                for sweep in scenario.sweeps if not sweep.during_run for flow in sweep.flows]  # fmt: skip
        modes = per_flow_modes(idle, min_flows=MIN_FLOWS, min_samples_per_flow=MIN_SAMPLES_PER_FLOW)
        return cls(
            rtts=table,
            counts=np.array([len(rtts) for rtts in flows], dtype=np.int64),
            lost=np.array([rtt is None for _, rtt in pings], dtype=np.bool_),
            modes=tuple(MemberLevel(mode.rtt_ms, mode.min_rtt_ms) for mode in modes.modes)
            if modes.verdict is ModeVerdict.ECMP
            else (),
        )


@dataclass(frozen=True)
class PingChange:
    """What changes from window `at` on: every RTT up by step_ms, every probe also lost with extra_loss."""

    at: int
    step_ms: float = 0.0
    extra_loss: float = 0.0


def window_time(index: int) -> datetime:
    return EPOCH + timedelta(seconds=index * PING_WINDOW_S)


def _percentile(ordered: npt.NDArray[np.float64], counts: npt.NDArray[np.int64], q: float) -> npt.NDArray[np.float64]:
    """Each row's q-quantile of its first counts[row] values, by numpy's linear interpolation
    (analysis.changes.windows.rtt_windows), for all rows at once."""
    position = q * np.maximum(counts - 1, 0)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(counts - 1, 0))
    rows = np.arange(len(counts))
    below, above = ordered[rows, low], ordered[rows, high]
    return np.asarray(below + (above - below) * (position - low), dtype=np.float64)


def ping_windows(
    source: PingSource, count: int, rng: np.random.Generator, change: PingChange | None = None
) -> tuple[list[RttWindow], list[tuple[MemberLevel, ...]]]:
    """count windows of 10 probes (their own minima, before within_member), with the ECMP modes
    the service would judge each against."""
    rows = rng.integers(len(source.counts), size=count)
    picks = np.floor(rng.random((count, PINGS_PER_WINDOW)) * source.counts[rows][:, None]).astype(np.int64)
    rtts = source.rtts[rows[:, None], picks]
    starts = rng.integers(len(source.lost) - PINGS_PER_WINDOW + 1, size=count)
    lost = source.lost[starts[:, None] + np.arange(PINGS_PER_WINDOW)]
    modes_at: list[tuple[MemberLevel, ...]] = [source.modes] * count
    if change is not None:
        rtts[change.at :] += change.step_ms
        if change.extra_loss:
            lost[change.at :] |= rng.random((count - change.at, PINGS_PER_WINDOW)) < change.extra_loss
        # The sweeps after the change see the members moved with it.
        seen = math.ceil((change.at * PING_WINDOW_S) / SWEEP_EVERY_S) * SWEEP_EVERY_S // PING_WINDOW_S
        shifted = tuple(MemberLevel(m.rtt_ms + change.step_ms, m.low_ms + change.step_ms) for m in source.modes)
        modes_at[seen:] = [shifted] * max(0, count - seen)
    ordered = np.sort(np.where(lost, np.nan, rtts), axis=1)  # NaN (lost) last
    answered = (~lost).sum(axis=1)
    p50, p90 = (_percentile(ordered, answered, q) for q in (0.5, 0.9))
    windows: list[RttWindow] = []
    for index in range(count):
        start = window_time(index)
        end = start + timedelta(seconds=PING_WINDOW_S)
        n_lost = PINGS_PER_WINDOW - int(answered[index])
        if answered[index]:
            windows.append(RttWindow(start, end, PINGS_PER_WINDOW, n_lost, float(ordered[index, 0]),
                                     float(p50[index]), float(p90[index])))  # fmt: skip
        else:
            windows.append(RttWindow(start, end, PINGS_PER_WINDOW, n_lost, None, None, None))
    return windows, modes_at


@dataclass(frozen=True)
class RunDraw:
    """A judged run as the throughput rules see it (analysis.services.findings.throughput_episodes)."""

    rate_bps: float
    ceiling_bps: float | None
    scale: float
    ambiguous: bool
    label: str


def run_draws(judged: Sequence[JudgedRun]) -> list[RunDraw]:
    draws: list[RunDraw] = []
    for run in judged:
        rate = run.diagnosis.rate_bps
        if not rate:
            continue
        ceilings = run.ceilings.to_dict()
        draws.append(
            RunDraw(
                rate,
                run.diagnosis.ceiling_bps,
                run_scale(ceilings, run.diagnosis.label.value),
                on_unseen_member(ceilings, rate),
                run.diagnosis.label.value,
            )
        )
    return draws


def run_points(
    draws: Sequence[RunDraw], count: int, rng: np.random.Generator, cut_at: int | None = None, cut: float = 0.0
) -> list[Point]:
    """count runs 6 h apart, each one of the draws; from cut_at on, each at (1 - cut) of its rate.

    A smoothed bootstrap: six recorded rates repeat exactly, which no real path does, and a
    median absolute deviation of such draws can be zero. Each draw's ln rate therefore moves by
    normal noise of Silverman's bandwidth for the draws' judged ln rates.
    """
    judged = np.log([draw.rate_bps / draw.scale for draw in draws])
    spread = min(float(np.std(judged, ddof=1)), float(np.subtract(*np.percentile(judged, [75, 25]))) / 1.34)
    bandwidth = 0.9 * spread * len(draws) ** -0.2
    jitter = np.exp(rng.normal(0.0, bandwidth, size=count)) if bandwidth > 0 else np.ones(count)
    points: list[Point] = []
    for index, pick in enumerate(rng.integers(len(draws), size=count)):
        draw = draws[int(pick)]
        factor = float(jitter[index]) * (1.0 - cut if cut_at is not None and index >= cut_at else 1.0)
        time = EPOCH + timedelta(seconds=index * RUN_EVERY_S)
        points.append(
            judged_point(time, draw.rate_bps * factor, draw.ceiling_bps, draw.scale, ambiguous=draw.ambiguous)
        )
    return points


def ramp_estimates(scenario: Scenario) -> list[float]:
    """The policer rates the scenario's recorded ramps measured (analysis.policer.from_ramp):
    ramps the emulator did not set, that measured the rate rather than only bounding it."""
    rates: list[float] = []
    for ramp in scenario.ramps:
        estimate = from_ramp(ramp.steps, "") if not ramp.emulator_bound else None
        if estimate is not None and not estimate.lower_bound:
            rates.append(estimate.rate_bps)
    return rates


@dataclass(frozen=True)
class PolicedSeries:
    """A policed path's slots as Fathom fills them: TCP runs, and a ramp in a slot after a
    TCP run below its series' median (the path is suspect) or when a day has passed since
    the last ramp (FATHOM_POLICER_RAMP_EVERY_H)."""

    runs: list[Point]
    ramps: list[RampPoint]
    slot_times: list[datetime]


RAMP_EVERY_SLOTS = 24 * 3600 // RUN_EVERY_S


def policed_series(
    draws: Sequence[RunDraw],
    estimates: Sequence[float],
    count: int,
    rng: np.random.Generator,
    cut_at: int | None = None,
    cut: float = 0.0,
) -> PolicedSeries:
    """count slots 6 h apart; from cut_at on, TCP runs and ramps at (1 - cut) of their rates
    (a policer cut that much). Ramps are a smoothed bootstrap of the recorded estimates, as
    runs are of the recorded runs (run_points)."""
    tcp = run_points(draws, count, rng, cut_at, cut)
    ln = np.log(estimates)
    spread = float(np.std(ln, ddof=1)) if len(ln) > 1 else 0.0
    bandwidth = 0.9 * spread * len(ln) ** -0.2
    jitter = np.exp(rng.normal(0.0, bandwidth, size=count)) if bandwidth > 0 else np.ones(count)
    picks = rng.integers(len(estimates), size=count)
    runs: list[Point] = []
    ramps: list[RampPoint] = []
    last_ramp: int | None = None
    previous_was_run = False
    for index, point in enumerate(tcp):
        due = last_ramp is None or index - last_ramp >= RAMP_EVERY_SLOTS
        if due or (previous_was_run and suspect(runs[-SUSPECT_BASELINE_N - 1 :])):
            factor = float(jitter[index]) * (1.0 - cut if cut_at is not None and index >= cut_at else 1.0)
            ramps.append(RampPoint(point.time, estimates[int(picks[index])] * factor))
            last_ramp, previous_was_run = index, False
        else:
            runs.append(point)
            previous_was_run = True
    return PolicedSeries(runs, ramps, [point.time for point in tcp])


@dataclass(frozen=True)
class PooledSweep:
    flows: int
    modes: tuple[ModeObservation, ...]  # as the ECMP rules read a sweep
    levels: tuple[MemberLevel, ...]  # as the RTT rule's member check reads it; () unless ECMP


def sweep_pool(scenario: Scenario, rng: np.random.Generator) -> list[PooledSweep]:
    """SWEEP_POOL sweeps of 16 flows drawn from the idle sweeps (undecided ones left out, as the
    service does)."""
    flows = [flow for sweep in scenario.sweeps if not sweep.during_run for flow in sweep.flows]
    pool: list[PooledSweep] = []
    if not flows:
        return pool
    for _ in range(SWEEP_POOL):
        picked = [flows[int(i)] for i in rng.integers(len(flows), size=SWEEP_FLOWS)]
        # Distinct flow ids, as one sweep's flows are.
        renamed = [FlowRtts(n, flow.src_port, flow.rtts_ms) for n, flow in enumerate(picked)]
        found = per_flow_modes(renamed, min_flows=MIN_FLOWS, min_samples_per_flow=MIN_SAMPLES_PER_FLOW)
        if found.verdict is ModeVerdict.INSUFFICIENT:
            continue
        levels = tuple(MemberLevel(mode.rtt_ms, mode.min_rtt_ms) for mode in found.modes)
        pool.append(
            PooledSweep(
                found.flows_used,
                tuple(ModeObservation(mode.rtt_ms, mode.flow_count) for mode in found.modes),
                levels if found.verdict is ModeVerdict.ECMP else (),
            )
        )
    return pool


def sweep_series(pool: Sequence[PooledSweep], count: int, rng: np.random.Generator) -> list[SweepObservation]:
    return [
        SweepObservation(EPOCH + timedelta(seconds=index * SWEEP_EVERY_S), pool[int(pick)].flows, pool[int(pick)].modes)
        for index, pick in enumerate(rng.integers(len(pool), size=count))
    ]


def day_levels(pool: Sequence[PooledSweep]) -> tuple[MemberLevel, ...]:
    """Every level a day of the pool's sweeps shows (analysis.services.findings.day_levels)."""
    return tuple(level for sweep in pool for level in sweep.levels)
