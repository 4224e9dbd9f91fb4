"""A policer's rate from a paced UDP ramp, and the ramp's rates (pure, no DB)."""

from __future__ import annotations

import itertools
import math

import pytest

from analysis.advice import advise
from analysis.policer import EstimateBasis, RampStep, from_ramp, policer_estimate, ramp_rates
from analysis.runs import run_ceilings
from analysis.tests.test_advice import policed

WHEN = "2026-11-27 14:02 UTC"


def through_policer(offered: list[float], rate_bps: float) -> list[RampStep]:
    """What a token bucket of `rate_bps` lets through of each step: the excess is lost."""
    return [RampStep(o, min(o, rate_bps), max(0.0, 1 - rate_bps / o)) for o in offered]


def test_a_ramp_through_a_90_mbit_policer_measures_90() -> None:
    estimate = from_ramp(through_policer([60e6, 90e6, 135e6, 200e6], 90e6), WHEN)
    assert estimate is not None and estimate.basis is EstimateBasis.UDP_RAMP and not estimate.lower_bound
    assert estimate.rate_bps == pytest.approx(90e6)
    assert estimate.detail == (
        "a paced UDP ramp (2026-11-27 14:02 UTC) offering 60.0 Mbit/s to 200.0 Mbit/s in 4 steps: "
        "at most 90.0 Mbit/s got through (the 135.0 Mbit/s step, 33% lost)"
    )


def test_a_step_that_lost_below_the_rate_does_not_pull_the_estimate_down() -> None:
    # The lab's seed 002 ramp: 38 Mbit/s lost 3.6% to the 8 KB burst, 216 Mbit/s got 81 through.
    steps = [RampStep(6.7e6, 6.7e6, 0.0009), RampStep(38.1e6, 36.8e6, 0.036), RampStep(216.5e6, 81.1e6, 0.625)]
    estimate = from_ramp(steps, WHEN)
    assert estimate is not None and not estimate.lower_bound and estimate.rate_bps == 81.1e6
    # Cross traffic in the last step: the plateau's best stands.
    noisy = [RampStep(60e6, 60e6, 0.0), RampStep(120e6, 89e6, 0.26), RampStep(180e6, 91e6, 0.49)]
    estimate = from_ramp([*noisy, RampStep(240e6, 60e6, 0.75)], WHEN)
    assert estimate is not None and estimate.rate_bps == 91e6
    # A lossy step far below a clean faster one is not the policer: a lower bound at the clean one.
    bound = from_ramp([RampStep(38e6, 36.8e6, 0.036), RampStep(80e6, 80e6, 0.0)], WHEN)
    assert bound is not None and bound.lower_bound and bound.rate_bps == 80e6


def test_a_ramp_whose_slow_steps_lost_heavily_too_is_a_lower_bound() -> None:
    # A loaded CI run of the lab's seed 002 ramp: a starved emulator lost 13% of a 5.7 Mbit/s
    # step through a 90 Mbit/s policer. The best policed step, 38 Mbit/s, is not the rate.
    steps = [
        RampStep(0.152e6, 0.152e6, 0.0),
        RampStep(0.934e6, 0.934e6, 0.0),
        RampStep(5.737e6, 4.99e6, 0.13),
        RampStep(35.24e6, 30.0e6, 0.15),
        RampStep(216.5e6, 38.0e6, 0.82),
    ]
    estimate = from_ramp(steps, WHEN)
    assert estimate is not None and estimate.lower_bound and estimate.disturbed
    assert estimate.rate_bps == 38.0e6
    assert estimate.detail.endswith(
        "at most 38.0 Mbit/s got through (the 216.5 Mbit/s step, 82% lost), but the 5.7 Mbit/s step lost 13% "
        "too: something besides the policer (cross traffic, a busy host) was losing packets, so the policer "
        "passes at least that"
    )
    # Loss just under the bar at half the rate, or heavy loss above half of it, is the policer's.
    for slow in (RampStep(19e6, 17.3e6, 0.09), RampStep(20e6, 17e6, 0.15)):
        estimate = from_ramp([slow, RampStep(120e6, 38e6, 0.68)], WHEN)
        assert estimate is not None and not estimate.lower_bound and not estimate.disturbed


