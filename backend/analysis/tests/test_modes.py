"""Synthetic RTT data for the per-flow ECMP rule, the pooled dip candidate and modes in time."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from analysis.modes import (
    DipResult,
    FlowRtts,
    ModeVerdict,
    SweepSummary,
    TimeModeKind,
    current_modes,
    held_probability,
    miss_probability,
    per_flow_modes,
    pooled_dip_candidate,
    time_separated_modes,
)

START = datetime(2025, 1, 1, tzinfo=UTC)


def make_flows(bases_ms: list[float], samples: int = 10, noise_ms: float = 0.1, seed: int = 0) -> list[FlowRtts]:
    """One flow per base RTT, each sample base + exponential noise (RTTs are right-skewed)."""
    rng = np.random.default_rng(seed)
    return [
        FlowRtts(flow=index, src_port=40000 + index, rtts_ms=tuple(base + rng.exponential(noise_ms, samples)))
        for index, base in enumerate(bases_ms)
    ]


def test_seed_000_two_ecmp_members() -> None:
    flows = make_flows([7.8] * 12 + [11.9] * 4)
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.ECMP
    assert len(result.modes) == 2
    low, high = result.modes
    assert low.rtt_ms == pytest.approx(7.8, abs=0.2) and high.rtt_ms == pytest.approx(11.9, abs=0.2)
    assert (low.share, high.share) == (0.75, 0.25)
    assert (low.flow_count, high.flow_count) == (12, 4)
    assert high.src_ports == (40012, 40013, 40014, 40015)
    assert result.flows_used == 16 and result.samples_used == 160
    assert result.kruskal_p is not None and result.kruskal_p < 1e-6
    assert result.gap_ms == pytest.approx(4.1, abs=0.2)
    assert result.min_gap_ms == pytest.approx(0.3)
    assert result.reason.startswith("16 flows: 12 at 7.8")
    assert "4 at 11.9" in result.reason and ">= 0.30 ms" in result.reason


def late_flows(bases_ms: list[float], late_share: float, seed: int) -> list[FlowRtts]:
    """make_flows with a share of the samples held up to 300 ms (a starved emulator, a burst)."""
    rng = np.random.default_rng(seed)
    return [
        FlowRtts(
            flow.flow,
            flow.src_port,
            tuple(rtt + (rng.uniform(0, 300) if rng.random() < late_share else 0) for rtt in flow.rtts_ms),
        )
        for flow in make_flows(bases_ms, noise_ms=0.05, seed=seed)
    ]


def test_late_tails_on_a_third_of_the_samples_leave_both_members() -> None:
    """A CI run's seed-000 sweep: Kruskal-Wallis ranks the tails and finds nothing; the
    flows' minima still sit on their members, and their permutation test says so."""
    result = per_flow_modes(late_flows([7.8] * 12 + [11.9] * 4, 0.35, seed=5))
    assert result.kruskal_p is not None and result.kruskal_p >= 0.005
    assert result.verdict is ModeVerdict.ECMP, result.reason
    assert [(round(mode.rtt_ms), mode.flow_count) for mode in result.modes] == [(8, 12), (12, 4)]
    assert "minima p=0.001" in result.reason


@pytest.mark.parametrize("seed", range(20))
def test_late_tails_on_one_path_are_one_mode(seed: int) -> None:
    result = per_flow_modes(late_flows([7.8] * 16, 0.35, seed=seed))
    assert result.verdict is ModeVerdict.SINGLE, result.reason


def test_three_paths_give_three_modes() -> None:
    flows = make_flows([20.0] * 6 + [21.5] * 5 + [23.0] * 5, seed=3)
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.ECMP
    assert [round(mode.rtt_ms) for mode in result.modes] == [20, 22, 23]
    assert [mode.flow_count for mode in result.modes] == [6, 5, 5]
    assert result.min_gap_ms == pytest.approx(0.4, abs=0.01)  # 2% of 20 ms beats the 0.3 ms floor


def test_unimodal_heavy_tailed_never_ecmp() -> None:
    verdicts = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        base = float(rng.uniform(1.0, 50.0))
        flows = [
            FlowRtts(flow, 40000 + flow, tuple(base + rng.lognormal(mean=-1.0, sigma=1.0, size=10)))
            for flow in range(16)
        ]
        verdicts.append(per_flow_modes(flows).verdict)
    assert verdicts.count(ModeVerdict.ECMP) == 0
    assert set(verdicts) == {ModeVerdict.SINGLE}


