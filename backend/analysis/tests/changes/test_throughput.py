"""The throughput rules on synthetic series with known steps and seeded lognormal noise."""

from __future__ import annotations

import math
import random
from datetime import timedelta

import numpy as np
import pytest
from scipy import stats

from analysis.changes.edivisive import energy_statistic, welch_p, welch_p_prefixes
from analysis.changes.episodes import Direction, Metric, Point
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule, winsorize_outliers
from analysis.tests.changes.series import RATE_BPS, T0, TEST_INTERVAL, assert_json, at, noisy_rates, rates

# --- throughput_fast_rule ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_fast_rule_opens_on_a_30_percent_drop_within_2_points(seed: int) -> None:
    episodes = throughput_fast_rule(rates(noisy_rates(seed, 60, steps={40: 0.7})))
    assert len(episodes) == 1
    episode = episodes[0]
    assert episode.metric is Metric.THROUGHPUT
    assert episode.rule == "throughput_fast"
    assert episode.direction is Direction.DOWN
    assert episode.started_at == at(40)
    assert episode.detected_at == at(41)  # a deep drop: the second changed point confirms it
    assert episode.evidence["confirm_n"] == 2
    assert episode.evidence["prior"] is None
    assert episode.cleared_at is None
    assert episode.magnitude == pytest.approx(-0.3, abs=0.08)  # the median of 2 noisy points
    assert episode.baseline == pytest.approx(RATE_BPS, rel=0.05)
    assert episode.current == pytest.approx(0.7 * RATE_BPS, rel=0.07)
    assert_json(episodes)


def test_fast_rule_finds_a_25_percent_cut_by_its_second_run_on_a_7_percent_scatter() -> None:
    """Two runs each 4 sigmas deep (the deep test) are 28 % on a path whose runs scatter 7 %:
    a 25 % cut then needs its third run. The mean of the two, each 2 sigmas low, finds it."""
    second = 0
    for seed in range(20):
        episodes = throughput_fast_rule(rates(noisy_rates(seed, 60, sigma=0.07, steps={40: 0.75})))
        assert episodes, seed
        second += episodes[0].detected_at == at(41)
    assert second >= 16


def test_fast_rule_pair_test_is_not_carried_by_one_collapsed_run() -> None:
    """One run at a tenth of the rate beside one a sigma low: the pair's mean counts the
    collapsed run at most twice the drop deep, and the other is not 2 sigmas low."""
    values = noisy_rates(4, 80, sigma=0.07)
    values[60] = 0.1 * RATE_BPS
    values[61] = RATE_BPS * math.exp(-0.07)
    assert throughput_fast_rule(rates(values)) == []


def test_fast_rule_clears_after_recovery_and_carries_on() -> None:
    values = noisy_rates(1, 100, steps={40: 0.6, 50: 1 / 0.6, 80: 0.5})
    episodes = throughput_fast_rule(rates(values))
    assert [(e.started_at, e.detected_at, e.cleared_at) for e in episodes] == [
        (at(40), at(41), at(50)),
        (at(80), at(81), None),
    ]
    assert episodes[0].evidence["clear_confirmed_at"] == at(52).isoformat()
    assert episodes[1].magnitude == pytest.approx(-0.5, abs=0.05)
    # The first episode's points never became baseline: the second one is measured against
    # the level before and after the first, not a mix with the degraded points.
    assert episodes[1].baseline == pytest.approx(RATE_BPS, rel=0.05)


def test_fast_rule_clears_a_steady_path_back_within_half_the_smallest_drop() -> None:
    """A lab-steady path (0.5 % spread) back at its rate, every other run 2 % low: recovered.
    A clear margin of 1.5 sigma alone (under 1 %) kept it "down" for as long as one run in
    two came in a hair low; the alert drill's incident took 4.5 minutes to resolve."""
    values = noisy_rates(3, 30, sigma=0.005, steps={15: 0.6})
    values[20:] = [RATE_BPS * (0.98 if i % 2 else 1.0) for i in range(20, 30)]
    (episode,) = throughput_fast_rule(rates(values))
    assert (episode.started_at, episode.cleared_at) == (at(15), at(20))


def test_fast_rule_does_not_clear_while_recovery_is_unconfirmed() -> None:
    values = noisy_rates(2, 52, steps={40: 0.6, 50: 1 / 0.6})  # two recovered points only
    (episode,) = throughput_fast_rule(rates(values))
    assert episode.cleared_at is None


@pytest.mark.parametrize(("sigma", "most"), [(0.05, 0), (0.1, 2)])
def test_fast_rule_is_quiet_on_stable_lognormal_noise(sigma: float, most: int) -> None:
    """16,000 runs, 11 path-years at 4 runs a day: none at 5 % scatter; at 10 % the pair test
    (two runs 3 sigmas deep on average) pages at most twice, under 0.2 a path-year against
    the target of 1, for finding a 25 % cut by its second run six times as often."""
    alarms = sum(len(throughput_fast_rule(rates(noisy_rates(seed, 400, sigma)))) for seed in range(40))
    assert alarms <= most


def test_fast_rule_ignores_single_dips_and_shallow_two_point_dips() -> None:
    values = noisy_rates(3, 200)
    values[50] *= 0.1
    values[100:102] *= 0.85  # 15%: a deep drop's two points must each be 20% down
    values[150] = values[152] = 0.3 * RATE_BPS  # a recovered point between two dips
    assert throughput_fast_rule(rates(values)) == []


