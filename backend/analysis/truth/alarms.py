"""The regression rules over the corpus's path series: false alarms when nothing changed, and
how soon each put-in change is found (analysis.truth.series draws the series).

For every scenario:

- unchanged series: 60 days of ping windows (RTT and loss rules), a year of throughput runs
  (both throughput rules), 30 days of sweeps (the ECMP rules). An episode that would page
  (a regression direction for throughput, RTT and loss; any ECMP change) is a false alarm,
  except an RTT step from one ECMP member the day's sweeps showed to another, which the
  service annotates;
- changed series, two trials of each size: RTT steps of 0.5, 1, 2 and 5 ms on every member
  and loss onsets of 1, 2, 5 and 10 % put in two days into the pings (the rules' baseline is
  a day); rate cuts of 10, 25 and 50 % put in after 60 runs. Found is the first episode of
  the right direction confirmed at or after the change, within a day of windows or 10 runs;
  the delay counts from the change to the end of the window that confirmed it, or the runs
  from the first cut one (1 = the first cut run itself).

A path's RTT noise is the spread of its unchanged windows' minimum after judging each within
its ECMP member, as the RTT rule measures it (analysis.changes.rtt.rtt_scale: 1.4826 x MAD, or
the interdecile range in sigmas where wider): the scale the RTT target is stated in.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from analysis.changes.ecmp import ecmp_changes
from analysis.changes.episodes import MAD_TO_SIGMA, Direction, Episode, Point
from analysis.changes.loss import loss_rule
from analysis.changes.policer_rate import policer_rate_rule
from analysis.changes.rtt import INTERDECILE_TO_SIGMA, rtt_cusum
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule
from analysis.changes.windows import RttWindow
from analysis.choices import Diagnosis
from analysis.members import Modes, member_switch, within_member
from analysis.run_judgement import JudgedRun
from analysis.truth.corpus import Scenario
from analysis.truth.series import (
    PING_WINDOW_S,
    PingChange,
    PingSource,
    PolicedSeries,
    PooledSweep,
    RunDraw,
    day_levels,
    ping_windows,
    policed_series,
    ramp_estimates,
    run_draws,
    run_points,
    seeded,
    sweep_pool,
    sweep_series,
    window_time,
)

DAY_WINDOWS = 86400 // PING_WINDOW_S
PING_DAYS = 60
THROUGHPUT_RUNS = 4 * 365
SWEEP_DAYS = 30
TRIALS = 2
RTT_STEPS_MS = (0.5, 1.0, 2.0, 5.0)
LOSS_ONSETS = (0.01, 0.02, 0.05, 0.10)
RATE_CUTS = (0.10, 0.25, 0.50)
CUT_AFTER_RUNS = 60
RUNS_AFTER_CUT = 10
YEAR_DAYS = 365.0

TARGET_FALSE_PER_YEAR = 1.0
TARGET_RTT_MINUTES = 30.0
TARGET_RTT_MIN_STEP_MS = 1.0
TARGET_RTT_NOISE_TIMES = 3.0
TARGET_CUT_RUNS = 2
TARGET_CUT_MIN = 0.25
TARGET_FOUND_SHARE = 0.95
# Two runs tell a 25 % cut from a path's own scatter with under one false alarm a year only
# where that scatter (robust sigma of ln rate) is small: at 15 % the two runs must each fall
# two sigmas low, which a 25 % cut makes them do one time in four.
STEADY_SCATTER = 0.05
SCATTER_BANDS = ((0.05, 0.10), (0.10, 0.20), (0.20, 10.0))


@dataclass(frozen=True)
class Trial:
    kind: str  # "rtt", "loss", "cut"
    size: float
    found: bool
    delay: float | None  # minutes (rtt, loss) or runs (cut)
    qualifies: bool  # the target covers this change on this path


@dataclass
class PathAlarms:
    name: str
    policed: bool
    noise_ms: float | None = None
    run_scatter: float | None = None  # robust sigma of the judged runs' ln rate
    ping_days: float = 0.0
    runs: int = 0
    ramps: int = 0  # of the runs' slots, those a ramp took (a policed path's)
    ramped: bool = False  # judged as a policed path with recorded ramps
    sweep_days: float = 0.0
    false: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    trials: list[Trial] = field(default_factory=list)


def _rtt_alarms(
    episodes: Sequence[Episode], raw: Sequence[RttWindow], modes_at: Sequence[Modes], levels: Modes
) -> list[Episode]:
    """The RTT episodes that would page: up, and not pings moving among members the day's
    sweeps showed before (analysis.services.findings.ping_member_switch)."""
    index = {window.start: i for i, window in enumerate(raw)}
    alarms: list[Episode] = []
    for episode in episodes:
        if episode.direction is not Direction.UP:
            continue
        first, last = index[episode.started_at], index[episode.detected_at] + 1
        minima = [math.nan if window.min_ms is None else window.min_ms for window in raw[first:last]]
        scale = float(episode.evidence["baseline_scale_ms"])  # type: ignore[arg-type]
        if not member_switch(episode.baseline, minima, levels, scale, modes_at[first:last]):
            alarms.append(episode)
    return alarms


def _rtt_episodes(raw: Sequence[RttWindow], modes_at: Sequence[Modes]) -> list[Episode]:
    return rtt_cusum(within_member(raw, modes_at), baseline_s=86400)


def _minutes_after(episode: Episode, change_at: int) -> float:
    confirmed = episode.detected_at + timedelta(seconds=PING_WINDOW_S)
    return (confirmed - window_time(change_at)).total_seconds() / 60


def _first_after(episodes: Sequence[Episode], change_at: int, limit: int) -> Episode | None:
    start, end = window_time(change_at), window_time(limit)
    found = [e for e in episodes if start <= e.detected_at < end]
    return min(found, key=lambda e: e.detected_at) if found else None


def ping_figures(outcome: PathAlarms, scenario: Scenario, source: PingSource, pool: Sequence[PooledSweep]) -> None:
    rng = seeded(scenario, "pings")
    windows, modes_at = ping_windows(source, PING_DAYS * DAY_WINDOWS, rng)
    levels = day_levels(pool)
    outcome.ping_days = PING_DAYS
    minima = [w.min_ms for w in within_member(windows, modes_at) if w.min_ms is not None]
    if minima:
        center = statistics.median(minima)
        mad_sigma = MAD_TO_SIGMA * statistics.median(abs(value - center) for value in minima)
        low, high = np.percentile(minima, [10, 90])
        outcome.noise_ms = max(mad_sigma, float(high - low) / INTERDECILE_TO_SIGMA)
    outcome.false["rtt"] += len(_rtt_alarms(_rtt_episodes(windows, modes_at), windows, modes_at, levels))
    outcome.false["loss"] += len(loss_rule(windows, baseline_s=86400))
    for _ in range(TRIALS):
        for step in RTT_STEPS_MS:
            at = 2 * DAY_WINDOWS + int(rng.integers(DAY_WINDOWS))
            changed, modes = ping_windows(source, at + DAY_WINDOWS, rng, PingChange(at, step_ms=step))
            # The members the day's sweeps showed before the step began.
            found = _rtt_alarms(_rtt_episodes(changed, modes), changed, modes, levels)
            episode = _first_after(found, at, at + DAY_WINDOWS)
            wanted = max(TARGET_RTT_MIN_STEP_MS, TARGET_RTT_NOISE_TIMES * (outcome.noise_ms or 0.0))
            outcome.trials.append(Trial("rtt", step, episode is not None,
                                        _minutes_after(episode, at) if episode else None, step >= wanted))  # fmt: skip
        for extra in LOSS_ONSETS:
            at = 2 * DAY_WINDOWS + int(rng.integers(DAY_WINDOWS))
            changed, _ = ping_windows(source, at + DAY_WINDOWS, rng, PingChange(at, extra_loss=extra))
            episode = _first_after(loss_rule(changed, baseline_s=86400), at, at + DAY_WINDOWS)
            outcome.trials.append(Trial("loss", extra, episode is not None,
                                        _minutes_after(episode, at) if episode else None, False))  # fmt: skip


def _drops(points: Sequence[Point]) -> list[Episode]:
    episodes = [*throughput_fast_rule(points), *throughput_slow_rule(points)]
    return [episode for episode in episodes if episode.direction is Direction.DOWN]


def _policed_drops(series: PolicedSeries) -> list[Episode]:
    """The drops that would page on a policed path: the TCP rules over its TCP runs, and the
    policer-rate rule over its ramps beside them."""
    return [*_drops(series.runs), *policer_rate_rule(series.ramps, series.runs)]


def _series(
    draws: Sequence[RunDraw], estimates: Sequence[float], count: int, rng: np.random.Generator,
    cut_at: int | None = None, cut: float = 0.0,
) -> tuple[list[Episode], list[datetime], int]:  # fmt: skip
    """The drops over count slots, the slots' times and the ramps among them: a policed
    path (estimates from its recorded ramps) fills some slots with ramps, any other runs TCP
    in every slot."""
    if estimates:
        series = policed_series(draws, estimates, count, rng, cut_at, cut)
        return _policed_drops(series), series.slot_times, len(series.ramps)
    points = run_points(draws, count, rng, cut_at, cut)
    return _drops(points), [point.time for point in points], 0


def throughput_figures(
    outcome: PathAlarms, scenario: Scenario, draws: Sequence[RunDraw], estimates: Sequence[float] = ()
) -> None:
    """False alarms over a year of slots and rate cuts put in after CUT_AFTER_RUNS; `estimates`
    (the recorded ramps' policer rates) make it a policed path's series (_series)."""
    rng = seeded(scenario, "runs")
    judged = [math.log(draw.rate_bps / draw.scale) for draw in draws]
    center = statistics.median(judged)
    outcome.run_scatter = MAD_TO_SIGMA * statistics.median(abs(value - center) for value in judged)
    drops, _, ramps = _series(draws, estimates, THROUGHPUT_RUNS, rng)
    outcome.runs = THROUGHPUT_RUNS
    outcome.ramps = ramps
    outcome.false["throughput"] += len(drops)
    for _ in range(TRIALS):
        for cut in RATE_CUTS:
            drops, times, _ = _series(draws, estimates, CUT_AFTER_RUNS + RUNS_AFTER_CUT, rng, CUT_AFTER_RUNS, cut)
            cut_time = times[CUT_AFTER_RUNS]
            found = [e for e in drops if e.detected_at >= cut_time]
            first = min(found, key=lambda e: e.detected_at) if found else None
            runs = float(times.index(first.detected_at) - CUT_AFTER_RUNS + 1) if first is not None else None
            outcome.trials.append(Trial("cut", cut, first is not None, runs, cut >= TARGET_CUT_MIN))


def sweep_figures(outcome: PathAlarms, scenario: Scenario, pool: Sequence[PooledSweep]) -> None:
    if not pool:
        return
    rng = seeded(scenario, "sweeps")
    sweeps = sweep_series(pool, SWEEP_DAYS * 96, rng)
    outcome.sweep_days = SWEEP_DAYS
    outcome.false["ecmp"] += len(ecmp_changes(sweeps))


def path_alarms(scenario: Scenario, judged: Sequence[JudgedRun]) -> PathAlarms:
    outcome = PathAlarms(scenario.name, scenario.label == "policer")
    pool = sweep_pool(scenario, seeded(scenario, "sweep pool"))
    source = PingSource.of(scenario)
    if source is not None:
        ping_figures(outcome, scenario, source, pool)
    draws = run_draws(judged)
    if len(draws) >= 2:
        # Fathom ramps a path whose runs agree it is policed (analysis/services/ramps.py).
        policed = sum(draw.label == Diagnosis.POLICER.value for draw in draws) * 2 > len(draws)
        estimates = ramp_estimates(scenario) if policed else []
        outcome.ramped = bool(estimates)
        throughput_figures(outcome, scenario, draws, estimates)
    sweep_figures(outcome, scenario, pool)
    return outcome


def _per_year(count: int, days: float) -> float | None:
    return count / (days / YEAR_DAYS) if days else None


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def report(paths: Sequence[PathAlarms]) -> list[str]:
    lines = ["", "Regression rules on the corpus's path series (bootstrapped at production cadence)"]
    lines.append(f"{'figure':<52}{'measured':>22}{'target':>12}  verdict")

    def row(name: str, measured: str, target: str, met: bool | None) -> None:
        verdict = "n/a" if met is None else ("met" if met else "MISSED")
        lines.append(f"{name:<52}{measured:>22}{target:>12}  {verdict}")

    ping_days = sum(path.ping_days for path in paths)
    run_days = sum(path.runs for path in paths) / 4
    sweep_days = sum(path.sweep_days for path in paths)
    years = f"{ping_days / YEAR_DAYS:.1f} / {run_days / YEAR_DAYS:.0f} / {sweep_days / YEAR_DAYS:.1f}"
    row("series: path-years of pings / runs / sweeps", years, "-", None)
    spans = {"rtt": ping_days, "loss": ping_days, "throughput": run_days, "ecmp": sweep_days}
    for rule, days in spans.items():
        count = sum(path.false[rule] for path in paths)
        rate = _per_year(count, days)
        row(f"false alarms per path-year: {rule} ({count} in all)", "n/a" if rate is None else f"{rate:.2f}", "< 1",
            None if rate is None else rate < TARGET_FALSE_PER_YEAR)  # fmt: skip
    policed = [path for path in paths if path.policed]
    if policed:
        count = sum(path.false["throughput"] for path in policed)
        rate = _per_year(count, sum(path.runs for path in policed) / 4)
        row(f"  throughput, policed paths only ({count})", "n/a" if rate is None else f"{rate:.2f}", "< 1",
            None if rate is None else rate < TARGET_FALSE_PER_YEAR)  # fmt: skip
    noisy = sorted(((path.false[rule], rule, path.name) for path in paths for rule in spans if path.false[rule]),
                   reverse=True)[:5]  # fmt: skip
    if noisy:
        lines.append("  most false alarms: " + ", ".join(f"{name} {rule} {count}" for count, rule, name in noisy))
    trials = [trial for path in paths for trial in path.trials]
    rtt = [trial for trial in trials if trial.kind == "rtt" and trial.qualifies]
    if rtt:
        quick = sum(1 for trial in rtt if trial.found and trial.delay is not None and trial.delay <= TARGET_RTT_MINUTES)
        share = quick / len(rtt)
        row("RTT steps >= max(1 ms, 3 x noise) found <= 30 min", f"{share:.1%} ({quick}/{len(rtt)})", ">= 95%",
            share >= TARGET_FOUND_SHARE)  # fmt: skip
    steady = {path.name for path in paths if path.run_scatter is not None and path.run_scatter <= STEADY_SCATTER}
    groups: list[tuple[str, set[str] | None]] = [
        ("rate cuts >= 25% found within 2 runs", None),
        (f"  on paths whose runs scatter <= {STEADY_SCATTER:.0%} ({len(steady)})", steady),
    ]
    # Where the rest are: a 25 % cut is 0.29 in ln rate, under two sigmas of a path scattering
    # 15 %, which two runs cannot tell from its own scatter at under one false alarm a year.
    for low, high in SCATTER_BANDS:
        band = {path.name for path in paths if path.run_scatter is not None and low < path.run_scatter <= high}
        if band:
            span = f"{low:.0%}-{high:.0%}" if high < 1 else f"over {low:.0%}"
            groups.append((f"    scatter {span} ({len(band)} {'path' if len(band) == 1 else 'paths'})", band))
    for name, names in groups:
        cuts = [trial for path in paths if names is None or path.name in names for trial in path.trials
                if trial.kind == "cut" and trial.qualifies]  # fmt: skip
        if cuts:
            quick = sum(1 for t in cuts if t.found and t.delay is not None and t.delay <= TARGET_CUT_RUNS)
            share = quick / len(cuts)
            banded = name.startswith("    ")
            row(name, f"{share:.1%} ({quick}/{len(cuts)})", "-" if banded else ">= 95%",
                None if banded else share >= TARGET_FOUND_SHARE)  # fmt: skip
    ramped = [path for path in paths if path.ramped]
    if ramped:
        # What the policer-rate rule costs: the slots its ramps take from TCP on those paths.
        per_day = sum(path.ramps for path in ramped) / (sum(path.runs for path in ramped) / 4)
        row(f"  policed paths judged with ramps ({len(ramped)}): ramps a day", f"{per_day:.2f} of 4 slots", "-", None)
    lines.append("")
    lines.append(f"  {'change':<22}{'trials':>8}{'found':>9}{'delay p50':>12}{'delay p90':>12}")
    units = {"rtt": ("ms RTT step", "min"), "loss": ("loss onset", "min"), "cut": ("rate cut", "runs")}
    for kind, (name, unit) in units.items():
        for size in sorted({trial.size for trial in trials if trial.kind == kind}):
            group = [trial for trial in trials if trial.kind == kind and trial.size == size]
            delays = [trial.delay for trial in group if trial.delay is not None]
            label = f"+{size:g} {name}" if kind == "rtt" else f"{size:.0%} {name}"
            p50 = f"{statistics.median(delays):.0f} {unit}" if delays else "-"
            p90 = f"{_quantile(delays, 0.9):.0f} {unit}" if delays else "-"
            found = sum(1 for trial in group if trial.found)
            lines.append(f"  {label:<22}{len(group):>8}{found / len(group):>9.0%}{p50:>12}{p90:>12}")
    noise = [path.noise_ms for path in paths if path.noise_ms is not None]
    if noise:
        lines.append(f"  path RTT noise (robust sigma of window minima): p50 {statistics.median(noise):.3f} ms, "
                     f"p90 {_quantile(noise, 0.9):.3f} ms, max {max(noise):.3f} ms")  # fmt: skip
    return lines
