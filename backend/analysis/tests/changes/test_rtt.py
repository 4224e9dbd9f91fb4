"""RTT windows and the RTT CUSUM on synthetic pings with known shifts."""

from __future__ import annotations

import math
import random
import statistics
from datetime import datetime, timedelta

import numpy as np
import pytest

from analysis.changes.episodes import Direction, Metric
from analysis.changes.rtt import RollingRobust, rtt_cusum, rtt_scale
from analysis.changes.windows import RttWindow, rtt_windows
from analysis.tests.changes.series import T0, assert_json


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
    small = rtt_windows(rtt_samples(21, 36 * 60, shifts={30 * 60: 0.4}))  # < max(0.5 ms, 2 scales)
    assert rtt_cusum(small) == []


def test_rtt_cusum_follows_the_paths_noise_not_its_rtt() -> None:
    """A clean +1.5 ms step on a quiet 90 ms path is a longer route; 2% of the RTT (1.8 ms)
    as the minimum effect missed it. On a noisy path the minimum effect grows with the noise."""
    quiet = rtt_windows(rtt_samples(25, 36 * 60, base_ms=90.0, jitter_ms=0.1, shifts={30 * 60: 1.5}))
    (episode,) = rtt_cusum(quiet)
    assert episode.started_at == minute_at(30 * 60)
    assert episode.detected_at <= minute_at(30 * 60 + 30)
    assert episode.evidence["min_effect_ms"] == pytest.approx(0.5)
    rng = np.random.default_rng(26)
    times = [T0 + timedelta(minutes=5 * i) for i in range(600)]
    noisy = [
        RttWindow(moment, moment + timedelta(minutes=5), 10, 0, level, level, level)
        for i, moment in enumerate(times)
        for level in [20.0 + (3.0 if i >= 500 else 0.0) + float(rng.normal(0, 0.5))]
    ]
    (episode,) = rtt_cusum(noisy)
    assert episode.evidence["min_effect_ms"] == pytest.approx(2 * episode.evidence["baseline_scale_ms"])  # type: ignore[operator]
    assert episode.evidence["min_effect_ms"] > 0.8  # type: ignore[operator]


def test_rtt_scale_sees_the_tails_of_a_mixture() -> None:
    """Windows on ECMP members a sweep could not tell apart: a tight middle, a tenth either side
    a millisecond away. The MAD alone would make each tail window a 4-sigma event."""
    pool = RollingRobust()
    for step in range(100):
        tail = 1.0 if step % 20 < 3 else -1.0 if 10 <= step % 20 < 13 else 0.0
        pool.add(step, 10.0 + tail + 0.01 * (step % 3))
    assert rtt_scale(pool, pool.median()) > 0.7
    assert pool.quantile(0.5) == pytest.approx(pool.median())


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


@pytest.mark.parametrize("high_before", [1, 2, 3])
def test_rtt_cusum_reports_a_steps_full_size_after_noise_just_before_it(high_before: int) -> None:
    """On a quiet lab path one scale is 0.05 ms: windows 0.15 ms high just before a 10 ms step
    have z = 3 and once made the episode start before the step, so its level was the median of
    old and new windows (a 10 ms step found as 5 ms). The step starts where the values do, and
    the level follows the windows that arrive while it stays open."""
    times = [T0 + timedelta(minutes=i) for i in range(80)]
    step_at = 60
    values = [40.0 + (0.02 if i % 2 else 0.0) for i in range(step_at - high_before)]
    values += [40.15] * high_before + [50.0] * (len(times) - step_at)

    def episode_after(count: int) -> tuple[datetime, float]:
        (episode,) = rtt_cusum(
            [
                RttWindow(t, t + timedelta(minutes=1), 10, 0, v, v, v)
                for t, v in zip(times[:count], values, strict=False)
            ]
        )
        return episode.started_at, episode.magnitude

    for count in (step_at + 3, step_at + 4, len(times)):
        started_at, magnitude = episode_after(count)
        assert started_at == times[step_at], (count, started_at)
        assert magnitude == pytest.approx(10.0, abs=0.1), (count, magnitude)