def test_fast_rule_reports_two_deep_points_and_clears_them() -> None:
    """Two tests in a row at a fifth of the rate are half a day of a broken path at 4 tests a
    day: that is found (it cannot be told from the start of a lasting cut), and it clears on
    the recovery."""
    values = noisy_rates(3, 120)
    values[100:102] *= 0.2
    (episode,) = throughput_fast_rule(rates(values))
    assert (episode.started_at, episode.detected_at, episode.cleared_at) == (at(100), at(101), at(102))


def test_fast_rule_needs_three_runs_when_its_runs_may_be_on_an_unseen_member() -> None:
    """Two runs at 74% on a 1-in-128 member no sweep has shown (Point.ambiguous) are not a
    drop; a third in a row is, as is any 2-run drop whose runs are unambiguous."""
    values = noisy_rates(5, 60)
    values[50:52] *= 0.74
    marked = [Point(at(i), float(value), ambiguous=i in (50, 51)) for i, value in enumerate(values)]
    assert throughput_fast_rule(marked) == []
    assert [e.detected_at for e in throughput_fast_rule(rates(values))] == [at(51)]
    values[52] *= 0.74
    marked = [Point(at(i), float(value), ambiguous=i in (50, 51, 52)) for i, value in enumerate(values)]
    (episode,) = throughput_fast_rule(marked)
    assert (episode.started_at, episode.detected_at, episode.evidence["confirm_n"]) == (at(50), at(52), 3)


def test_fast_rule_on_a_new_path_leans_on_its_ceilings() -> None:
    """Two runs at their ceiling are a baseline when the ceilings back them: a 40% cut on the
    first day (runs 3 and 4) is found; without ceilings, or with runs far below them, it waits
    for 10 runs of its own."""
    values = [0.95 * RATE_BPS, 0.97 * RATE_BPS, 0.57 * RATE_BPS, 0.58 * RATE_BPS]
    with_prior = [Point(at(i), value, ceiling=RATE_BPS) for i, value in enumerate(values)]
    (episode,) = throughput_fast_rule(with_prior)
    assert (episode.started_at, episode.detected_at) == (at(2), at(3))
    assert episode.evidence["prior"] == "ceilings"
    assert episode.magnitude == pytest.approx(-0.4, abs=0.02)
    assert_json([episode])
    assert throughput_fast_rule(rates(values)) == []
    far_below = [Point(at(i), value, ceiling=3 * RATE_BPS) for i, value in enumerate(values)]
    assert throughput_fast_rule(far_below) == []
    # The prior asks for a deep drop: 20% on the first day is left to the runs' own history.
    shallow = [Point(at(i), value * (0.8 if i >= 2 else 1), ceiling=RATE_BPS) for i, value in enumerate(values[:2] * 2)]
    assert throughput_fast_rule(shallow) == []


@pytest.mark.parametrize("n", [0, 1, 3, 11])
def test_fast_rule_needs_a_baseline(n: int) -> None:
    values = noisy_rates(4, n, steps={min(n, 10): 0.5})
    assert throughput_fast_rule(rates(values)) == []  # fewer than 10 baseline + 2 points, no ceilings


def test_fast_rule_skips_zero_negative_and_nan_rates() -> None:
    points = rates(noisy_rates(5, 60, steps={40: 0.7}))
    broken = [
        Point(at(10) + timedelta(minutes=1), 0.0),
        Point(at(20) + timedelta(minutes=1), -1.0),
        Point(at(30) + timedelta(minutes=1), math.nan),
        Point(at(35) + timedelta(minutes=1), math.inf),
    ]
    (episode,) = throughput_fast_rule(points + broken)
    assert (episode.started_at, episode.detected_at) == (at(40), at(41))
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
    # 15% down: not deep, so three points confirm it.
    values = [RATE_BPS * (1 + 0.01 * (i % 3)) for i in range(40)] + [0.85 * RATE_BPS] * 2
    values += [0.95 * RATE_BPS] + [0.85 * RATE_BPS] * 5  # one point back near normal
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


def test_slow_rule_clears_a_drop_that_recovers_above_its_baseline() -> None:
    """The alert drill's path: a short, noisy baseline, a 40% cut, then the full rate, higher
    than the baseline's mean. The drop is over; it is not a drop plus a rise."""
    values = [136e6, 147e6, 194e6, 189e6, 194e6, 183e6, 168e6, 152e6]
    values += [118e6, 73e6, 89e6, 89e6, 109e6, 119e6, 80e6, 118e6, 120e6, 123e6, 121e6, 78e6]
    values += list(noisy_rates(14, 40, sigma=0.02) * (194e6 / RATE_BPS))
    (episode,) = throughput_slow_rule(rates(values))
    assert episode.direction is Direction.DOWN and episode.started_at == at(8)
    assert episode.cleared_at == at(20)


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
    prefixes = welch_p_prefixes(left, right)
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


def every(interval: timedelta, values: np.ndarray) -> list[Point]:
    return [Point(T0 + i * interval, float(value)) for i, value in enumerate(values)]


def test_slow_rule_waits_until_a_step_has_lasted() -> None:
    """The lab's run every 11 s: twenty runs 15% slower are under four minutes, not yet a
    lasting step (the fast rule judges short drops); the same runs ten minutes apart are one."""
    values = noisy_rates(4, 40, sigma=0.03, steps={20: 0.85})
    assert throughput_slow_rule(every(timedelta(seconds=11), values)) == []
    (episode,) = throughput_slow_rule(every(timedelta(minutes=10), values))
    assert episode.direction is Direction.DOWN
    assert episode.detected_at - episode.started_at >= timedelta(minutes=30)
