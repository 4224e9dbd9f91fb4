"""The policed path's rule: a ramp that measured a slower policer, beside a low TCP run."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from analysis.changes.episodes import Direction, Point
from analysis.changes.policer_rate import RAMP_DROP, RULE, RampPoint, low_runs, policer_rate_rule, suspect

START = datetime(2026, 12, 1, tzinfo=UTC)
SLOT = timedelta(hours=6)
# TCP under a policer: erratic, 20 % either way (seed 002's 42, 9.5, 31.5 Mbit/s is wider still).
SAWING = [40e6, 30e6, 36e6, 25e6, 38e6, 28e6, 33e6, 41e6, 27e6, 35e6]


def at(slot: int) -> datetime:
    return START + slot * SLOT


def runs(values: list[float], first: int = 0) -> list[Point]:
    return [Point(at(first + index), value) for index, value in enumerate(values)]


def test_a_run_below_the_median_of_the_runs_before_it_is_low() -> None:
    assert low_runs(runs(SAWING)) == [False] * 5 + [True, False, False, True, False]
    assert suspect(runs([*SAWING, 20e6])) and not suspect(runs([*SAWING, 45e6]))
    # Fewer than five runs before it say nothing; nor does an empty series.
    assert not suspect(runs([40e6, 10e6])) and not suspect([])
    # Runs this steady (1 %) find a cut by themselves: no ramp on a run just below the median.
    steady = [50e6 * (1 + 0.01 * (index % 3 - 1)) for index in range(10)]
    assert low_runs(runs([*steady, 49e6]))[-1] and not suspect(runs([*steady, 49e6]))


def test_a_ramp_25_percent_down_beside_a_low_run_is_a_drop() -> None:
    ramps = [RampPoint(at(2), 50e6), RampPoint(at(6), 50.5e6), RampPoint(at(11), 37.5e6)]
    series = runs([*SAWING, 24e6])  # the run before the ramp (slot 10) is low
    [episode] = policer_rate_rule(ramps, series)
    assert episode.rule == RULE and episode.direction is Direction.DOWN
    assert episode.started_at == at(10) and episode.detected_at == at(11) and episode.cleared_at is None
    assert episode.baseline == pytest.approx(50.25e6) and episode.magnitude == pytest.approx(37.5 / 50.25 - 1)
    assert episode.evidence["tcp_rate_bps"] == 24e6 and episode.evidence["ramp_drop"] == RAMP_DROP


def test_the_run_after_the_ramp_may_confirm_it() -> None:
    ramps = [RampPoint(at(2), 50e6), RampPoint(at(10), 37e6)]
    series = [*runs(SAWING), Point(at(11), 22e6)]  # slot 9 (35) is not low, slot 11 is
    [episode] = policer_rate_rule(ramps, series)
    assert episode.started_at == at(10) and episode.detected_at == at(11)
    # Until that run comes, there is nothing: one ramp alone does not page.
    assert policer_rate_rule(ramps, runs(SAWING)) == []


def test_a_low_ramp_that_tcp_does_not_confirm_is_no_drop_and_no_new_baseline() -> None:
    ramps = [RampPoint(at(2), 50e6), RampPoint(at(10), 37e6), RampPoint(at(14), 49e6)]
    series = [*runs(SAWING), Point(at(11), 45e6), *runs([36e6, 37e6, 39e6], 12)]
    assert policer_rate_rule(ramps, series) == []


def test_ramps_within_their_own_spread_and_tcp_scatter_are_no_drop() -> None:
    ramps = [RampPoint(at(slot), rate) for slot, rate in ((1, 50e6), (5, 48.5e6), (9, 51e6), (12, 47e6))]
    series = runs([*SAWING, 20e6, 22e6, 18e6])  # TCP far down, the ramps unchanged
    assert policer_rate_rule(ramps, series) == []


def test_the_drop_clears_when_a_ramp_is_back_near_the_baseline() -> None:
    ramps = [RampPoint(at(2), 50e6), RampPoint(at(11), 35e6), RampPoint(at(13), 36e6), RampPoint(at(15), 48e6)]
    series = runs([*SAWING, 20e6, 0.0, 21e6, 0.0, 40e6])
    [episode] = policer_rate_rule(ramps, series)
    assert episode.detected_at == at(11) and episode.cleared_at == at(15)
    # And a second drop after it is judged against the baseline again.
    later = [*ramps, RampPoint(at(17), 30e6)]
    episodes = policer_rate_rule(later, [*series, Point(at(16), 19e6)])
    assert [e.detected_at for e in episodes] == [at(11), at(17)]


@pytest.mark.parametrize("bad", [0.0, -5e6, math.nan, math.inf])
def test_ramps_and_runs_without_a_usable_rate_are_left_out(bad: float) -> None:
    ramps = [RampPoint(at(2), 50e6), RampPoint(at(7), bad), RampPoint(at(11), 37e6)]
    series = [*runs(SAWING), Point(at(10), bad), Point(at(10), 24e6)]
    [episode] = policer_rate_rule(ramps, series)
    assert episode.baseline == 50e6 and episode.current == 37e6
    assert policer_rate_rule([], series) == [] and policer_rate_rule(ramps, []) == []
