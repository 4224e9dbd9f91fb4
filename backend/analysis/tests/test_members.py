"""ECMP members in the regression rules: scales read from stored ceilings, member switches of ping."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from analysis.members import judged_point, member_scale, member_switch


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
    text = member_switch(23.2, 31.3, [23.0, 31.0])
    assert "member 1 (23.0 ms) to member 2 (31.0 ms)" in text


@pytest.mark.parametrize(
    ("baseline", "current", "modes"),
    [
        (23.2, 23.4, [23.0, 31.0]),  # same member
        (23.2, 40.0, [23.0, 31.0]),  # a new level: a real change
        (23.2, 31.3, [23.0]),  # one mode: no ECMP
        (23.2, 31.3, []),
        (math.nan, 31.3, [23.0, 31.0]),
    ],
)
def test_member_switch_is_empty_for_anything_else(baseline: float, current: float, modes: list[float]) -> None:
    assert member_switch(baseline, current, modes) == ""
