"""ECMP members in the regression rules: scales read from stored ceilings, member switches of ping."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from analysis.changes.windows import RttWindow
from analysis.members import MemberLevel, judged_point, member_scale, member_switch, on_unseen_member, within_member


@pytest.mark.parametrize(
    ("ceilings", "scale"),
    [
        ({"member": {"index": 2, "count": 2, "rtt_ms": 31.0, "ceiling_bps": 7.3e8, "scale": 0.74}}, 0.74),
        ({"member": None}, 1.0),
        ({}, 1.0),
        (None, 1.0),
        ("not a dict", 1.0),
        ({"member": {"scale": True}}, 1.0),
        ({"member": {"scale": 0}}, 1.0),
        ({"member": {"scale": 1.5}}, 1.0),
        ({"member": {"scale": math.nan}}, 1.0),
        ({"member": {"scale": "0.5"}}, 1.0),
    ],
)
def test_member_scale_reads_stored_ceilings_defensively(ceilings: object, scale: float) -> None:
    assert member_scale(ceilings) == scale


def test_a_run_on_the_slow_member_is_judged_in_fast_member_terms() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    point = judged_point(when, 700e6, 740e6, 740 / 1000)
    assert point.value == pytest.approx(700e6 / 0.74)
    assert point.ceiling == pytest.approx(1000e6)
    assert judged_point(when, 700e6, None, 1.0).ceiling is None


def test_member_switch_names_both_members() -> None:
    text = member_switch(23.2, [31.3, 31.2, 23.1], [23.0, 31.0], 0.05)
    assert "member 1 (23.0 ms) to member 2 (31.0 ms)" in text


@pytest.mark.parametrize(
    ("baseline", "minima", "modes"),
    [
        (23.2, [23.4], [23.0, 31.0]),  # same member
        (23.2, [40.0], [23.0, 31.0]),  # a new level: a real change
        (23.2, [31.3, 40.0, 40.1], [23.0, 31.0]),  # mostly new levels: a real change
        (23.2, [31.3], [23.0]),  # one mode: no ECMP
        (23.2, [31.3], []),
        (23.2, [], [23.0, 31.0]),
        (math.nan, [31.3], [23.0, 31.0]),
    ],
)
def test_member_switch_is_empty_for_anything_else(baseline: float, minima: list[float], modes: list[float]) -> None:
    assert member_switch(baseline, minima, modes, 0.05) == ""


def test_member_switch_knows_members_a_few_tenths_apart_from_several_sweeps() -> None:
    """Fifteen RTTs of five members forward and three back: the day's sweeps show each of them
    in some sweep, the same member a little differently in each."""
    levels = [MemberLevel(7.66, 7.17), MemberLevel(7.70, 7.20), MemberLevel(10.08, 9.54), MemberLevel(12.96, 12.76)]
    assert "to member 2 (10.1 ms) of the path's 3" in member_switch(7.7, [9.6, 9.7, 10.5], levels, 0.1)
    # +1 ms on every member lands between them: a real shift.
    assert member_switch(7.7, [8.7, 8.8, 8.7], levels, 0.1) == ""


@pytest.mark.parametrize(
    ("ceilings", "rate_bps", "unseen"),
    [
        ({"flow_above_path": {"rtt_ms": 10.8, "window_ceiling_bps": 7.4e8}}, 7.0e8, True),
        ({"flow_above_path": {"rtt_ms": 10.8, "window_ceiling_bps": 7.4e8}}, 4.0e8, False),  # far below: a queue
        ({"flow_above_path": None}, 7.0e8, False),
        ({}, 7.0e8, False),
        (None, 7.0e8, False),
        ({"flow_above_path": {"window_ceiling_bps": None}}, 7.0e8, False),
        ({"flow_above_path": {"window_ceiling_bps": True}}, 7.0e8, False),
        ({"flow_above_path": {"window_ceiling_bps": math.inf}}, 7.0e8, False),
        ({"flow_above_path": {"window_ceiling_bps": -1.0}}, 7.0e8, False),
        ({"flow_above_path": "x"}, 7.0e8, False),
        ({"flow_above_path": {"window_ceiling_bps": 7.4e8}}, math.nan, False),
    ],
)
def test_on_unseen_member_reads_stored_ceilings_defensively(ceilings: object, rate_bps: float, unseen: bool) -> None:
    assert on_unseen_member(ceilings, rate_bps) is unseen


def _window(minute: int, min_ms: float | None) -> RttWindow:
    start = datetime(2026, 1, 1, 0, minute, tzinfo=UTC)
    p50 = None if min_ms is None else min_ms + 0.2
    return RttWindow(start, start.replace(minute=minute + 5), 10, 0, min_ms, p50, p50)


def test_within_member_moves_a_slow_member_window_onto_the_fastest() -> None:
    windows = [_window(0, 23.1), _window(5, 31.1), _window(10, 27.0), _window(15, None), _window(20, 31.1)]
    modes = [(23.0, 31.0), (31.0, 23.0), (23.0, 31.0), (23.0, 31.0), ()]
    judged = within_member(windows, modes)
    assert [w.min_ms for w in judged] == [23.1, pytest.approx(23.1), 27.0, None, 31.1]
    assert judged[1].p50_ms == pytest.approx(23.3)
    assert judged[1].start == windows[1].start and judged[1].sent == 10


def test_within_member_wants_modes_for_every_window() -> None:
    with pytest.raises(ValueError, match="one list of modes per window"):
        within_member([_window(0, 23.1)], [])


def test_within_member_places_a_ping_anywhere_on_a_mode_of_several_members() -> None:
    """A mode of members a few tenths apart spans from its lowest flow to above its median."""
    levels = (MemberLevel(7.66, 7.17), MemberLevel(10.08, 9.54))
    judged = within_member([_window(0, 9.6), _window(5, 9.2)], [levels, levels])
    assert judged[0].min_ms == pytest.approx(9.6 - (10.08 - 7.66))
    assert judged[1].min_ms == 9.2  # below the mode's lowest flow by more than 0.3 ms: on no member


def test_within_member_leaves_out_a_window_above_a_slower_member_it_cannot_be_on() -> None:
    """c072 of the truth corpus: five members 1.25 ms apart, and a sweep that missed the one at
    55.87 ms. A ping on it lies 1.25 ms above the 54.62 ms member: moved with that member's
    offset it read as a 1.25 ms RTT step (27 false alarms a path-year); its RTT is left out."""
    modes = (47.6, 54.62, 57.12)
    windows = [_window(0, 54.7), _window(5, 55.9), _window(10, 47.7), _window(15, 48.9)]
    judged = within_member(windows, [modes] * len(windows))
    assert judged[0].min_ms == pytest.approx(54.7 - (54.62 - 47.6))  # on its member: moved
    assert (judged[1].min_ms, judged[1].p50_ms, judged[1].p90_ms) == (None, None, None)
    assert (judged[1].sent, judged[1].lost, judged[1].start) == (10, 0, windows[1].start)  # its loss still counts
    assert judged[2].min_ms == 47.7
    assert judged[3].min_ms == 48.9, "on the fastest member a window above it is a shift, and stays"