@pytest.mark.parametrize(("upper_ms", "noise_ms"), [(10.2, 0.02), (10.25, 0.01)])
def test_gap_below_required_is_single(upper_ms: float, noise_ms: float) -> None:
    # 10.25 ms with little noise splits into two clusters whose medians are only 0.25 ms apart.
    flows = make_flows([10.0] * 8 + [upper_ms] * 8, noise_ms=noise_ms, seed=5)
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.SINGLE
    assert result.kruskal_p is not None and result.kruskal_p < 0.01  # the flows do differ, just not enough
    assert len(result.modes) == 1 and result.modes[0].flow_count == 16 and result.modes[0].share == 1.0
    assert result.gap_ms is None or result.gap_ms < 0.3


def test_one_outlier_flow_is_not_ecmp() -> None:
    flows = make_flows([7.8] * 15 + [11.9], seed=7)
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.SINGLE
    assert result.flows_used == 16
    assert result.modes[0].flow_count == 16
    assert "outlier" in result.reason


def test_outlier_between_two_paths_is_dropped_but_counted() -> None:
    flows = make_flows([7.8] * 8 + [9.9] + [11.9] * 7, seed=8)
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.ECMP
    assert [mode.flow_count for mode in result.modes] == [8, 7]
    assert result.modes[0].share == pytest.approx(8 / 16)
    assert "dropped 1 single-flow outlier" in result.reason


def test_too_few_flows_is_insufficient() -> None:
    result = per_flow_modes(make_flows([7.8, 7.8, 11.9]))
    assert result.verdict is ModeVerdict.INSUFFICIENT
    assert result.modes == () and result.kruskal_p is None
    assert result.reason.startswith("3 flows with at least 3 samples, need 4")


def test_too_few_samples_per_flow_is_insufficient() -> None:
    result = per_flow_modes(make_flows([7.8] * 8 + [11.9] * 8, samples=2))
    assert result.verdict is ModeVerdict.INSUFFICIENT
    assert result.flows_used == 0 and result.samples_used == 0
    assert "left out 16 flows with fewer than 3 samples" in result.reason


def test_empty_input_is_insufficient() -> None:
    result = per_flow_modes([])
    assert result.verdict is ModeVerdict.INSUFFICIENT
    assert result.reason.startswith("0 flows")
    assert result.to_dict()["verdict"] == "insufficient"


def test_nan_and_negative_rtts_are_ignored_and_counted() -> None:
    clean = make_flows([7.8] * 12 + [11.9] * 4)
    dirty = [FlowRtts(f.flow, f.src_port, (*f.rtts_ms, math.nan, -1.0, math.inf)) for f in clean]
    result = per_flow_modes(dirty)
    assert result.verdict is ModeVerdict.ECMP
    assert result.samples_used == 160
    assert "ignored 48 non-finite or negative RTTs" in result.reason


def test_flow_left_with_too_few_valid_samples_is_left_out() -> None:
    flows = [*make_flows([5.0] * 4), FlowRtts(9, 40009, (math.nan, math.nan, 5.0))]
    result = per_flow_modes(flows)
    assert result.flows_used == 4
    assert "left out 1 flows" in result.reason and "ignored 2" in result.reason


def test_all_identical_rtts_are_single() -> None:
    flows = [FlowRtts(flow, 40000 + flow, (8.0,) * 10) for flow in range(16)]
    result = per_flow_modes(flows)
    assert result.verdict is ModeVerdict.SINGLE
    assert result.kruskal_p == 1.0
    assert result.modes[0].rtt_ms == 8.0 and result.modes[0].min_rtt_ms == 8.0


def test_mode_analysis_to_dict_is_plain() -> None:
    data = per_flow_modes(make_flows([7.8] * 12 + [11.9] * 4)).to_dict()
    assert data["verdict"] == "ecmp"
    modes = data["modes"]
    assert isinstance(modes, list) and modes[1]["src_ports"] == [40012, 40013, 40014, 40015]