def test_a_ramp_that_lost_nothing_is_a_lower_bound_at_its_fastest_step() -> None:
    estimate = from_ramp(through_policer([20e6, 40e6, 80e6], 500e6), WHEN)
    assert estimate is not None and estimate.lower_bound and estimate.at_least
    assert estimate.rate_bps == 80e6
    assert "lost nothing at its fastest: the policer passes at least 80.0 Mbit/s" in estimate.detail


def test_a_ramp_without_usable_steps_is_no_estimate() -> None:
    assert from_ramp([], WHEN) is None
    assert from_ramp([RampStep(0.0, 0.0, 0.0)], WHEN) is None


def test_a_measured_ramp_wins_over_udp_runs_and_tcp() -> None:
    ramp = from_ramp(through_policer([60e6, 120e6, 240e6], 90e6), WHEN)
    assert policer_estimate(30e6, 3, ramp=ramp) is ramp


def test_ramp_rates_climb_geometrically_from_below_the_estimate_to_six_times_it() -> None:
    rates = ramp_rates(30e6, None, 5)
    assert rates[0] == 22_500_000 and rates[-1] == 180_000_000 and len(rates) == 5
    ratios = [b / a for a, b in itertools.pairwise(rates)]
    assert all(r == pytest.approx(ratios[0], rel=1e-3) for r in ratios)
    assert all(rate % 1000 == 0 for rate in rates)


def test_a_ramp_reaches_the_tcp_ceiling_when_tcp_saws_far_below_the_policer() -> None:
    # Seed 002 in the lab: TCP at 0.3 Mbit/s under a 216.5 Mbit/s window ceiling, 3 steps.
    rates = ramp_rates(0.3e6, None, 3, reach_bps=216.5e6)
    assert rates == [225_000, 6_979_000, 216_500_000]
    # A reach below 6x the estimate changes nothing; the link still caps it.
    assert ramp_rates(30e6, None, 5, reach_bps=100e6) == ramp_rates(30e6, None, 5)
    assert ramp_rates(0.3e6, 100e6, 3, reach_bps=216.5e6)[-1] == 100_000_000


def test_ramp_rates_stay_under_the_link() -> None:
    rates = ramp_rates(30e6, 100e6, 4)
    assert rates[-1] == 100_000_000 and rates == sorted(set(rates))
    # A link below 0.75x the estimate leaves no ramp: the estimate is wrong, not the link.
    assert ramp_rates(30e6, 20e6, 4) == []


@pytest.mark.parametrize("estimate", [0.0, -1.0, math.nan, math.inf])
def test_no_ramp_without_a_usable_estimate(estimate: float) -> None:
    assert ramp_rates(estimate, None, 5) == []


def test_no_ramp_of_one_step() -> None:
    assert ramp_rates(30e6, None, 1) == []


def test_the_advice_says_how_the_rate_was_measured() -> None:
    diagnosis, facts = policed()
    ceilings = run_ceilings(facts)
    measured = from_ramp(through_policer([60e6, 90e6, 135e6, 200e6], 90e6), WHEN)
    advice = advise(
        diagnosis, ceilings, facts, sender_name="tigo", receiver_name="jive", goal_bps=1e9, rtt_ms=120.0,
        policer=measured,
    )  # fmt: skip
    first = advice[0]
    assert first.value == "about 90.0 Mbit/s, an estimate"
    assert "basis: a paced UDP ramp (2026-11-27 14:02 UTC)" in first.reason
    assert "Between Fathom agents" not in first.reason
    assert next(item for item in advice if item.kind == "pacing").value == "81.0 Mbit/s (90% of the estimate)"
    lower = from_ramp(through_policer([20e6, 40e6, 80e6], 500e6), WHEN)
    advice = advise(
        diagnosis, ceilings, facts, sender_name="tigo", receiver_name="jive", goal_bps=1e9, rtt_ms=120.0,
        policer=lower,
    )  # fmt: skip
    assert advice[0].value == "at least 80.0 Mbit/s, an estimate" and "next ramp starts from there" in advice[0].reason
    disturbed = from_ramp([RampStep(10e6, 8e6, 0.2), RampStep(200e6, 50e6, 0.75)], WHEN)
    advice = advise(
        diagnosis, ceilings, facts, sender_name="tigo", receiver_name="jive", goal_bps=1e9, rtt_ms=120.0,
        policer=disturbed,
    )  # fmt: skip
    assert advice[0].value == "at least 50.0 Mbit/s, an estimate"
    assert "measures it again" in advice[0].reason and "climbs higher" not in advice[0].reason
