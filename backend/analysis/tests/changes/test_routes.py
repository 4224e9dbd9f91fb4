"""Route changes from trace fingerprint sets: moves, ECMP alternation, returns."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from analysis.changes.episodes import Direction, Metric
from analysis.changes.routes import route_changes
from analysis.tests.changes.series import T0, assert_json


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