def test_dip_clear_bimodal_is_candidate() -> None:
    rng = np.random.default_rng(0)
    pooled = np.concatenate([7.8 + rng.exponential(0.1, 100), 11.9 + rng.exponential(0.1, 100)])
    result = pooled_dip_candidate(np.round(pooled, 2).tolist())
    assert result.candidate
    assert result.p_value is not None and result.p_value < 0.01
    assert result.samples == 200


@pytest.mark.parametrize("rounded", [False, True])
def test_dip_unimodal_false_positive_rate(rounded: bool) -> None:
    false_positives = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        # Noise of a few rounding steps: ties everywhere once rounded to ping's 2 decimals.
        sample = 5.0 + rng.exponential(0.05, 100)
        if rounded:
            sample = np.round(sample, 2)
        false_positives += pooled_dip_candidate(sample.tolist()).candidate
    assert false_positives <= 10  # 5% of 200


def test_dip_is_deterministic() -> None:
    sample = np.round(5.0 + np.random.default_rng(1).exponential(0.05, 100), 2).tolist()
    assert pooled_dip_candidate(sample) == pooled_dip_candidate(sample)


def test_dip_needs_enough_samples() -> None:
    result = pooled_dip_candidate([7.8] * 20 + [11.9] * 20 + [math.nan] * 20)
    assert result == DipResult(
        False, None, 40, "40 samples, the dip test needs 50; ignored 20 non-finite or negative RTTs"
    )


def points(values_ms: list[float]) -> list[tuple[datetime, float]]:
    return [(START + timedelta(minutes=10 * index), value) for index, value in enumerate(values_ms)]


def test_time_step_is_route_change() -> None:
    result = time_separated_modes(points([10.0, 10.05, 10.02, 10.01, 14.0, 14.03, 14.01, 14.02]))
    assert result.kind is TimeModeKind.ROUTE_CHANGE
    assert result.levels_ms == pytest.approx((10.015, 14.015))
    assert result.change_times == (START + timedelta(minutes=40),)
    assert "not ECMP: modes separate in time, not by flow" in result.reason
    assert result.to_dict()["change_times"] == [(START + timedelta(minutes=40)).isoformat()]


def test_time_episodes_above_base_are_congestion() -> None:
    values = [10.0] * 6 + [13.0, 13.5] + [10.0] * 6 + [13.2] + [10.0] * 5
    result = time_separated_modes(points(values))
    assert result.kind is TimeModeKind.CONGESTION
    # 13.0 and 13.5 ms are 0.5 ms apart: two upper levels, visited within one episode.
    assert result.levels_ms == pytest.approx((10.0, 13.1, 13.5))
    assert len(result.change_times) == 5
    assert "2 episodes" in result.reason and "not ECMP" in result.reason


def test_time_short_dips_below_are_route_flapping() -> None:
    values = [14.0] * 6 + [10.0] + [14.0] * 6 + [10.0] * 2 + [14.0] * 5
    result = time_separated_modes(points(values))
    assert result.kind is TimeModeKind.ROUTE_CHANGE
    assert len(result.change_times) == 4
    assert "flapping" in result.reason


def test_time_unsorted_input_is_sorted_by_time() -> None:
    result = time_separated_modes(list(reversed(points([10.0] * 4 + [14.0] * 4))))
    assert result.kind is TimeModeKind.ROUTE_CHANGE
    assert result.change_times == (START + timedelta(minutes=40),)


def test_time_constant_is_none() -> None:
    rng = np.random.default_rng(2)
    result = time_separated_modes(points((10.0 + rng.uniform(0, 0.1, 30)).tolist()))
    assert result.kind is TimeModeKind.NONE
    assert len(result.levels_ms) == 1 and result.change_times == ()


def test_time_too_few_points() -> None:
    result = time_separated_modes(points([10.0, 14.0, math.nan, -3.0, 10.0]))
    assert result.kind is TimeModeKind.NONE
    assert result.levels_ms == ()
    assert result.reason == "3 points, need 4; ignored 2 non-finite or negative RTTs"


def test_one_flow_is_insufficient_even_when_allowed() -> None:
    result = per_flow_modes(make_flows([7.8]), min_flows=0)
    assert result.verdict is ModeVerdict.INSUFFICIENT
    assert "need 2" in result.reason


def sweep(minute: int, *modes: tuple[float, float], disturbed: bool = False, flows: int = 16) -> SweepSummary:
    verdict = ModeVerdict.ECMP if len(modes) > 1 else ModeVerdict.SINGLE if modes else ModeVerdict.INSUFFICIENT
    return SweepSummary(str(minute), START + timedelta(minutes=minute), verdict, tuple(modes), flows, disturbed)


