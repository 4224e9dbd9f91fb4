"""The loss rule on windows of binomial losses with known steps."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest

from analysis.changes.episodes import Direction, Metric
from analysis.changes.loss import loss_rule
from analysis.changes.windows import RttWindow
from analysis.tests.changes.series import T0, assert_json


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
    # A young series' baseline ends half its age before the step: 25 of the 50 loss-free windows.
    assert episodes[0].baseline == pytest.approx(0.5 / (25 * 300 + 1))
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


def bursty_losses(seed: int, windows: int, enter: float, sent: int = 10) -> list[int]:
    """A Gilbert-Elliott channel per probe: good loses nothing, bad (left with p 0.4) loses 80%.
    Windows are 5 minutes apart: each starts in the good state."""
    rng = random.Random(seed)
    found = []
    for _ in range(windows):
        lost, bad = 0, False
        for _ in range(sent):
            bad = (rng.random() >= 0.4) if bad else (rng.random() < enter)
            lost += bad and rng.random() < 0.8
        found.append(lost)
    return found


@pytest.mark.parametrize("seed", [27, 28, 29])
def test_bursty_loss_is_the_paths_own_and_a_step_on_it_is_found(seed: int) -> None:
    """Bursts of two or three probes put 2-5 of a window's 10 in one window: against a binomial
    baseline at the path's mean rate that is p < 1e-4 twice in a row a few times a month."""
    lost = bursty_losses(seed, 60 * 288, 0.004)
    assert max(lost) >= 5
    assert loss_rule(loss_windows(lost, sent=10)) == []
    # A step on top of it is still found within the hour: 30% of every probe lost from day 50 on.
    rng = np.random.default_rng(seed)
    stepped = [x if i < 50 * 288 else min(10, x + int(rng.binomial(10, 0.3))) for i, x in enumerate(lost)]
    windows = loss_windows(stepped, sent=10)
    (episode, *_) = loss_rule(windows)
    assert windows[50 * 288 - 3].start <= episode.started_at
    assert episode.detected_at <= windows[50 * 288 + 12].start


@pytest.mark.parametrize("seed", range(5))
def test_an_onset_is_found_before_its_own_windows_become_the_baseline(seed: int) -> None:
    """10 % loss from day 2 on, 10 pings a window: two lost of ten is the sign, and three
    lossy windows pooled into the baseline would make it ordinary within a quarter of an hour."""
    lost = binomial_losses(seed, [0.0] * (2 * 288) + [0.10] * 288, sent=10)
    windows = loss_windows(lost, sent=10)
    (episode, *_) = loss_rule(windows)
    assert windows[2 * 288 - 3].start <= episode.started_at
    assert episode.detected_at <= windows[2 * 288 + 72].start  # within 6 h


DAY = 288  # 5-minute windows


@pytest.mark.parametrize("seed", range(5))
def test_a_1_percent_onset_no_window_shows_is_found_by_pooling_hours(seed: int) -> None:
    """1 % loss at 10 probes a window loses about one probe an hour: no window is rare on its
    own, three or six hours of them are."""
    lost = binomial_losses(seed, [0.0] * (2 * DAY) + [0.01] * DAY, sent=10)
    windows = loss_windows(lost, sent=10)
    (episode, *_) = loss_rule(windows)
    onset = 2 * DAY
    assert windows[onset].start <= episode.started_at <= episode.detected_at <= windows[onset + 8 * 12].start
    assert episode.evidence["pooled_s"] in (3600, 3 * 3600, 6 * 3600), episode.evidence
    assert episode.evidence["p_max"] == 1e-6
    shown = episode.evidence["windows"]
    assert isinstance(shown, list) and len(shown) == 1, shown
    assert shown[0]["lost"] >= 4 and shown[0]["p_value"] < 1e-6, shown
    # Read the moment the count crossed the bar: high, but of the step's order.
    assert 0.5 <= episode.magnitude <= 3.0, episode
    assert_json([episode])


def test_one_outage_or_one_burst_is_not_a_loss_rate() -> None:
    """A 5-minute outage takes every probe of one window, a burst three of another: pooled over
    hours that is several percent, but the worst window is left out and the rest is clean."""
    assert loss_rule(loss_windows([0] * (2 * DAY) + [10] + [0] * DAY, sent=10)) == []
    assert loss_rule(loss_windows([0] * (2 * DAY) + [10] + [0] * 20 + [3] + [0] * DAY, sent=10)) == []
    # Two stray losses in a day, apart: not the three lossy windows a rate needs.
    assert loss_rule(loss_windows([0] * (2 * DAY) + [1] + [0] * 30 + [1] + [0] * DAY, sent=10)) == []


def test_a_pooled_step_clears_after_a_clean_span_and_opens_again() -> None:
    lossy_hours = [1 if i % 6 == 0 else 0 for i in range(8 * 12)]  # 1 of 60 probes: 1.7 %
    lost = [0] * (2 * DAY) + lossy_hours + [0] * (12 * 12) + [0] * DAY + lossy_hours
    windows = loss_windows(lost, sent=10)
    first, second = loss_rule(windows)
    assert first.evidence["pooled_s"] and first.cleared_at is not None
    end = 2 * DAY + 8 * 12
    # It clears once a whole span after its detection pools back under baseline + 0.25 pp,
    # at the first window after the span's last loss.
    assert windows[end - 6].start <= first.cleared_at <= windows[end + 1].start, (first.cleared_at, windows[end].start)
    assert second.started_at >= windows[end + 12 * 12 + DAY].start and second.cleared_at is None
    assert_json([first, second])
