"""The regression detectors on synthetic series with known change points and seeded noise."""

from __future__ import annotations

import json
import math
import random
import statistics
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from scipy import stats

from analysis.changes import (
    Direction,
    Episode,
    Metric,
    Point,
    RollingRobust,
    RttWindow,
    _welch_p_prefixes,
    energy_statistic,
    loss_rule,
    route_changes,
    rtt_cusum,
    rtt_windows,
    throughput_fast_rule,
    throughput_slow_rule,
    welch_p,
    winsorize_outliers,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEST_INTERVAL = timedelta(hours=6)
RATE_BPS = 940e6


def at(index: int) -> datetime:
    return T0 + index * TEST_INTERVAL


def rates(values: np.ndarray | list[float]) -> list[Point]:
    return [Point(at(i), float(value)) for i, value in enumerate(values)]


def noisy_rates(seed: int, n: int, sigma: float = 0.05, steps: dict[int, float] | None = None) -> np.ndarray:
    """RATE_BPS with lognormal noise; steps maps an index to the factor from there on."""
    rng = np.random.default_rng(seed)
    values = RATE_BPS * np.exp(rng.normal(0.0, sigma, n))
    for index, factor in (steps or {}).items():
        values[index:] *= factor
    return values


def assert_json(episodes: list[Episode]) -> None:
    for episode in episodes:
        json.dumps(episode.evidence, allow_nan=False)


# --- throughput_fast_rule ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_fast_rule_opens_on_a_30_percent_drop_within_3_points(seed: int) -> None:
    episodes = throughput_fast_rule(rates(noisy_rates(seed, 60, steps={40: 0.7})))
    assert len(episodes) == 1
    episode = episodes[0]
    assert episode.metric is Metric.THROUGHPUT
    assert episode.rule == "throughput_fast"
    assert episode.direction is Direction.DOWN
    assert episode.started_at == at(40)
    assert episode.detected_at == at(42)  # the third changed point confirms it
    assert episode.cleared_at is None
    assert episode.magnitude == pytest.approx(-0.3, abs=0.08)  # the median of 3 noisy points
    assert episode.baseline == pytest.approx(RATE_BPS, rel=0.05)
    assert episode.current == pytest.approx(0.7 * RATE_BPS, rel=0.07)
    assert_json(episodes)


def test_fast_rule_clears_after_recovery_and_carries_on() -> None:
    values = noisy_rates(1, 100, steps={40: 0.6, 50: 1 / 0.6, 80: 0.5})
    episodes = throughput_fast_rule(rates(values))
    assert [(e.started_at, e.detected_at, e.cleared_at) for e in episodes] == [
        (at(40), at(42), at(50)),
        (at(80), at(82), None),
    ]
    assert episodes[0].evidence["clear_confirmed_at"] == at(52).isoformat()
    assert episodes[1].magnitude == pytest.approx(-0.5, abs=0.05)
    # The first episode's points never became baseline: the second one is measured against
    # the level before and after the first, not a mix with the degraded points.
    assert episodes[1].baseline == pytest.approx(RATE_BPS, rel=0.05)


def test_fast_rule_does_not_clear_while_recovery_is_unconfirmed() -> None:
    values = noisy_rates(2, 52, steps={40: 0.6, 50: 1 / 0.6})  # two recovered points only
    (episode,) = throughput_fast_rule(rates(values))
    assert episode.cleared_at is None


@pytest.mark.parametrize("sigma", [0.05, 0.1])
def test_fast_rule_is_quiet_on_stable_lognormal_noise(sigma: float) -> None:
    for seed in range(40):
        assert throughput_fast_rule(rates(noisy_rates(seed, 400, sigma))) == []


def test_fast_rule_ignores_one_and_two_point_dips() -> None:
    values = noisy_rates(3, 200)
    values[50] *= 0.1
    values[100:102] *= 0.2
    values[150] = values[152] = 0.3 * RATE_BPS  # a recovered point between two dips
    assert throughput_fast_rule(rates(values)) == []


@pytest.mark.parametrize("n", [0, 1, 3, 12])
def test_fast_rule_needs_a_baseline(n: int) -> None:
    values = noisy_rates(4, n, steps={min(n, 10): 0.5})
    assert throughput_fast_rule(rates(values)) == []  # fewer than 10 baseline + 3 points


def test_fast_rule_skips_zero_negative_and_nan_rates() -> None:
    points = rates(noisy_rates(5, 60, steps={40: 0.7}))
    broken = [
        Point(at(10) + timedelta(minutes=1), 0.0),
        Point(at(20) + timedelta(minutes=1), -1.0),
        Point(at(30) + timedelta(minutes=1), math.nan),
        Point(at(41) + timedelta(minutes=1), math.inf),
    ]
    (episode,) = throughput_fast_rule(points + broken)
    assert (episode.started_at, episode.detected_at) == (at(40), at(42))
    assert episode.evidence["skipped_nonpositive"] == 2
    assert episode.evidence["skipped_nonfinite"] == 2
    assert throughput_fast_rule([Point(at(i), 0.0) for i in range(50)]) == []


def test_fast_rule_sorts_its_input_and_is_idempotent() -> None:
    points = rates(noisy_rates(6, 100, steps={40: 0.6, 50: 1 / 0.6, 80: 0.5}))
    shuffled = points[:]
    random.Random(6).shuffle(shuffled)
    first = throughput_fast_rule(points)
    assert len(first) == 2
    assert throughput_fast_rule(shuffled) == first
    assert throughput_fast_rule(points) == first


def test_fast_rule_finds_the_same_episode_in_a_longer_series() -> None:
    values = noisy_rates(7, 100, steps={40: 0.6})
    early = throughput_fast_rule(rates(values[:45]))
    late = throughput_fast_rule(rates(values))
    assert early == late


def test_fast_rule_on_quiet_and_flat_paths() -> None:
    # A lab path with 0.1% noise: winsorizing must not hide a 50% drop, and a 5% dip is
    # below the 10% minimum effect.
    quiet = noisy_rates(8, 60, sigma=0.001, steps={30: 0.95, 40: 0.5 / 0.95})
    (episode,) = throughput_fast_rule(rates(quiet))
    assert episode.started_at == at(40)
    assert episode.magnitude == pytest.approx(-0.5, abs=0.01)
    flat = [RATE_BPS] * 30 + [0.85 * RATE_BPS] * 5
    (episode,) = throughput_fast_rule(rates(flat))
    assert episode.started_at == at(30)
    assert episode.evidence["sigma_r_ln"] == 0.0
    assert throughput_fast_rule(rates([RATE_BPS] * 30 + [0.95 * RATE_BPS] * 5)) == []


def test_fast_rule_starts_a_late_confirmed_drop_where_it_began() -> None:
    values = [RATE_BPS * (1 + 0.01 * (i % 3)) for i in range(40)] + [0.6 * RATE_BPS] * 2
    values += [0.95 * RATE_BPS] + [0.6 * RATE_BPS] * 5  # one point back near normal
    (episode,) = throughput_fast_rule(rates(values))
    assert episode.started_at == at(43)  # the run that confirmed it; the one before was broken
    assert episode.detected_at == at(45)


def test_fast_rule_rejects_nonsense_parameters() -> None:
    with pytest.raises(ValueError, match="confirm_n"):
        throughput_fast_rule([], confirm_n=0)


# --- throughput_slow_rule ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_slow_rule_finds_a_10_percent_step(seed: int) -> None:
    episodes = throughput_slow_rule(rates(noisy_rates(seed, 100, sigma=0.03, steps={50: 0.9})))
    assert len(episodes) == 1
    episode = episodes[0]
    assert episode.rule == "throughput_slow"
    assert episode.direction is Direction.DOWN
    assert abs((episode.started_at - T0) / TEST_INTERVAL - 50) <= 2
    assert episode.magnitude == pytest.approx(-0.1, abs=0.03)
    assert at(50) <= episode.detected_at <= at(60)
    assert float(episode.evidence["p_value"]) <= 1e-4  # type: ignore[arg-type]
    assert_json(episodes)


def test_slow_rule_finds_a_step_up() -> None:
    (episode,) = throughput_slow_rule(rates(noisy_rates(11, 100, sigma=0.03, steps={60: 1.12})))
    assert episode.direction is Direction.UP
    assert episode.started_at == at(60)
    assert episode.magnitude == pytest.approx(0.12, abs=0.03)


def test_slow_rule_is_quiet_on_a_stationary_series() -> None:
    for seed in range(20):
        assert throughput_slow_rule(rates(noisy_rates(seed, 200, sigma=0.05))) == []


def test_slow_rule_ignores_steps_below_the_minimum_effect() -> None:
    values = noisy_rates(12, 100, sigma=0.005, steps={50: 0.97})  # significant, but only 3%
    assert throughput_slow_rule(rates(values)) == []


def test_slow_rule_clears_when_the_level_returns() -> None:
    values = noisy_rates(13, 150, sigma=0.03, steps={50: 0.85, 100: 1 / 0.85})
    (episode,) = throughput_slow_rule(rates(values))
    assert episode.started_at == at(50)
    assert episode.cleared_at == at(100)


def test_slow_rule_on_short_flat_and_broken_series() -> None:
    assert throughput_slow_rule([]) == []
    assert throughput_slow_rule(rates([RATE_BPS] * 9)) == []
    assert throughput_slow_rule(rates([RATE_BPS] * 60)) == []
    (episode,) = throughput_slow_rule(rates([RATE_BPS] * 30 + [0.8 * RATE_BPS] * 30))
    assert episode.started_at == at(30)
    assert episode.magnitude == pytest.approx(-0.2)
    values = list(noisy_rates(14, 100, sigma=0.03, steps={50: 0.9}))
    values[20] = math.nan
    values[70] = 0.0
    (episode,) = throughput_slow_rule(rates(values))
    assert episode.started_at == at(50)
    # Counted within the two segments the change rests on: the 0 at 70 is, the NaN at 20 is not.
    assert (episode.evidence["skipped_nonpositive"], episode.evidence["skipped_nonfinite"]) == (1, 0)


def test_slow_rule_sorts_its_input_and_is_idempotent() -> None:
    points = rates(noisy_rates(15, 150, sigma=0.03, steps={50: 0.85, 110: 0.8}))
    shuffled = points[:]
    random.Random(15).shuffle(shuffled)
    first = throughput_slow_rule(points)
    assert [e.started_at for e in first] == [at(50), at(110)]
    assert throughput_slow_rule(shuffled) == first
    assert throughput_slow_rule(points) == first


def test_slow_rule_is_not_dragged_by_deep_dips() -> None:
    values = noisy_rates(16, 100, sigma=0.03, steps={50: 0.9})
    values[[10, 30, 45, 70, 90]] *= 0.05
    (episode,) = throughput_slow_rule(rates(values))
    assert abs((episode.started_at - T0) / TEST_INTERVAL - 50) <= 2


def test_energy_statistic_peaks_at_the_step() -> None:
    values = np.array([0.0] * 20 + [1.0] * 30)
    q = energy_statistic(values, 5)
    assert int(np.argmax(q)) == 20
    assert np.isneginf(q[:5]).all() and np.isneginf(q[46:]).all()
    assert np.isneginf(energy_statistic(values[:9], 5)).all()


def test_welch_p_matches_scipy_and_handles_constant_sides() -> None:
    rng = np.random.default_rng(17)
    left, right = rng.normal(0, 1, 20), rng.normal(0.5, 2, 15)
    assert welch_p(left, right) == pytest.approx(stats.ttest_ind(left, right, equal_var=False).pvalue)
    prefixes = _welch_p_prefixes(left, right)
    for m in (2, 5, 15):
        expected = stats.ttest_ind(left, right[:m], equal_var=False).pvalue
        assert prefixes[m - 1] == pytest.approx(expected, rel=1e-6)
    assert prefixes[0] == 1.0
    assert welch_p(np.ones(5), np.ones(5)) == 1.0
    assert welch_p(np.ones(5), np.full(5, 2.0)) == 0.0
    assert welch_p(np.ones(1), np.ones(5)) == 1.0


def test_winsorize_outliers_leaves_steps_alone() -> None:
    step = np.array([0.0] * 40 + [-1.0] * 20)
    assert np.array_equal(winsorize_outliers(step), step)
    dip = np.array([0.0] * 40 + [-1.0] * 2 + [0.0] * 20)
    assert list(winsorize_outliers(dip)[40:42]) == [-0.04, -0.04]  # the 1% scale floor x 4
    last = np.array([0.0] * 40 + [-1.0])
    assert winsorize_outliers(last)[-1] == -1.0  # nothing after it says whether it is a dip


def test_winsorize_outliers_clips_outliers_only() -> None:
    values = np.log(noisy_rates(18, 80, sigma=0.05))
    values[60] -= 3.0
    clipped = winsorize_outliers(values)
    assert clipped[60] > values[60] + 2
    untouched = np.delete(np.arange(80), 60)
    assert np.mean(clipped[untouched] == values[untouched]) > 0.95


# --- RTT windows and CUSUM ---------------------------------------------------------------------


def rtt_samples(
    seed: int,
    minutes: int,
    base_ms: float = 40.0,
    jitter_ms: float = 0.1,
    shifts: dict[int, float] | None = None,
    loss: float = 0.0,
) -> list[tuple[datetime, float | None]]:
    """10 probes a minute; shifts maps a minute to the added delay from there on."""
    rng = np.random.default_rng(seed)
    samples: list[tuple[datetime, float | None]] = []
    added = 0.0
    for minute in range(minutes):
        added = (shifts or {}).get(minute, added)
        for probe in range(10):
            moment = T0 + timedelta(minutes=minute, seconds=probe)
            lost = rng.random() < loss
            samples.append((moment, None if lost else base_ms + added + float(rng.exponential(jitter_ms))))
    return samples


def minute_at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def test_rtt_windows_align_count_and_skip() -> None:
    samples: list[tuple[datetime, float | None]] = [
        (T0 + timedelta(seconds=299), 10.0),
        (T0 + timedelta(seconds=1), 12.0),
        (T0 + timedelta(seconds=2), None),
        (T0 + timedelta(seconds=3), math.nan),
        (T0 + timedelta(seconds=300), 11.0),
        (T0 + timedelta(seconds=900), None),
    ]
    windows = rtt_windows(samples)
    assert [w.start for w in windows] == [T0, T0 + timedelta(seconds=300), T0 + timedelta(seconds=900)]
    first, second, lost = windows
    assert (first.end, first.sent, first.lost, first.min_ms, first.p50_ms) == (
        T0 + timedelta(seconds=300),
        3,
        1,
        10.0,
        11.0,
    )
    assert first.p90_ms == pytest.approx(11.8)
    assert first.loss_fraction == pytest.approx(1 / 3)
    assert (second.sent, second.lost, second.min_ms) == (1, 0, 11.0)
    assert (lost.sent, lost.lost, lost.min_ms, lost.p50_ms, lost.p90_ms) == (1, 1, None, None, None)
    assert rtt_windows([]) == []
    # Alignment is to epoch multiples, not to the first sample.
    (late,) = rtt_windows([(T0 + timedelta(seconds=1234), 5.0)], window_s=60)
    assert late.start == T0 + timedelta(seconds=1200)


@pytest.mark.parametrize("seed", range(3))
def test_rtt_cusum_finds_5_ms_on_a_40_ms_path_once_and_clears(seed: int) -> None:
    # Two days of baseline, +5 ms for 3 h from 48 h, then back.
    samples = rtt_samples(seed, 60 * 60, shifts={48 * 60: 5.0, 51 * 60: 0.0}, loss=0.01)
    windows = rtt_windows(samples)
    episodes = rtt_cusum(windows)
    assert len(episodes) == 1
    episode = episodes[0]
    assert episode.metric is Metric.RTT
    assert episode.direction is Direction.UP
    assert episode.started_at == minute_at(48 * 60)
    assert episode.detected_at <= minute_at(48 * 60 + 3 * 5)
    assert episode.magnitude == pytest.approx(5.0, abs=0.1)
    assert episode.baseline == pytest.approx(40.0, abs=0.05)
    assert episode.cleared_at == minute_at(51 * 60)
    assert_json(episodes)


def test_rtt_cusum_is_quiet_on_a_stable_path() -> None:
    for seed in range(3):
        windows = rtt_windows(rtt_samples(seed, 48 * 60, loss=0.01))
        for statistic in ("min_ms", "p50_ms", "p90_ms"):
            assert rtt_cusum(windows, statistic=statistic) == []


def test_rtt_cusum_finds_a_decrease_and_ignores_a_shift_below_the_minimum_effect() -> None:
    down = rtt_windows(rtt_samples(20, 36 * 60, shifts={30 * 60: -3.0}))
    (episode,) = rtt_cusum(down)
    assert episode.direction is Direction.DOWN
    assert episode.started_at == minute_at(30 * 60)
    assert episode.magnitude == pytest.approx(-3.0, abs=0.1)
    small = rtt_windows(rtt_samples(21, 36 * 60, shifts={30 * 60: 0.4}))  # < max(0.5, 2% of 40)
    assert rtt_cusum(small) == []


def test_rtt_cusum_on_a_dead_flat_path() -> None:
    times = [T0 + timedelta(minutes=5 * i) for i in range(100)]
    windows = [
        RttWindow(moment, moment + timedelta(minutes=5), 50, 0, 1.0 if i < 60 else 1.6, 1.0, 1.0)
        for i, moment in enumerate(times)
    ]
    (episode,) = rtt_cusum(windows)
    assert episode.started_at == times[60]
    assert episode.detected_at == times[62]
    assert episode.evidence["baseline_scale_ms"] == pytest.approx(0.05)
    assert rtt_cusum(windows[:60]) == []


def test_rtt_cusum_skips_lost_windows_sorts_and_is_idempotent() -> None:
    windows = rtt_windows(rtt_samples(22, 36 * 60, shifts={30 * 60: 2.0}))
    gone = [RttWindow(w.start + timedelta(seconds=1), w.end, 10, 10, None, None, None) for w in windows[100:110]]
    shuffled = windows + gone
    random.Random(22).shuffle(shuffled)
    first = rtt_cusum(windows)
    assert len(first) == 1
    assert rtt_cusum(shuffled) == first
    assert rtt_cusum(windows) == first


def test_rtt_cusum_without_enough_baseline() -> None:
    assert rtt_cusum([]) == []
    windows = rtt_windows(rtt_samples(23, 25, shifts={5: 10.0}))  # 5 windows
    assert rtt_cusum(windows) == []
    with pytest.raises(ValueError, match="statistic"):
        rtt_cusum(windows, statistic="max_ms")  # type: ignore[arg-type]


def test_rolling_robust_matches_statistics() -> None:
    rng = random.Random(24)
    pool = RollingRobust()
    values: list[tuple[float, float]] = []
    for step in range(400):
        value = rng.choice([rng.random(), round(rng.random(), 1), 0.5])
        pool.add(step, value)
        values.append((step, value))
        pool.evict_before(step - 37)
        kept = [v for t, v in values if t >= step - 37]
        center = statistics.median(kept)
        assert pool.median() == pytest.approx(center)
        assert pool.mad() == pytest.approx(statistics.median([abs(v - center) for v in kept]))
    pool.pop_since(390)
    assert len(pool) == 390 - (399 - 37)


# --- loss_rule --------------------------------------------------------------------------------


def loss_windows(lost: list[int], sent: int = 300) -> list[RttWindow]:
    return [
        RttWindow(T0 + timedelta(minutes=5 * i), T0 + timedelta(minutes=5 * i + 5), sent, count, 8.0, 8.0, 8.0)
        for i, count in enumerate(lost)
    ]


def binomial_losses(seed: int, rates: list[float], sent: int = 300) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(count) for count in rng.binomial(sent, rates)]