SEED_000 = ((7.9, 0.75), (11.9, 0.25))


def test_miss_probability_is_the_binomial_tail_of_the_minority_member() -> None:
    # 16 flows, one member in four: all on the majority, or one stray flow (a cluster of one).
    expected = 0.75**16 + 16 * 0.25 * 0.75**15 + 0.25**16 + 16 * 0.75 * 0.25**15
    assert miss_probability([0.75, 0.25], 16) == pytest.approx(expected)
    assert miss_probability([1 / 3, 1 / 3, 1 / 3], 16) < miss_probability([0.5, 0.5], 16) < 1e-3
    assert miss_probability([1.0], 16) == 1.0
    assert miss_probability([0.5, 0.5], 1) == 1.0
    assert miss_probability([0.0, 0.0], 16) == 1.0


def test_newest_ecmp_sweep_stands() -> None:
    result = current_modes([sweep(0, (7.9, 1.0)), sweep(5, *SEED_000)])
    assert result.sweep is not None and result.sweep.key == "5"
    assert result.held_by == 0


def test_one_mode_sweep_on_an_ecmp_member_holds_the_modes() -> None:
    """Seed 000 on the lab: one sweep in 16 puts at most one flow on the slow member."""
    result = current_modes([sweep(0, *SEED_000), sweep(5, (7.9, 1.0))])
    assert result.sweep is not None and result.sweep.key == "0"
    assert result.newest is not None and result.newest.key == "5"
    assert result.held_by == 1
    # More than the 6% of shares known exactly: 12 of 16 flows leave them uncertain.
    assert result.miss_probability is not None
    assert 0.1 < result.miss_probability < 0.15 and result.miss_probability > miss_probability([0.75, 0.25], 16)
    assert "still stand" in result.reason


def test_held_probability_tends_to_the_exact_shares_as_sweeps_pool() -> None:
    exact = miss_probability([0.75, 0.25], 16) ** 2
    chances = [held_probability([12 * sweeps, 4 * sweeps], [16, 16]) for sweeps in (1, 4, 64)]
    assert chances[0] > chances[1] > chances[2] > exact
    assert chances[2] == pytest.approx(exact, rel=0.3)
    assert held_probability([16], [16]) == 1.0
    assert held_probability([12, 4], []) == 1.0


def test_enough_one_mode_sweeps_end_the_modes() -> None:
    """After one 12:4 sweep, two one-mode sweeps in a row are still chance (4%), four are not
    (0.9%): the slow member is gone."""
    three = current_modes([sweep(0, *SEED_000), *(sweep(5 * index, (7.9, 1.0)) for index in range(1, 4))])
    assert three.sweep is not None and three.sweep.key == "0" and three.held_by == 3
    result = current_modes([sweep(0, *SEED_000), *(sweep(5 * index, (7.9, 1.0)) for index in range(1, 5))])
    assert result.sweep is not None and result.sweep.key == "20"
    assert result.held_by == 0
    assert result.miss_probability is not None and result.miss_probability < 0.01
    assert "gone" in result.reason


def test_a_balanced_sweep_of_a_three_to_one_path_does_not_end_it_after_one_miss() -> None:
    """10 of 16 flows on the fast member is as likely on a 3:1 path as on a 5:3 one: taken as
    exact shares, one one-mode sweep (0.6%) would end the slow member."""
    result = current_modes([sweep(0, (7.9, 0.625), (11.9, 0.375)), sweep(5, (7.9, 1.0))])
    assert result.sweep is not None and result.sweep.key == "0"
    assert miss_probability([0.625, 0.375], 16) < 0.01 < (result.miss_probability or 0)


def test_a_rare_member_is_held_longer() -> None:
    """Shares pool over the ECMP sweeps in view: 2 of 16 flows, twice, is 1/8."""
    rare = ((7.9, 0.875), (11.9, 0.125))
    singles = [sweep(10 + 5 * index, (7.9, 1.0)) for index in range(3)]
    result = current_modes([sweep(0, *rare), sweep(5, *rare), *singles])
    assert result.sweep is not None and result.sweep.key == "5"
    assert result.held_by == 3


