"""How fast each regression rule of analysis.changes catches a known change, and how often it cries wolf.

Every rule runs on synthetic series with seeded noise: series with one change at a known
point (how many it catches, how many points and hours it takes, whether `started_at` lands on
the change) and change-free series a path-year long (false alarms per path-year at the rule's
cadence). Noise models, meant to look like real paths rather than textbook ones:

- throughput, 4 tests/day: ln(rate) normal with sigma 0.05 or 0.1 (lognormal), plus deep dips
  (2% of tests, to 5-50% of the rate, a fifth of them two tests long);
- RTT, 5-minute windows of 50 probes on an 8 ms path: min = base + exponential 0.02 ms, and 1%
  of windows raised by an exponential 1 ms (a busy 5 minutes); p50 = min + 0.25 ms + a diurnal
  swing of +/-0.15 ms + exponential 0.1 ms (load from one window to the next);
- loss, 5-minute windows of 300 probes: binomial at 0.1%, and 0.2% of windows a burst of
  1-5% loss;
- routes, a trace every 10 min: 4 ECMP members, each run sees the members its 4 flows (or 1)
  hash onto.

Delay is counted in points after the first changed one (0 = confirmed by the first changed
point itself; the fast rule confirms a deep drop on its second point, so its floor is 1) and
in hours at the cadence. A detection is the first episode of the right direction confirmed at
or after the change; an episode confirmed before it is a false alarm, except a fast-rule
episode on an injected two-test dip: two runs at 5-50% of the rate are a drop that really
happened, which the fast rule (two runs 20% down) is meant to report; those are counted as
"dips found", not as false alarms.

The second table (analysis.bench_cases) is the false-alarm benchmark per path case (single
path; ECMP 1:1, 3:1 and 127:1 at RTT gaps of 2%, 10% and 35%; a tuning step; a slowly filling
link), a year at 4 runs a day and a month at the demo's pace, on noise bootstrapped from real
lab runs (analysis/lab_noise.json, `make lab-noise`), with every run judged against its ECMP
member as production judges it. Its targets: under 1 false alarm per path-year, a -30% drop
found within 2 runs.

The third table (analysis.bench_labels) asks whether identical runs get the same label: paths
whose runs differ only by per-second noise and one noisy second, diagnosed with the robust
interval statistics and with the plain ones they replaced, and each path's consensus label.

    cd backend && python -m analysis.bench_analysis    # or: make bench-analysis

Needs no Django settings: analysis.changes, the diagnosis and the interval statistics are pure.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from analysis import bench_case_model, bench_cases, bench_labels
from analysis.changes.episodes import Direction, Episode, Point
from analysis.changes.loss import loss_rule
from analysis.changes.routes import route_changes
from analysis.changes.rtt import RttStatistic, rtt_cusum
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule
from analysis.changes.windows import RttWindow

# 2026-01-01T00:00:00Z: a fixed epoch keeps runs comparable from one machine to the next.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
YEAR_S = 365 * 86400
THROUGHPUT_INTERVAL_S = 6 * 3600
WINDOW_S = 300
TRACE_INTERVAL_S = 600
BASE_RATE_BPS = 940e6
BASE_RTT_MS = 8.0
PROBES_PER_WINDOW = 300  # loss: one probe a second


# Builds one seeded series and runs a rule on it: the series' point times, the episodes that
# are not about an injected dip, and how many episodes were (real dips the rule reported).
Maker = Callable[[np.random.Generator], tuple[list[datetime], list[Episode], int]]


@dataclass(frozen=True)
class Outcome:
    """What a rule found in one series: detection index, its start index, and false alarms."""

    detected: int | None
    started: int | None
    false_alarms: int


@dataclass(frozen=True)
class BenchRow:
    rule: str
    scenario: str
    series: int
    detected: int | None  # None for change-free scenarios
    delays: list[int]
    start_ok: int
    interval_s: float
    false_alarms: int
    change_free_points: int
    reference: str = ""
    dips_found: int = 0

    def delay_text(self, quantile: float) -> str:
        if not self.delays:
            return "-"
        points = float(np.quantile(self.delays, quantile, method="lower"))
        seconds = points * self.interval_s
        return f"{points:.0f} / {seconds / 60:.0f} min" if seconds < 3600 else f"{points:.0f} / {seconds / 3600:.0f} h"

    @property
    def change_free_years(self) -> float:
        """Path-years of change-free data watched: whole series, or the part before the change."""
        return self.change_free_points * self.interval_s / YEAR_S

    @property
    def false_alarms_per_year(self) -> float:
        years = self.change_free_years
        return self.false_alarms / years if years else math.nan


def _seeds(base: int, count: int) -> list[int]:
    return [base * 100_000 + seed for seed in range(count)]


# --- synthetic series -------------------------------------------------------------------------


def throughput_series(
    rng: np.random.Generator, n: int, sigma_ln: float, change_at: int | None, factor: float
) -> tuple[list[Point], set[int]]:
    """The series and the indices of its injected dips."""
    ln_rates = np.log(BASE_RATE_BPS) + rng.normal(0.0, sigma_ln, n)
    if change_at is not None:
        ln_rates[change_at:] += math.log(factor)
    dipped: set[int] = set()
    for start in np.flatnonzero(rng.random(n) < 0.02):
        length = 2 if rng.random() < 0.2 else 1
        ln_rates[start : start + length] += np.log(rng.uniform(0.05, 0.5))
        dipped.update(range(int(start), min(n, int(start) + length)))
    points = [
        Point(EPOCH + timedelta(seconds=i * THROUGHPUT_INTERVAL_S), float(rate))
        for i, rate in enumerate(np.exp(ln_rates))
    ]
    return points, dipped


def dip_episode(episode: Episode, index: dict[datetime, int], dipped: set[int]) -> bool:
    """A fast-rule episode confirmed on an injected dip: a real dip found, not a false alarm.

    Two runs in a row at 5-50% of the rate are a drop that happened (and cleared); the fast
    rule opens on two runs 20% down, so it reports them. The slow rule winsorizes them away.
    """
    if episode.rule != "throughput_fast":
        return False
    return any(i in dipped for i in range(index[episode.started_at], index[episode.detected_at] + 1))


def _window_times(n: int) -> list[datetime]:
    return [EPOCH + timedelta(seconds=i * WINDOW_S) for i in range(n)]


def rtt_series(rng: np.random.Generator, n: int, change_at: int | None, shift_ms: float) -> list[RttWindow]:
    minimum = BASE_RTT_MS + rng.exponential(0.02, n)
    busy = rng.random(n) < 0.01
    minimum[busy] += rng.exponential(1.0, int(busy.sum()))
    hours = np.arange(n) * WINDOW_S / 3600
    # The median of 50 probes barely varies by itself; what moves it is load: a diurnal swing
    # and window-to-window variation, and the busy windows that raised the minimum.
    p50 = minimum + 0.25 + 0.15 * np.sin(2 * np.pi * hours / 24) + rng.exponential(0.1, n)
    if change_at is not None:
        minimum[change_at:] += shift_ms
        p50[change_at:] += shift_ms
    p90 = p50 + 0.3 + rng.exponential(0.2, n)
    times = _window_times(n + 1)
    return [RttWindow(times[i], times[i + 1], 50, 0, float(minimum[i]), float(p50[i]), float(p90[i])) for i in range(n)]


def loss_series(rng: np.random.Generator, n: int, change_at: int | None, added_pp: float) -> list[RttWindow]:
    rate = np.full(n, 0.001)
    bursts = rng.random(n) < 0.002
    rate[bursts] = rng.uniform(0.01, 0.05, int(bursts.sum()))
    if change_at is not None:
        rate[change_at:] += added_pp / 100
    lost = rng.binomial(PROBES_PER_WINDOW, rate)
    times = _window_times(n + 1)
    return [
        RttWindow(times[i], times[i + 1], PROBES_PER_WINDOW, int(lost[i]), BASE_RTT_MS, BASE_RTT_MS, BASE_RTT_MS)
        for i in range(n)
    ]


def route_series(
    rng: np.random.Generator, n: int, change_at: int | None, replaced: int, flows: int, members: int = 4
) -> list[tuple[datetime, frozenset[str]]]:
    before = [f"fp-a{i}" for i in range(members)]
    after = [f"fp-b{i}" for i in range(replaced)] + before[replaced:]
    picks = rng.integers(0, members, (n, flows))
    return [
        (
            EPOCH + timedelta(seconds=i * TRACE_INTERVAL_S),
            frozenset((after if change_at is not None and i >= change_at else before)[j] for j in picks[i]),
        )
        for i in range(n)
    ]


# --- scoring ----------------------------------------------------------------------------------


def score(
    episodes: Sequence[Episode], times: Sequence[datetime], change_at: int | None, direction: Direction
) -> Outcome:
    index = {moment: i for i, moment in enumerate(times)}
    if change_at is None:
        return Outcome(None, None, len(episodes))
    false_alarms = sum(1 for episode in episodes if index[episode.detected_at] < change_at)
    hits = [
        episode for episode in episodes if index[episode.detected_at] >= change_at and episode.direction is direction
    ]
    if not hits:
        return Outcome(None, None, false_alarms)
    first = min(hits, key=lambda episode: episode.detected_at)
    return Outcome(index[first.detected_at], index[first.started_at], false_alarms)


@dataclass(frozen=True)
class Scenario:
    """One table row to simulate: a rule on series of n points with a change at change_at (or none)."""

    rule: str
    name: str
    make: Maker
    n: int
    change_at: int | None
    interval_s: float
    direction: Direction = Direction.UP
    start_tolerance: int = 1
    reference: str = ""


def run(scenario: Scenario, seeds: list[int]) -> BenchRow:
    delays: list[int] = []
    start_ok = false_alarms = detected = dips_found = 0
    change_at = scenario.change_at
    for seed in seeds:
        times, episodes, dips = scenario.make(np.random.default_rng(seed))
        dips_found += dips
        outcome = score(episodes, times, change_at, scenario.direction)
        false_alarms += outcome.false_alarms
        if outcome.detected is not None and outcome.started is not None and change_at is not None:
            detected += 1
            delays.append(outcome.detected - change_at)
            start_ok += abs(outcome.started - change_at) <= scenario.start_tolerance
    return BenchRow(
        rule=scenario.rule,
        scenario=scenario.name,
        series=len(seeds),
        detected=detected if change_at is not None else None,
        delays=delays,
        start_ok=start_ok,
        interval_s=scenario.interval_s,
        false_alarms=false_alarms,
        change_free_points=len(seeds) * (change_at if change_at is not None else scenario.n),
        reference=scenario.reference,
        dips_found=dips_found,
    )


def throughput_maker(
    rule: Callable[[list[Point]], list[Episode]], n: int, sigma: float, change_at: int | None, factor: float
) -> Maker:
    def make(rng: np.random.Generator) -> tuple[list[datetime], list[Episode], int]:
        points, dipped = throughput_series(rng, n, sigma, change_at, factor)
        times = [point.time for point in points]
        index = {moment: i for i, moment in enumerate(times)}
        episodes = rule(points)
        # Only before the change: after it, an episode is the change's (or one it hides).
        found = [
            episode
            for episode in episodes
            if dip_episode(episode, index, dipped) and (change_at is None or index[episode.detected_at] < change_at)
        ]
        return times, [episode for episode in episodes if episode not in found], len(found)

    return make


def rtt_maker(n: int, change_at: int | None, shift_ms: float, statistic: RttStatistic) -> Maker:
    def make(rng: np.random.Generator) -> tuple[list[datetime], list[Episode], int]:
        windows = rtt_series(rng, n, change_at, shift_ms)
        return [w.start for w in windows], rtt_cusum(windows, statistic=statistic), 0

    return make


def loss_maker(n: int, change_at: int | None, added_pp: float) -> Maker:
    def make(rng: np.random.Generator) -> tuple[list[datetime], list[Episode], int]:
        windows = loss_series(rng, n, change_at, added_pp)
        return [w.start for w in windows], loss_rule(windows), 0

    return make


def route_maker(n: int, change_at: int | None, replaced: int, flows: int) -> Maker:
    def make(rng: np.random.Generator) -> tuple[list[datetime], list[Episode], int]:
        traces = route_series(rng, n, change_at, replaced, flows)
        return [moment for moment, _ in traces], route_changes(traces), 0

    return make


def throughput_rows(change_seeds: int, years: int, base_seed: int) -> list[BenchRow]:
    n, change_at = 180, 120  # 30 days of history, 15 after
    year_n = YEAR_S // THROUGHPUT_INTERVAL_S
    interval = THROUGHPUT_INTERVAL_S
    rows: list[BenchRow] = []
    for drop, sigma, reference in ((0.2, 0.05, "83% in 2 tests"), (0.3, 0.05, "99% in 2 tests"), (0.3, 0.1, "")):
        make = throughput_maker(throughput_fast_rule, n, sigma, change_at, 1 - drop)
        scenario = Scenario(
            "throughput_fast",
            f"{drop:.0%} drop, sigma {sigma}",
            make,
            n,
            change_at,
            interval,
            Direction.DOWN,
            reference=reference,
        )
        rows.append(run(scenario, _seeds(base_seed + 1, change_seeds)))
    for sigma in (0.05, 0.1):
        make = throughput_maker(throughput_fast_rule, year_n, sigma, None, 1.0)
        scenario = Scenario(
            "throughput_fast", f"no change, sigma {sigma}", make, year_n, None, interval, reference="0.26"
        )
        rows.append(run(scenario, _seeds(base_seed + 2, years)))
    for step, sigma in ((-0.1, 0.05), (-0.1, 0.1), (0.1, 0.05)):
        make = throughput_maker(throughput_slow_rule, n, sigma, change_at, 1 + step)
        direction = Direction.DOWN if step < 0 else Direction.UP
        scenario = Scenario(
            "throughput_slow",
            f"{step:+.0%} step, sigma {sigma}",
            make,
            n,
            change_at,
            interval,
            direction,
            start_tolerance=2,
        )
        rows.append(run(scenario, _seeds(base_seed + 3, change_seeds)))
    for sigma in (0.05, 0.1):
        make = throughput_maker(throughput_slow_rule, year_n, sigma, None, 1.0)
        scenario = Scenario("throughput_slow", f"no change, sigma {sigma}", make, year_n, None, interval)
        rows.append(run(scenario, _seeds(base_seed + 4, years)))
    return rows


def rtt_rows(change_seeds: int, years: float, base_seed: int) -> list[BenchRow]:
    n, change_at = 576, 432  # a day and a half of history (the baseline is a day), half a day after
    year_n = int(years * YEAR_S // WINDOW_S)
    rows: list[BenchRow] = []
    statistics: tuple[RttStatistic, ...] = ("min_ms", "p50_ms")
    for statistic in statistics:
        for shift in (2.0, 1.0):
            make = rtt_maker(n, change_at, shift, statistic)
            name = f"{shift:+g} ms on {BASE_RTT_MS:g} ms, {statistic}"
            rows.append(
                run(Scenario("rtt_cusum", name, make, n, change_at, WINDOW_S), _seeds(base_seed + 5, change_seeds))
            )
        make = rtt_maker(year_n, None, 0.0, statistic)
        scenario = Scenario(
            "rtt_cusum",
            f"no change, {statistic}",
            make,
            year_n,
            None,
            WINDOW_S,
            reference="~12 without the effect floor (ARL ~9000)",
        )
        rows.append(run(scenario, _seeds(base_seed + 6, 1)))
    return rows


def loss_rows(change_seeds: int, years: float, base_seed: int) -> list[BenchRow]:
    n, change_at = 576, 432
    year_n = int(years * YEAR_S // WINDOW_S)
    rows: list[BenchRow] = []
    for added in (1.0, 2.0):
        make = loss_maker(n, change_at, added)
        name = f"+{added:g} pp on 0.1%, {PROBES_PER_WINDOW}/window"
        rows.append(run(Scenario("loss", name, make, n, change_at, WINDOW_S), _seeds(base_seed + 7, change_seeds)))
    make = loss_maker(year_n, None, 0.0)
    rows.append(
        run(Scenario("loss", "no change (rare bursts)", make, year_n, None, WINDOW_S), _seeds(base_seed + 8, 1))
    )
    return rows


def route_rows(change_seeds: int, years: int, base_seed: int) -> list[BenchRow]:
    n, change_at = 432, 288  # two days of history, one after
    year_n = YEAR_S // TRACE_INTERVAL_S
    rows: list[BenchRow] = []
    for replaced, flows, label in ((4, 4, "new route"), (4, 1, "new route"), (1, 4, "1 of 4 members replaced")):
        make = route_maker(n, change_at, replaced, flows)
        name = f"{label}, {flows} flow{'s' if flows > 1 else ''}/run"
        scenario = Scenario("route", name, make, n, change_at, TRACE_INTERVAL_S)
        rows.append(run(scenario, _seeds(base_seed + 9, change_seeds)))
    for flows in (4, 1):
        make = route_maker(year_n, None, 0, flows)
        name = f"ECMP alternation, {flows} flow{'s' if flows > 1 else ''}/run"
        rows.append(run(Scenario("route", name, make, year_n, None, TRACE_INTERVAL_S), _seeds(base_seed + 10, years)))
    return rows


def format_table(rows: list[BenchRow]) -> str:
    header = (
        f"{'rule':<16} {'scenario':<36} {'series':>6} {'detected':>8} {'delay median':>14} {'delay p90':>14} "
        f"{'start ok':>8} {'path-years':>10} {'false alarms':>12} {'per path-year':>13} {'dips found':>10}  reference"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        detected = f"{row.detected / row.series:.0%}" if row.detected is not None else "-"
        start_ok = f"{row.start_ok / len(row.delays):.0%}" if row.delays else "-"
        lines.append(
            f"{row.rule:<16} {row.scenario:<36} {row.series:>6} {detected:>8} {row.delay_text(0.5):>14} "
            f"{row.delay_text(0.9):>14} {start_ok:>8} {row.change_free_years:>10.1f} {row.false_alarms:>12} "
            f"{row.false_alarms_per_year:>13.2f} {row.dips_found if row.rule == 'throughput_fast' else '':>10}  "
            f"{row.reference}".rstrip()
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--seeds", type=int, default=200, help="series per throughput and route change scenario; RTT and loss get half"
    )
    parser.add_argument(
        "--years",
        type=int,
        default=40,
        help="path-years per change-free throughput scenario; routes get a tenth, RTT and loss 2 (5-min windows)",
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of everything: a smoke run")
    parser.add_argument("--base-seed", type=int, default=1, help="first seed of the noise")
    args = parser.parse_args()
    change_seeds = max(1, args.seeds // 10) if args.quick else args.seeds
    years = max(1, args.years // 10) if args.quick else args.years
    window_years = 0.2 if args.quick else 2.0
    started = time.perf_counter()
    rows = [
        *throughput_rows(change_seeds, years, args.base_seed),
        *rtt_rows(change_seeds // 2 or 1, window_years, args.base_seed),
        *loss_rows(change_seeds // 2 or 1, window_years, args.base_seed),
        *route_rows(change_seeds, max(1, years // 10), args.base_seed),
    ]
    print(
        f"Regression rules on synthetic series, seeds from {args.base_seed}: delay in points after the first "
        "changed one / time; start ok = started_at within 1 point of the change (2 for throughput_slow); "
        "dips found = two-run dips of 5-50% the fast rule reported (real dips, not false alarms); "
        "noise models in --help"
    )
    print(format_table(rows))
    print(f"elapsed {time.perf_counter() - started:.1f} s", flush=True)
    print()
    started = time.perf_counter()
    noise = bench_case_model.load_noise()
    budget = bench_cases.Budget()
    budget = budget.quick() if args.quick else budget
    case_rows = bench_cases.case_rows(noise, budget, args.base_seed)
    print(bench_cases.header(noise, args.base_seed, budget))
    print(bench_cases.format_table(case_rows))
    failed = [row for row in case_rows if not row.passed]
    elapsed = time.perf_counter() - started
    print(f"{len(case_rows) - len(failed)} of {len(case_rows)} rows meet the targets; elapsed {elapsed:.1f} s")
    print()
    started = time.perf_counter()
    paths = 10 if args.quick else 100
    label_rows = bench_labels.label_rows(paths, args.base_seed)
    print(bench_labels.header(paths, args.base_seed))
    print(bench_labels.format_table(label_rows))
    missed = [row for row in label_rows if not row.passed]
    elapsed = time.perf_counter() - started
    print(f"{len(label_rows) - len(missed)} of {len(label_rows)} rows meet the targets; elapsed {elapsed:.1f} s")


if __name__ == "__main__":
    main()