@pytest.mark.parametrize("seed", range(5))
def test_loss_rule_opens_on_a_2_percent_step(seed: int) -> None:
    lost = binomial_losses(seed, [0.0005] * 200 + [0.02] * 20)
    windows = loss_windows(lost)
    episodes = loss_rule(windows)
    assert len(episodes) == 1
    episode = episodes[0]
    assert episode.metric is Metric.LOSS
    assert episode.direction is Direction.UP
    assert episode.started_at == windows[200].start
    assert episode.detected_at <= windows[203].start
    assert episode.magnitude == pytest.approx(2.0, abs=1.0)
    assert episode.cleared_at is None
    assert_json(episodes)


def test_loss_rule_ignores_one_lost_probe() -> None:
    assert loss_rule(loss_windows([0] * 100 + [1] + [0] * 20)) == []
    assert loss_rule(loss_windows([0] * 100 + [1] * 20)) == []  # 0.33%: below 0.5 pp
    assert loss_rule(loss_windows([0] * 100 + [10] + [0] * 20)) == []  # one window is not two


def test_loss_rule_clears_and_opens_again() -> None:
    windows = loss_windows([0] * 50 + [9] * 5 + [0] * 10 + [12] * 3)
    episodes = loss_rule(windows)
    assert [(e.started_at, e.detected_at, e.cleared_at) for e in episodes] == [
        (windows[50].start, windows[51].start, windows[55].start),
        (windows[65].start, windows[66].start, None),
    ]
    assert episodes[0].baseline == pytest.approx(0.5 / (50 * 300 + 1))
    assert episodes[0].magnitude == pytest.approx(3.0, abs=0.01)


