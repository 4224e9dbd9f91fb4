"""The path cases of the false-alarm benchmark (analysis.bench_cases), the paces they run at,
and the lab noise they are bootstrapped from."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

NOISE_PATH = Path(__file__).with_name("lab_noise.json")


EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


YEAR_S = 365 * 86400


MONTH_S = YEAR_S / 12


WEEK_S = 7 * 86400


BASE_RTT_MS = 8.0


FAST_CEILING_BPS = 1e9  # the fast member's window / RTT


RUN_FRACTION = 0.94  # of its member's ceiling, where a healthy run lands


DIP_SHARE = 0.02


SWEEP_FLOWS = 16


SWEEP_SAMPLES = 10


RTT_WINDOW_S = 300


RTT_BASELINE_S = 86400


# A day of sweeps (the services' MODES_LOOKBACK) at production's 15 minutes.
MODES_LOOKBACK_SWEEPS = 96


SWEEP_VARIANTS = 6  # real per_flow_modes results cached per split of the flows over the members


TARGET_FALSE_ALARMS = 1.0


TARGET_DELAY_RUNS = 2


@dataclass(frozen=True)
class Pace:
    """A schedule: throughput every interval_s, a sweep every sweep_s, pings per RTT window."""

    name: str
    interval_s: float
    sweep_s: float
    pings_per_window: int
    span_s: float  # one series' length


PRODUCTION = Pace("year, 4 runs/day", 6 * 3600, 900, 10, YEAR_S)


DEMO = Pace("month, demo pace", 600, 120, 100, MONTH_S)


FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ScenarioNoise:
    residuals_ln: FloatArray
    load_excess_ms: tuple[FloatArray, ...]  # per member, fastest first: the flow's minimum RTT above its member's
    sweep_excess_ms: FloatArray  # a sweep sample above its flow's minimum
    ping_excess_ms: FloatArray  # a ping sample above the ping's minimum
    runs: int


@dataclass(frozen=True)
class LabNoise:
    captured_at: str
    single: ScenarioNoise
    ecmp: ScenarioNoise
    ecmp_cpu_bound: ScenarioNoise | None  # the ECMP path at its own buffers: the emulator's CPU adds slow bursts
    lab_dips: int  # runs more than 20% below their member's median in the lab

    def for_case(self, case: Case) -> ScenarioNoise:
        if case.cpu_bound_noise and self.ecmp_cpu_bound is not None:
            return self.ecmp_cpu_bound
        return self.ecmp if case.ecmp else self.single


def float_array(values: Sequence[float]) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _scenario_noise(raw: dict[str, Any]) -> ScenarioNoise:
    members = raw["members_rtt_ms"]
    excess = tuple(
        float_array(
            [max(0.0, run["min_rtt_ms"] - rtt) for run in raw["runs"] if run["member"] == index and run["min_rtt_ms"]]
        )
        for index, rtt in enumerate(members)
    )
    sweep = [value for member in raw["sweep_excess_ms"] for value in member]
    return ScenarioNoise(
        residuals_ln=float_array(raw["residuals_ln"]),
        load_excess_ms=excess,
        sweep_excess_ms=float_array(sweep),
        ping_excess_ms=float_array(raw["ping_excess_ms"]),
        runs=len(raw["runs"]),
    )


def load_noise(path: Path = NOISE_PATH) -> LabNoise:
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `make lab-noise` (root) to capture it")
    document = json.loads(path.read_text())
    scenarios = document["scenarios"]
    single, ecmp = _scenario_noise(scenarios["single-path"]), _scenario_noise(scenarios["grnet-ecmp"])
    cpu_bound = _scenario_noise(scenarios["grnet-ecmp-cpu-bound"]) if "grnet-ecmp-cpu-bound" in scenarios else None
    dips = sum(int(value < math.log(0.8)) for noise in (single, ecmp) for value in noise.residuals_ln)
    return LabNoise(document["captured_at"], single, ecmp, cpu_bound, dips)


@dataclass(frozen=True)
class Case:
    """A path: its ECMP members and weights, and what happens on it in a change-free year."""

    name: str
    weights: tuple[float, ...] = (1.0,)  # fast member first
    gap: float = 0.0  # the slow member's RTT is BASE x (1 + gap)
    step_at: float | None = None  # a tuning step of rate and ceiling at this share of the series
    step_factor: float = 1.0
    drift_per_week: tuple[float, float] = (0.0, 0.0)  # rate falling by a share per week, drawn per seed
    # Every member's flows queue like the lab's fast member's (up to 1.3 ms above its RTT), not
    # like its slow member's (up to 0.65 ms): a stress variant of attribution.
    pooled_excess: bool = False
    cpu_bound_noise: bool = False  # residuals of the lab's CPU-bound capture (bursts of runs 9-13% slow)

    @property
    def ecmp(self) -> bool:
        return len(self.weights) > 1

    @property
    def member_rtts_ms(self) -> tuple[float, ...]:
        return (BASE_RTT_MS, BASE_RTT_MS * (1 + self.gap)) if self.ecmp else (BASE_RTT_MS,)

    @property
    def shares(self) -> FloatArray:
        weights = float_array(self.weights)
        return float_array(weights / weights.sum())


def cases() -> list[Case]:
    found = [Case("single path")]
    for fast, slow in ((1, 1), (3, 1), (127, 1)):
        for gap in (0.02, 0.10, 0.35):
            found.append(Case(f"ECMP {fast}:{slow}, gap {gap:.0%}", (float(fast), float(slow)), gap))
    found.append(Case("ECMP 1:1, gap 35%, slow member queues", (1.0, 1.0), 0.35, pooled_excess=True))
    found.append(Case("ECMP 3:1, gap 35%, CPU-bound lab noise", (3.0, 1.0), 0.35, cpu_bound_noise=True))
    found.append(Case("tuning step up x1.5 mid-series", step_at=0.5, step_factor=1.5))
    found.append(Case("slowly filling link, -1..2%/week", drift_per_week=(0.01, 0.02)))
    return found
