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