def test_loss_rule_needs_a_baseline_and_skips_empty_windows() -> None:
    assert loss_rule([]) == []
    assert loss_rule(loss_windows([0] * 3 + [30] * 5)) == []  # 3 baseline windows < 6
    windows = loss_windows([0] * 20 + [15] * 3)
    empty = [RttWindow(w.start + timedelta(seconds=1), w.end, 0, 0, None, None, None) for w in windows[:21]]
    shuffled = windows + empty
    random.Random(25).shuffle(shuffled)
    assert loss_rule(shuffled) == loss_rule(windows)
    assert len(loss_rule(windows)) == 1


# --- route_changes ----------------------------------------------------------------------------


def runs(sets: list[set[str]]) -> list[tuple[datetime, frozenset[str]]]:
    return [(T0 + timedelta(minutes=10 * i), frozenset(fingerprints)) for i, fingerprints in enumerate(sets)]


def test_route_change_to_new_fingerprints() -> None:
    traces = runs([{"a", "b"}] * 10 + [{"c", "d"}] * 5)
    (episode,) = route_changes(traces)
    assert episode.metric is Metric.ROUTE
    assert episode.direction is Direction.UP
    assert (episode.started_at, episode.detected_at, episode.cleared_at) == (traces[10][0], traces[11][0], None)
    assert (episode.baseline, episode.current, episode.magnitude) == (2.0, 2.0, 2.0)
    assert episode.evidence["old_fingerprints"] == ["a", "b"]
    assert episode.evidence["new_fingerprints"] == ["c", "d"]
    assert_json([episode])


