"""Episodes merged into incidents and matched to stored findings, without a database."""

from __future__ import annotations

from datetime import datetime, timedelta

from analysis.changes.episodes import Direction, Episode, Metric, Point
from analysis.changes.matching import MergedEpisode, StoredPeriod, match_episodes, merge_episodes
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule
from analysis.tests.changes.series import T0


def day(index: float) -> datetime:
    return T0 + timedelta(days=index)


def episode(
    rule: str,
    started: float,
    cleared: float | None,
    detected: float | None = None,
    direction: Direction = Direction.DOWN,
) -> Episode:
    return Episode(
        metric=Metric.THROUGHPUT,
        rule=rule,
        started_at=day(started),
        detected_at=day(started if detected is None else detected),
        cleared_at=None if cleared is None else day(cleared),
        direction=direction,
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


def test_a_rise_from_where_a_drop_cleared_is_its_own_incident() -> None:
    """The alert drill's ta -> tb (CI, 2026-11-28): the fast rule's drop cleared at the first
    run back at full rate, and the slow rule, the dip winsorized, read those runs as a rise
    from there. Merged, the rise kept the drop open and paging for as long as it stood."""
    drop = episode("throughput_fast", 1, 2)
    rise = episode("throughput_slow", 2, None, direction=Direction.UP)
    merged = merge_episodes([drop, rise])
    assert [(m.first.direction, m.started_at, m.cleared_at) for m in merged] == [
        (Direction.DOWN, day(1), day(2)),
        (Direction.UP, day(2), None),
    ]
    # While the drop is open, what starts in it is still part of it: one open incident at most.
    (one,) = merge_episodes([episode("throughput_slow", 1, None), rise])
    assert one.first.direction == Direction.DOWN and one.cleared_at is None
    # A drop seen again before the last cleared is the same incident.
    (again,) = merge_episodes([drop, episode("throughput_slow", 1.5, 3)])
    assert again.cleared_at == day(3)


def test_a_rise_from_where_a_drop_cleared_keeps_its_own_finding_on_a_recompute() -> None:
    """The drill's ta -> tb again (CI, 2026-12-02): the stored drop cleared where the stored
    rise began. Touching is not overlapping: the drop's incident folded the rise's finding in
    and the rise came back as a new finding, which a recompute must never do."""
    drop = episode("throughput_fast", 1, 2)
    rise = episode("throughput_slow", 2, None, direction=Direction.UP)
    stored = [StoredPeriod(4, day(1), day(2)), StoredPeriod(31, day(2), None)]
    first, second = match_episodes(merge_episodes([drop, rise]), stored)
    assert (first.key, first.folded) == (4, ())
    assert (second.key, second.folded) == (31, ())


def test_a_drop_after_an_open_rise_ends_the_rise_and_pages_as_a_drop() -> None:
    rise = episode("throughput_slow", 1, None, direction=Direction.UP)
    drop = episode("throughput_fast", 3, None)
    ended, dropped = merge_episodes([rise, drop], worse=Direction.DOWN)
    assert (ended.first.direction, ended.cleared_at) == (Direction.UP, day(3))
    assert (dropped.first.direction, dropped.started_at, dropped.cleared_at) == (Direction.DOWN, day(3), None)
    # A rise inside an open drop is still the drop's (a partial recovery is no all-clear).
    (still,) = merge_episodes([drop, episode("throughput_slow", 4, None, direction=Direction.UP)], worse=Direction.DOWN)
    assert still.first.direction == Direction.DOWN and still.cleared_at is None
    # Without a regression direction (ECMP, routes) an open incident takes in both.
    (news,) = merge_episodes([rise, drop])
    assert news.first is rise and news.cleared_at is None


# ta -> tb in that drill, Mbit/s, one run every 11 s: two cuts to ~115, each back to ~195.
DRILL_MBPS = [
    152.0, 194.0, 194.0, 194.0, 183.5, 199.2, 194.0, 194.0, 178.3, 194.1, 183.5, 115.3, 118.5,
    120.8, 102.4, 115.2, 120.1, 144.7, 199.2, 199.2, 183.5, 193.9, 193.7, 183.5, 162.5, 193.7,
    194.0, 194.0, 194.0, 194.0, 188.7, 199.2, 194.0, 194.0, 183.5, 119.0, 105.3, 120.6, 119.3,
    119.5, 199.2, 194.0, 199.2, 199.2, 194.0, 199.2, 194.0, 194.0, 199.2, 199.2,
]  # fmt: skip


def test_the_drills_second_cut_stays_cleared_as_the_runs_come_back() -> None:
    cleared_at: int | None = None
    for count in range(40, len(DRILL_MBPS) + 1):
        points = [Point(T0 + timedelta(seconds=11 * i), mbps * 1e6) for i, mbps in enumerate(DRILL_MBPS[:count])]
        found = [*throughput_fast_rule(points), *throughput_slow_rule(points)]
        merged = merge_episodes(found, worse=Direction.DOWN)
        drops = [m for m in merged if m.first.direction == Direction.DOWN]
        assert len(drops) == 2, (count, merged)
        if drops[1].cleared_at is not None and cleared_at is None:
            cleared_at = count
        # Once the runs back at full rate have cleared it, it stays cleared.
        assert cleared_at is None or drops[1].cleared_at is not None, (count, merged)
    assert cleared_at is not None and cleared_at <= 45, cleared_at


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
