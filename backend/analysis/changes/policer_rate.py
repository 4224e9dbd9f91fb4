"""A policed path's regressions: a change of the policer's rate, which its paced UDP ramps
measure (analysis/policer.py `from_ramp`), confirmed by the TCP run beside the ramp.

Pure. TCP through a policer saws below its rate, far below with a small burst, and scatters
from run to run (5-24 % robust sigma of ln rate on the corpus's policed and shallow-queue
paths): two TCP runs cannot tell a 25 % cut from that scatter at under one false alarm a
path-year. A ramp's policed steps deliver the policer's rate within a few percent, so:

- a TCP run below the median of its series' recent runs, on a path whose runs scatter more
  than SUSPECT_MIN_SCATTER, makes the path *suspect* and the next exclusive slot a ramp
  (analysis/services/ramps.py `request_policer_ramp`);
- a ramp that measured the policer at least RAMP_DROP below the median of the path's
  previous ramps, beside a TCP run (the one before it or the one after) below its series'
  median, opens an episode: two measurements of different kinds, each low on its own;
- the episode clears at the first ramp back within RAMP_DROP / 2 of that baseline.

A ramp that only bounds the rate (nothing it offered was policed, or its slow steps lost
too) is not a measurement of the rate and is left out by the caller.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from analysis.changes.episodes import MAD_TO_SIGMA, Direction, Episode, Metric, Point, iso

# A ramp this far below the previous ramps' median measured a slower policer: ramps of one
# unchanged policer agree within a few percent (the corpus's recorded ramps), and 15 % keeps
# a 25 % cut clear of that.
RAMP_DROP = 0.15
# The previous ramps a ramp is compared with (their median), at most.
RAMP_BASELINE_N = 5
# TCP runs a run is compared with (their median) to call it low, at most and at least.
SUSPECT_BASELINE_N = 30
SUSPECT_MIN_BASELINE = 5
# Runs scattering less than this (robust sigma of ln rate) need no ramp to confirm a drop.
SUSPECT_MIN_SCATTER = 0.05
RULE = "policer_ramp"


@dataclass(frozen=True)
class RampPoint:
    """A ramp that measured the policer's rate (not only a lower bound)."""

    time: datetime
    rate_bps: float


def _usable(points: Sequence[Point]) -> list[Point]:
    return sorted((p for p in points if math.isfinite(p.value) and p.value > 0), key=lambda p: p.time)


def low_runs(runs: Sequence[Point]) -> list[bool]:
    """For each usable TCP run (time order): whether it lay below the median of the up to
    SUSPECT_BASELINE_N runs before it (False with fewer than SUSPECT_MIN_BASELINE)."""
    usable = _usable(runs)
    low: list[bool] = []
    for index, run in enumerate(usable):
        before = [p.value for p in usable[max(0, index - SUSPECT_BASELINE_N) : index]]
        low.append(len(before) >= SUSPECT_MIN_BASELINE and run.value < statistics.median(before))
    return low


def suspect(runs: Sequence[Point]) -> bool:
    """Whether the newest TCP run of the series lay below its recent median, on a path whose
    runs scatter more than SUSPECT_MIN_SCATTER: the policed path's next slot should measure
    the policer. Where TCP is steadier, its own rules find a 25 % cut by its second run and
    the daily ramp is enough."""
    usable = _usable(runs)
    flags = low_runs(usable)
    if not flags or not flags[-1]:
        return False
    before = [math.log(p.value) for p in usable[-SUSPECT_BASELINE_N - 1 : -1]]
    center = statistics.median(before)
    return MAD_TO_SIGMA * statistics.median(abs(value - center) for value in before) > SUSPECT_MIN_SCATTER


def _neighbour_low(ramp: RampPoint, runs: Sequence[Point], low: Sequence[bool]) -> Point | None:
    """The low TCP run beside the ramp: the last one before it, else the first one after it."""
    before = [index for index, run in enumerate(runs) if run.time <= ramp.time]
    after = [index for index, run in enumerate(runs) if run.time > ramp.time]
    for index in ([before[-1]] if before else []) + ([after[0]] if after else []):
        if low[index]:
            return runs[index]
    return None


def policer_rate_rule(ramps: Sequence[RampPoint], runs: Sequence[Point]) -> list[Episode]:
    """Drops of a policed path's policer rate (module docstring). `runs` are the path's TCP
    runs of one option set (Point.value in bit/s), `ramps` its measured ramps; both in any
    order. At most one episode is open at a time; its baseline is frozen while it is."""
    ordered = sorted((r for r in ramps if math.isfinite(r.rate_bps) and r.rate_bps > 0), key=lambda r: r.time)
    tcp = _usable(runs)
    low = low_runs(tcp)
    episodes: list[Episode] = []
    normal: list[float] = []  # the ramps of the normal regime
    opened: tuple[RampPoint, Point, float] | None = None  # (ramp, its TCP run, baseline)
    for ramp in ordered:
        if opened is not None:
            first, run, frozen = opened
            if ramp.rate_bps >= (1 - RAMP_DROP / 2) * frozen:
                episodes.append(_episode(first, run, frozen, ramp.time))
                opened = None
                normal.append(ramp.rate_bps)
            continue
        baseline = statistics.median(normal[-RAMP_BASELINE_N:]) if normal else None
        if baseline is not None and ramp.rate_bps < (1 - RAMP_DROP) * baseline:
            beside = _neighbour_low(ramp, tcp, low)
            if beside is not None:
                opened = (ramp, beside, baseline)
            # Unconfirmed (TCP beside it was not low, or the run after it has not come yet),
            # a low ramp is not the policer's level either: the next ramp is judged as it was.
            continue
        normal.append(ramp.rate_bps)
    if opened is not None:
        first, run, frozen = opened
        episodes.append(_episode(first, run, frozen, None))
    return episodes


def _episode(ramp: RampPoint, run: Point, baseline: float, cleared_at: datetime | None) -> Episode:
    return Episode(
        metric=Metric.THROUGHPUT,
        rule=RULE,
        started_at=min(ramp.time, run.time),
        detected_at=max(ramp.time, run.time),
        cleared_at=cleared_at,
        direction=Direction.DOWN,
        baseline=baseline,
        current=ramp.rate_bps,
        magnitude=ramp.rate_bps / baseline - 1,
        evidence={
            "ramp_rate_bps": ramp.rate_bps,
            "ramp_at": iso(ramp.time),
            "baseline_ramp_rate_bps": baseline,
            "tcp_rate_bps": run.value,
            "tcp_at": iso(run.time),
            "ramp_drop": RAMP_DROP,
        },
    )