def test_route_ecmp_alternation_is_no_change() -> None:
    assert route_changes(runs([{"a"}, {"b"}] * 50)) == []
    assert route_changes(runs([{"a", "b"}] * 10 + [{"a"}, {"b"}, {"b"}, {"a", "b"}] * 10)) == []
    rng = random.Random(26)
    members = ["m1", "m2", "m3", "m4"]
    sets = [{rng.choice(members) for _ in range(4)} for _ in range(2000)]
    assert route_changes(runs(sets)) == []


def test_route_one_flow_onto_a_new_member_once_is_no_change() -> None:
    assert route_changes(runs([{"a", "b"}] * 10 + [{"a", "x"}] + [{"a", "b"}] * 10)) == []
    # Seen once, x is learned as a member and does not count later either.
    assert route_changes(runs([{"a", "b"}] * 10 + [{"a", "x"}, {"a"}, {"b", "x"}, {"x", "a"}])) == []


def test_route_replaced_member_that_keeps_appearing_is_a_change() -> None:
    traces = runs([{"a", "b"}] * 10 + [{"a", "c"}] * 3)
    (episode,) = route_changes(traces)
    assert episode.started_at == traces[10][0]
    assert episode.evidence["added"] == ["c"]
    assert episode.magnitude == 1.0


def test_route_return_clears_and_another_route_supersedes() -> None:
    traces = runs([{"a"}] * 10 + [{"b"}] * 10 + [{"a"}] * 10 + [{"c"}] * 10 + [{"d"}] * 10)
    episodes = route_changes(traces)
    assert [(e.started_at, e.cleared_at, e.evidence["superseded"]) for e in episodes] == [
        (traces[10][0], traces[20][0], False),
        (traces[30][0], traces[40][0], True),
        (traces[40][0], None, False),
    ]


def test_route_changes_on_empty_unsorted_and_repeated_input() -> None:
    assert route_changes([]) == []
    assert route_changes(runs([set(), set()])) == []
    traces = runs([{"a", "b"}] * 10 + [set()] + [{"c"}] * 3)
    shuffled = traces[:]
    random.Random(27).shuffle(shuffled)
    first = route_changes(traces)
    assert len(first) == 1
    assert first[0].started_at == traces[11][0]
    assert route_changes(shuffled) == first
    assert route_changes(traces) == first
