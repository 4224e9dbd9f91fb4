"""One stream against several (pure): added up, shared, or between."""

from __future__ import annotations

import pytest

from analysis.streams import compare_streams


def test_streams_that_add_up_are_held_each_on_its_own() -> None:
    # Seed 004: a 64 KB window caps each flow at 8 Mbit/s on 65 ms; four reach four times that.
    verdict = compare_streams([8.0e6, 8.2e6, 7.9e6], 31e6, 4)
    assert verdict is not None and verdict.kind == "per_flow"
    assert verdict.single_bps == 8.0e6 and verdict.ratio == pytest.approx(3.875)
    assert verdict.text.startswith("4 streams together reached 31.0 Mbit/s, 3.9x one stream's 8.0 Mbit/s")
    assert "more streams add up" in verdict.text
    assert verdict.to_dict()["kind"] == "per_flow"


def test_streams_that_share_one_rate_are_held_by_the_path() -> None:
    verdict = compare_streams([90e6, 88e6, 91e6, 89e6], 95e6, 4)
    assert verdict is not None and verdict.kind == "path" and "share it rather than add up" in verdict.text


def test_between_the_two_is_partly_each() -> None:
    verdict = compare_streams([10e6, 10e6, 10e6], 18e6, 4)
    assert verdict is not None and verdict.kind == "partly"


@pytest.mark.parametrize(
    ("singles", "probe", "streams"),
    [([10e6, 10e6], 40e6, 4), ([10e6, 0.0, 10e6], 40e6, 4), ([10e6] * 3, 0.0, 4), ([10e6] * 3, 40e6, 1)],
)
def test_too_little_to_compare_is_no_verdict(singles: list[float], probe: float, streams: int) -> None:
    assert compare_streams(singles, probe, streams) is None
