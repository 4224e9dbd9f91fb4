"""The ECMP rules on seeded sweeps: silent on stable members, each injected change found."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from analysis.changes.ecmp import ModeObservation, SweepObservation, ecmp_changes, learn_members
from analysis.changes.episodes import Direction, Metric
from analysis.tests.changes.series import assert_json

T0 = datetime(2026, 3, 1, tzinfo=UTC)
SWEEP = timedelta(minutes=15)
DAY = 96  # sweeps


def sweeps(
    seed: int,
    n: int,
    rtts: Sequence[float],
    weights: Sequence[float],
    flows: int = 16,
    *,
    change_at: int | None = None,
    rtts_after: Sequence[float] | None = None,
    weights_after: Sequence[float] | None = None,
) -> list[SweepObservation]:
    """Each sweep hashes `flows` flows onto the members; a member with two flows or more is a
    mode at its RTT plus a little sampling noise (what per_flow_modes reports)."""
    rng = np.random.default_rng(seed)
    found: list[SweepObservation] = []
    for index in range(n):
        after = change_at is not None and index >= change_at
        now_rtts = rtts_after if after and rtts_after is not None else rtts
        now_weights = np.array(weights_after if after and weights_after is not None else weights, dtype=float)
        counts = rng.multinomial(flows, now_weights / now_weights.sum())
        modes = tuple(
            ModeObservation(float(rtt + rng.normal(0, 0.05)), int(count))
            for rtt, count in zip(now_rtts, counts, strict=True)
            if count >= 2
        )
        found.append(SweepObservation(T0 + SWEEP * index, flows, modes))
    return found


@pytest.mark.parametrize("flows", [16, 64])
@pytest.mark.parametrize("gap", [0.02, 0.10, 0.35])
@pytest.mark.parametrize("weights", [(1, 1), (3, 1), (127, 1)], ids=["1:1", "3:1", "127:1"])
def test_stable_members_give_no_episode_over_a_month(weights: tuple[int, int], gap: float, flows: int) -> None:
    series = sweeps(int(gap * 100) + flows + weights[0], 30 * DAY, (8.0, 8.0 * (1 + gap)), weights, flows)
    assert ecmp_changes(series) == []


def test_members_a_few_tenths_apart_chained_into_one_are_no_new_member() -> None:
    """Members at 13.2, 13.8 and 14.35 ms (seen by sweeps of the lab's 4-member path): one
    cluster of sightings whose median is 13.2; a sweep showing 14.35 beside it is that cluster."""
    series = sweeps(31, 20 * DAY, (11.3, 13.2, 13.8, 14.35), (7, 9, 1, 3))
    (_, member) = learn_members(series[:DAY])
    assert member.rtt_ms == pytest.approx(13.3, abs=0.1)
    assert member.reach_ms > 1.0
    assert ecmp_changes(series) == []  # 81 episodes of a member appearing, judged without its reach


def test_a_single_path_gives_no_episode() -> None:
    assert ecmp_changes(sweeps(1, 10 * DAY, (23.0,), (1,))) == []


def test_members_are_learned_with_their_shares() -> None:
    members = learn_members(sweeps(2, DAY, (23.0, 31.0), (3, 1)))
    assert [round(m.rtt_ms) for m in members] == [23, 31]
    assert members[0].share == pytest.approx(0.75, abs=0.04)
    assert all(m.spread_ms >= 0.05 for m in members)


def test_a_member_moving_is_found_within_two_sweeps() -> None:
    series = sweeps(3, 3 * DAY, (23.0, 31.0), (3, 1), change_at=2 * DAY, rtts_after=(23.0, 33.0))
    (episode,) = ecmp_changes(series)
    assert episode.metric is Metric.ECMP and episode.rule == "ecmp_member_moved"
    assert episode.direction is Direction.UP and episode.magnitude == pytest.approx(2.0, abs=0.2)
    assert episode.evidence["member"] == 2
    assert series[2 * DAY].time <= episode.started_at <= episode.detected_at <= series[2 * DAY + 4].time
    assert episode.cleared_at is None
    assert_json([episode])


def test_a_member_appearing_is_found() -> None:
    series = sweeps(4, 3 * DAY, (23.0, 31.0, 15.0), (3, 1, 0), change_at=2 * DAY, weights_after=(2, 1, 1))
    (episode,) = ecmp_changes(series)
    assert episode.rule == "ecmp_member_appeared" and episode.direction is Direction.UP
    assert episode.evidence["new_member_rtt_ms"] == pytest.approx(15.0, abs=0.2)
    assert episode.detected_at <= series[2 * DAY + 8].time


def test_the_minority_member_vanishing_is_found_beyond_chance() -> None:
    series = sweeps(5, 3 * DAY, (23.0, 31.0), (3, 1), change_at=2 * DAY, weights_after=(1, 0))
    episodes = ecmp_changes(series)
    vanished = [e for e in episodes if e.rule == "ecmp_member_vanished"]
    assert len(vanished) == 1 and vanished[0].evidence["member"] == 2
    assert isinstance(vanished[0].evidence["chance"], float) and vanished[0].evidence["chance"] < 1e-6
    assert vanished[0].detected_at <= series[2 * DAY + 8].time


def test_weights_shifting_from_3_to_1_to_1_to_1_is_found() -> None:
    series = sweeps(6, 3 * DAY, (23.0, 31.0), (3, 1), change_at=2 * DAY, weights_after=(1, 1))
    shifted = [e for e in ecmp_changes(series) if e.rule == "ecmp_weights_shifted"]
    assert shifted, "the shift was not found"
    assert shifted[0].magnitude == pytest.approx(-25, abs=8)  # member 1: 75% -> 50% of flows
    assert shifted[0].detected_at <= series[2 * DAY + 40].time
    assert len({e.rule for e in ecmp_changes(series)}) == 1


def test_a_change_that_reverts_clears() -> None:
    series = sweeps(7, 3 * DAY, (23.0, 31.0), (3, 1), change_at=2 * DAY, rtts_after=(23.0, 33.0))
    reverted = series[: 2 * DAY + 10] + [
        SweepObservation(
            s.time,
            s.flows,
            tuple(ModeObservation(m.rtt_ms if m.rtt_ms < 32 else m.rtt_ms - 2, m.flows) for m in s.modes),
        )
        for s in series[2 * DAY + 10 :]
    ]
    (episode,) = ecmp_changes(reverted)
    assert episode.cleared_at is not None


def test_malformed_sweeps_are_passed_over_and_counted() -> None:
    good = sweeps(8, 2 * DAY, (23.0, 31.0), (3, 1))
    bad = [
        SweepObservation(T0 + SWEEP * 3 + timedelta(seconds=1), 0, (ModeObservation(23.0, 2),)),  # no flows
        SweepObservation(T0 + SWEEP * 4 + timedelta(seconds=1), 16, (ModeObservation(math.nan, 8),)),  # NaN only
        SweepObservation(T0 + SWEEP * 5 + timedelta(seconds=1), 16, (ModeObservation(23.0, 40),)),  # > its flows
        SweepObservation(T0 + SWEEP * 6 + timedelta(seconds=1), 16, ()),  # nothing seen
    ]
    unsorted = list(reversed(good + bad))
    series = sweeps(8, 3 * DAY, (23.0, 31.0), (3, 1), change_at=2 * DAY, rtts_after=(23.0, 33.0))
    (episode,) = ecmp_changes(list(reversed(series[: 2 * DAY])) + bad + series[2 * DAY :])
    assert episode.evidence["skipped_sweeps"] == 4
    assert ecmp_changes(unsorted) == []
    assert ecmp_changes([]) == []
    assert ecmp_changes(bad) == []
    # A mode at a negative or infinite RTT is dropped, the sweep's other modes kept.
    odd = [
        SweepObservation(s.time, s.flows, (*s.modes, ModeObservation(-1.0, 2), ModeObservation(math.inf, 2)))
        for s in good
    ]
    assert ecmp_changes(odd) == []