def test_a_one_mode_sweep_at_another_rtt_is_a_route_change() -> None:
    result = current_modes([sweep(0, *SEED_000), sweep(5, (20.0, 1.0))])
    assert result.sweep is not None and result.sweep.key == "5"
    assert "none of the ECMP modes" in result.reason


def test_sweeps_a_throughput_run_overlapped_are_passed_over() -> None:
    result = current_modes([sweep(0, *SEED_000), sweep(5, (8.4, 1.0), disturbed=True)])
    assert result.sweep is not None and result.sweep.key == "0"
    assert result.held_by == 0
    assert "passed over 1" in result.reason


def test_only_disturbed_sweeps_are_used_when_there_is_nothing_else() -> None:
    result = current_modes([sweep(0, *SEED_000, disturbed=True), sweep(5, (8.4, 1.0), disturbed=True)])
    assert result.sweep is not None and result.newest is not None and result.newest.key == "5"


def test_no_decided_sweep_gives_none() -> None:
    result = current_modes([sweep(0)])
    assert result.sweep is None and result.newest is None
    assert result.reason == "no decided flow sweep"
    assert current_modes([]).sweep is None


# A sweep of the lab's 8 and 12 ms members while the machine stalled (CI of 344c95f, dca -> dcb
# at 13:29:08): most samples 10-350 ms, each flow's minimum anywhere in 7.9-14.8 ms.
SWAMPED = [
    (18.94, 14.17, 12.35, 52.45, 69.73, 131.82, 89.65, 321.37, 245.46, 39.07),
    (20.83, 11.74, 9.50, 27.69, 64.57, 161.81, 89.64, 321.38, 241.23, 38.38),
    (13.87, 10.21, 13.63, 27.68, 59.79, 89.79, 89.69, 317.79, 237.73, 38.14),
    (19.71, 12.09, 10.54, 27.67, 54.56, 89.77, 89.68, 317.98, 205.58, 37.45),
    (16.30, 11.58, 11.81, 27.66, 49.41, 89.76, 89.68, 308.01, 200.71, 37.46),
    (10.00, 11.57, 8.36, 27.66, 44.22, 89.75, 89.67, 302.51, 200.68, 32.51),
    (12.18, 11.38, 10.59, 27.65, 39.00, 89.75, 89.67, 298.10, 200.62, 30.98),
    (12.18, 18.13, 17.07, 27.64, 34.83, 89.74, 89.66, 266.68, 200.60, 35.05),
    (9.27, 20.70, 11.54, 27.64, 29.57, 89.73, 89.65, 266.65, 200.59, 34.94),
    (8.49, 16.64, 80.62, 27.65, 24.33, 89.72, 89.65, 266.64, 200.57, 34.10),
    (15.81, 14.79, 80.58, 38.67, 22.87, 356.23, 356.15, 266.61, 201.85, 34.00),
    (11.12, 12.12, 79.49, 24.03, 11.10, 89.71, 86.48, 266.63, 37.46, 32.75),
    (12.16, 12.46, 74.35, 82.23, 9.83, 89.70, 348.40, 266.60, 42.14, 32.65),
    (9.33, 16.86, 69.91, 77.19, 8.02, 89.67, 321.40, 261.22, 40.62, 31.80),
    (15.14, 21.32, 64.75, 70.89, 7.92, 89.66, 321.38, 250.85, 40.53, 31.69),
    (12.83, 16.91, 57.03, 73.97, 8.18, 89.66, 321.37, 250.76, 39.82, 31.63),
]


def test_a_sweep_a_stall_swamped_has_no_verdict_rather_than_a_mode_between_the_members() -> None:
    flows = [FlowRtts(index, 40000 + index, rtts) for index, rtts in enumerate(SWAMPED)]
    result = per_flow_modes(flows, min_flows=12, min_samples_per_flow=8)
    assert result.verdict is ModeVerdict.INSUFFICIENT and result.modes == ()
    assert "only 2 with a second sample near their minimum" in result.reason
    # Jitter of a millisecond on an 8 ms path still leaves most minima seen twice: a verdict.
    rng = np.random.default_rng(7)
    jittery = [FlowRtts(f, 40000 + f, tuple(8.0 + rng.uniform(0.0, 1.0, 10))) for f in range(16)]
    assert per_flow_modes(jittery).verdict is ModeVerdict.SINGLE
