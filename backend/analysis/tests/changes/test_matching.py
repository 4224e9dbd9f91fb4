"""Episodes merged into incidents and matched to stored findings, without a database."""

from __future__ import annotations

from datetime import datetime, timedelta

from analysis.changes.episodes import Direction, Episode, Metric
from analysis.changes.matching import MergedEpisode, StoredPeriod, match_episodes, merge_episodes
from analysis.tests.changes.series import T0


def day(index: float) -> datetime:
    return T0 + timedelta(days=index)


def episode(rule: str, started: float, cleared: float | None, detected: float | None = None) -> Episode:
    return Episode(
        metric=Metric.THROUGHPUT,
        rule=rule,
        started_at=day(started),
        detected_at=day(started if detected is None else detected),
        cleared_at=None if cleared is None else day(cleared),
        direction=Direction.DOWN,
        baseline=3e9,
        current=2e9,
        magnitude=-1 / 3,
    )


def incident(started: float, cleared: float | None) -> MergedEpisode:
    first = episode("throughput_slow", started, cleared)
    return MergedEpisode(first, [first.rule], first.cleared_at)


def test_overlapping_episodes_of_two_rules_are_one_incident() -> None:
    merged = merge_episodes([episode("throughput_slow", 1, 3), episode("throughput_fast", 2, 4), episode("x", 5, 6)])
    assert [(m.started_at, m.rules, m.cleared_at) for m in merged] == [
        (day(1), ["throughput_slow", "throughput_fast"], day(4)),
        (day(5), ["x"], day(6)),
    ]
    # An open episode keeps the incident open; one rule seen twice is listed once.
    (open_one,) = merge_episodes([episode("throughput_fast", 1, 2), episode("throughput_fast", 1.5, None)])
    assert open_one.cleared_at is None and open_one.rules == ["throughput_fast"]


def test_merging_orders_by_start_then_detection() -> None:
    late, early = episode("throughput_slow", 1, None, detected=3), episode("throughput_fast", 1, None, detected=2)
    (merged,) = merge_episodes([late, early])
    assert merged.first is early and merged.rules == ["throughput_fast", "throughput_slow"]


def test_the_same_start_wins_then_the_longest_overlap_and_the_rest_fold_in() -> None:
    stored = [StoredPeriod(1, day(0), day(2)), StoredPeriod(2, day(1), day(5)), StoredPeriod(3, day(3), None)]
    (match,) = match_episodes([incident(1, None)], stored)
    assert match.key == 2 and match.folded == (3, 1)  # 3 overlaps without end, 1 for a day
    (moved,) = match_episodes([incident(1.5, 4)], [StoredPeriod(7, day(1), day(3)), StoredPeriod(8, day(2), day(9))])
    assert moved.key == 8 and moved.folded == (7,)


def test_a_stored_finding_is_matched_once_and_new_incidents_have_none() -> None:
    stored = [StoredPeriod(1, day(0), day(10))]
    first, second, apart = match_episodes([incident(1, 2), incident(3, 4), incident(20, None)], stored)
    assert (first.key, first.folded) == (1, ())
    assert (second.key, second.folded) == (None, ())
    assert apart.key is None
    assert match_episodes([], stored) == []
