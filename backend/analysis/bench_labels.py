"""Whether identical runs get the same label: the third table of `make bench-analysis`.

Each case is a path whose runs are the same but for their per-second noise: 10 seconds of
lognormal jitter (sigma 1%, as the lab's emulator gives) and, in a share of the runs, one
noisy second at 40-80% or 120-140% of the rate (a scheduler hiccup, a burst of cross
traffic). Every run is diagnosed as production diagnoses it, once with the robust interval
statistics (analysis.intervals) and once with the plain ones they replaced (coefficient of
variation over every second, means of the thirds), and each path of 11 runs gets its
consensus label (analysis.diagnosis.path_label). Targets: at least 99% of runs and every
path's consensus carry the expected label with the robust statistics; a ramp or sawtooth is
never called flat.

Pure: no Django settings, no database.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from analysis.choices import Diagnosis
from analysis.diagnosis import diagnose
from analysis.intervals import IntervalRow, IntervalStats, interval_stats, per_second_rows
from analysis.path_label import path_label
from analysis.runs import RunFacts, run_ceilings
from analysis.tuning import HostTuning

MIB = 2**20
RUNS_PER_PATH = 11
SECONDS = 10
JITTER_SIGMA = 0.01
TARGET_RUN_SHARE = 0.99


def _host(buffer_bytes: int) -> HostTuning:
    return HostTuning(
        kernel="6.18.0-1-amd64",
        tcp_rmem_max_bytes=buffer_bytes,
        tcp_wmem_max_bytes=buffer_bytes,
        rmem_max_bytes=4 * MIB,
        wmem_max_bytes=4 * MIB,
        adv_win_scale=1,
        congestion_control="cubic",
    )


def _facts(buffer_bytes: int) -> RunFacts:
    return RunFacts(
        streams=1,
        sender=_host(buffer_bytes),
        receiver=_host(buffer_bytes),
        congestion_control="cubic",
        pmtu_bytes=9000,
        run_min_rtt_ms=7.9,
        run_mean_rtt_ms=8.6,
        path_min_rtt_ms=7.9,
        loss_fraction=0.0,
        loss_source="ping",
    )


Shape = Callable[[np.random.Generator], list[float]]


@dataclass(frozen=True)
class LabelCase:
    name: str
    facts: RunFacts
    shape: Shape  # one run's per-second rates before the noisy second
    noisy_share: float  # runs with one noisy second
    expected: Diagnosis | None  # None: anything but "capacity" (a run that is not flat)
    snd_wnd_share: float = 0.0  # share of intervals with snd_wnd < snd_cwnd


def _flat(rate_bps: float) -> Shape:
    return lambda rng: list(rate_bps * np.exp(rng.normal(0.0, JITTER_SIGMA, SECONDS)))


def _sawtooth(low_bps: float, high_bps: float, period_s: int) -> Shape:
    def shape(rng: np.random.Generator) -> list[float]:
        phase = int(rng.integers(0, period_s))
        steps = [
            low_bps + (high_bps - low_bps) * ((second + phase) % period_s) / (period_s - 1) for second in range(SECONDS)
        ]
        return list(np.array(steps) * np.exp(rng.normal(0.0, JITTER_SIGMA, SECONDS)))

    return shape


def cases() -> list[LabelCase]:
    tuned = _facts(16 * MIB)
    return [
        LabelCase("500 Mbit/s bottleneck, 3 of 11 runs noisy", tuned, _flat(500e6), 3 / 11, Diagnosis.CAPACITY),
        LabelCase("500 Mbit/s bottleneck, every run noisy", tuned, _flat(500e6), 1.0, Diagnosis.CAPACITY),
        LabelCase(
            "6 MiB windows at 3.05 Gbit/s (seed 000), noisy",
            _facts(6 * MIB),
            _flat(3.05e9),
            3 / 11,
            Diagnosis.RECEIVE_WINDOW,
            snd_wnd_share=1.0,
        ),
        LabelCase("sawtooth 300-500 Mbit/s over 5 s", tuned, _sawtooth(300e6, 500e6, 5), 0.0, None),
        LabelCase("sawtooth 250-500 Mbit/s over 2 s", tuned, _sawtooth(250e6, 500e6, 2), 0.0, None),
    ]


def _rows(rates: Sequence[float], window_limited: bool) -> list[IntervalRow]:
    return per_second_rows(
        rates,
        retransmits=0,
        snd_cwnd_bytes=5_000_000,
        snd_wnd_bytes=3_300_000 if window_limited else 6_000_000,
        rtt_us=8600,
        pmtu=9000,
    )


def plain_stats(stats: IntervalStats, rates: Sequence[float]) -> IntervalStats:
    """The statistics before they were made robust: every second in the variation, the
    means of the thirds for slow start."""
    third = len(rates) // 3
    first, last = statistics.fmean(rates[:third]), statistics.fmean(rates[-third:])
    return replace(
        stats,
        rate_cv=statistics.pstdev(rates) / statistics.fmean(rates),
        not_converged=first > 0 and last > 1.1 * first,
    )


@dataclass(frozen=True)
class LabelRow:
    case: LabelCase
    runs: int
    robust_ok: int
    plain_ok: int
    paths: int
    consensus_ok: int

    @property
    def passed(self) -> bool:
        return self.robust_ok >= TARGET_RUN_SHARE * self.runs and self.consensus_ok == self.paths


def _ok(label: Diagnosis, expected: Diagnosis | None) -> bool:
    return label is expected if expected is not None else label is not Diagnosis.CAPACITY


def run_case(case: LabelCase, paths: int, rng: np.random.Generator) -> LabelRow:
    ceilings = run_ceilings(case.facts)
    mss = case.facts.mss_bytes
    robust_ok = plain_ok = consensus_ok = 0
    for _ in range(paths):
        labels: list[Diagnosis] = []
        for _ in range(RUNS_PER_PATH):
            rates = case.shape(rng)
            if rng.random() < case.noisy_share:
                factor = rng.uniform(0.4, 0.8) if rng.random() < 0.7 else rng.uniform(1.2, 1.4)
                rates[int(rng.integers(0, SECONDS))] *= factor
            window_limited = rng.random() < case.snd_wnd_share
            stats = interval_stats(_rows(rates, window_limited), mss)
            robust = diagnose(ceilings, stats, case.facts).label
            plain = diagnose(ceilings, plain_stats(stats, rates), case.facts).label
            robust_ok += _ok(robust, case.expected)
            plain_ok += _ok(plain, case.expected)
            labels.append(robust)
        consensus = path_label(labels)
        consensus_ok += consensus is not None and _ok(consensus.diagnosis, case.expected)
    return LabelRow(case, paths * RUNS_PER_PATH, robust_ok, plain_ok, paths, consensus_ok)


def label_rows(paths: int, base_seed: int) -> list[LabelRow]:
    return [run_case(case, paths, np.random.default_rng(base_seed * 1000 + i)) for i, case in enumerate(cases())]


def format_table(rows: Sequence[LabelRow]) -> str:
    header = (
        f"{'case':<48} {'expected':<16} {'runs':>6} {'robust':>8} {'plain':>8} {'paths':>6} {'consensus':>9}  target"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        expected = row.case.expected.value if row.case.expected is not None else "not capacity"
        lines.append(
            f"{row.case.name:<48} {expected:<16} {row.runs:>6} {row.robust_ok / row.runs:>8.1%} "
            f"{row.plain_ok / row.runs:>8.1%} {row.paths:>6} {row.consensus_ok / row.paths:>9.0%}  "
            f"{'met' if row.passed else 'MISSED'}"
        )
    return "\n".join(lines)


def header(paths: int, base_seed: int) -> str:
    return (
        f"Labels of identical runs, seeds from {base_seed}: {paths} paths of {RUNS_PER_PATH} runs per case, "
        f"{SECONDS} s each with {JITTER_SIGMA:.0%} jitter and one noisy second (40-80% or 120-140%) in a share of "
        "runs; robust/plain = runs with the expected label under the robust / the former interval statistics; "
        f"consensus = paths whose label is right; target: robust >= {TARGET_RUN_SHARE:.0%}, every consensus right"
    )
