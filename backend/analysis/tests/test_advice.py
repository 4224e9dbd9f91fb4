"""Advice that names every term below the goal in the order they bind, capacity plans that
know streams share a bottleneck or a policer, the policer's estimated rate, and the path's
consensus label (pure, no DB)."""

from __future__ import annotations

import math

import pytest

from analysis.advice import SharedCeiling, advise, shared_ceiling
from analysis.capacity import DEFAULT_DAILY_VOLUME_BYTES, capacity_plan
from analysis.ceilings import Limit
from analysis.choices import Diagnosis
from analysis.diagnosis import RunDiagnosis, diagnose
from analysis.intervals import interval_stats
from analysis.path_label import path_label
from analysis.policer import EstimateBasis, PolicerEstimate, UdpRun, from_udp_runs, policer_estimate
from analysis.runs import RunFacts, run_ceilings
from analysis.tests.test_diagnosis import MIB, grnet_default, host, steady_rows

GOAL_BPS = 10e9


def capacity_limited() -> tuple[RunDiagnosis, RunFacts]:
    """The issue's path: flat at 500 Mbit/s, receive window 3.2 Gbit/s, send buffer 8.5 Gbit/s."""
    facts = grnet_default(sender=host(6 * MIB, wmem_max=16 * MIB), mode_rtts_ms=(), inflight_bytes=None)
    ceilings = run_ceilings(facts)
    diagnosis = diagnose(ceilings, interval_stats(steady_rows(500e6, jitter=0.0), facts.mss_bytes), facts)
    assert diagnosis.label is Diagnosis.CAPACITY
    return diagnosis, facts


def test_a_capacity_limit_names_every_term_below_the_goal_in_the_order_they_bind() -> None:
    diagnosis, facts = capacity_limited()
    advice = advise(
        diagnosis, run_ceilings(facts), facts, sender_name="dca", receiver_name="dcb", goal_bps=GOAL_BPS, rtt_ms=7.9
    )
    assert advice, "a capacity-limited run below a 10 Gbit/s goal is not 'nothing to change'"
    assert [(item.kind, item.setting) for item in advice] == [
        ("limit", "bottleneck"),
        ("sysctl", "net.ipv4.tcp_rmem"),
        ("sysctl", "net.core.rmem_max"),
        ("sysctl", "net.ipv4.tcp_wmem"),
        ("sysctl", "net.core.wmem_max"),
    ]
    assert advice[0].value == "500.0 Mbit/s" and "binds now" in advice[0].reason
    assert "more streams only share it" in advice[0].reason
    rmem = advice[1]
    assert rmem.where == "dcb" and "receive window ceiling at 7.9 ms would bind next at 3.19 Gbit/s" in rmem.reason
    # 2 x BDP of 10 Gbit/s at 7.9 ms, whole MiB.
    assert int(rmem.value.split()[2]) == math.ceil(2 * GOAL_BPS * 0.0079 / 8 / MIB) * MIB
    assert (
        advice[3].where == "dca" and "send buffer ceiling at 7.9 ms would bind after that at 8.49" in advice[3].reason
    )


def test_a_goal_every_term_reaches_needs_nothing() -> None:
    diagnosis, facts = capacity_limited()
    advice = advise(
        diagnosis, run_ceilings(facts), facts, sender_name="dca", receiver_name="dcb", goal_bps=400e6, rtt_ms=7.9
    )
    assert advice == []


def test_the_link_is_named_where_it_binds_and_caps_the_streams() -> None:
    # Seed 004's 64 KB windows over 65 ms, between hosts with 1 Gbit/s NICs: 12 streams reach
    # 100 Mbit/s, but a 10 Gbit/s goal stops at the link.
    slac = host(131_072, wmem_max=131_072, link_rate_bps=1e9)
    facts = RunFacts(
        streams=1, sender=slac, receiver=slac, congestion_control="cubic", pmtu_bytes=1500, run_min_rtt_ms=65.2
    )
    ceilings = run_ceilings(facts)
    diagnosis = diagnose(ceilings, interval_stats(steady_rows(7.8e6, pmtu=1500), facts.mss_bytes), facts)
    advice = advise(
        diagnosis, ceilings, facts, sender_name="slac", receiver_name="uvic", goal_bps=GOAL_BPS, rtt_ms=65.2
    )
    settings = [item.setting for item in advice]
    assert settings.index("link speed") > settings.index("net.ipv4.tcp_rmem")
    link = next(item for item in advice if item.setting == "link speed")
    assert link.kind == "limit" and "would bind" in link.reason and "faster interface" in link.reason
    streams = next(item for item in advice if item.kind == "streams")
    link_bps = ceilings.at_min_rtt.ceilings.link.rate_bps
    assert link_bps is not None
    assert int(streams.value) == math.ceil(link_bps / 7.8e6) < math.ceil(GOAL_BPS / 7.8e6)
    assert "the link (the slower NIC) carries at most" in streams.reason
    small = advise(diagnosis, ceilings, facts, sender_name="slac", receiver_name="uvic", goal_bps=100e6, rtt_ms=65.2)
    assert 10 <= int(next(item for item in small if item.kind == "streams").value) <= 16


def policed() -> tuple[RunDiagnosis, RunFacts]:
    """Seed 002's shape on a 120 ms path: TCP loses far more than ping, at 0.18 Mbit/s."""
    facts = RunFacts(
        streams=1,
        sender=host(16 * MIB, wmem_max=16 * MIB),
        receiver=host(16 * MIB),
        congestion_control="cubic",
        pmtu_bytes=1500,
        run_min_rtt_ms=120.0,
        loss_fraction=0.0005,
        loss_source="ping",
    )
    rows = steady_rows(0.18e6, retransmits=2, pmtu=1500, jitter=0.5)
    diagnosis = diagnose(run_ceilings(facts), interval_stats(rows, facts.mss_bytes), facts)
    assert diagnosis.label is Diagnosis.POLICER
    return diagnosis, facts


def test_behind_a_policer_streams_do_not_add_up() -> None:
    diagnosis, _ = policed()
    estimate = policer_estimate(diagnosis.rate_bps, 1)
    assert estimate is not None and estimate.lower_bound
    plan = capacity_plan(
        DEFAULT_DAILY_VOLUME_BYTES,
        diagnosis.rate_bps,
        1,
        shared_ceiling(diagnosis.label, diagnosis.rate_bps, None, estimate),
    )
    # Today's per-stream arithmetic would ask for 7,353 streams of 0.18 Mbit/s.
    assert math.ceil(plan.required_bps / 0.18e6) > 7000
    assert plan.streams_needed == 1 and plan.backlog_grows
    assert "no number of streams keeps up" in plan.reason and "share it rather than add up" in plan.reason
    assert plan.shared_ceiling_bps == diagnosis.rate_bps and plan.notes


def test_behind_a_measured_policer_the_plan_paces_todays_streams_instead_of_adding_hundreds() -> None:
    # The lab's tigo -> jive: one TCP stream keeps 0.3 Mbit/s through a policer a ramp measured
    # at 84.2 Mbit/s; per-stream arithmetic asked for 281 streams to reach it.
    diagnosis, _ = policed()
    udp = [UdpRun(100e6, 84.2e6, 0.16), UdpRun(120e6, 84.2e6, 0.30)]
    measured = policer_estimate(diagnosis.rate_bps, 3, udp)
    assert measured is not None and not measured.lower_bound
    shared = shared_ceiling(diagnosis.label, 0.3e6, None, measured)
    assert shared is not None and shared.pacing_reaches_it

    plan = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 0.3e6, 1, shared)
    assert plan.streams_needed == 1 and plan.backlog_grows and plan.shared_ceiling_bps == 84.2e6
    assert "no number of streams keeps up: the policer (about 84.2 Mbit/s, an estimate)" in plan.reason
    assert "today's 1 stream, paced just below it, reaches that" in plan.reason
    assert "it would take 281 of them to reach 84.2 Mbit/s" in plan.notes[0]
    assert "window" in plan.notes[1]

    # 1 TiB a day (102 Mbit/s) fits below a 500 Mbit/s policer: pacing, not 340 streams.
    wide = shared_ceiling(diagnosis.label, 0.3e6, None, policer_estimate(None, 0, [UdpRun(600e6, 500e6, 0.17)]))
    assert wide is not None and wide.rate_bps == 500e6
    fits = capacity_plan(2**40, 0.3e6, 1, wide)
    assert fits.streams_needed == 1 and fits.backlog_grows
    assert "pacing keeps up, not more streams: paced to between 101.8 Mbit/s in all" in fits.reason
    assert fits.reason.endswith("today's 1 stream carries the volume")
    assert capacity_plan(2**40, 0.6e6, 2, wide).reason.endswith("today's 2 streams carry the volume")
    assert "it would take 340 of them to reach 101.8 Mbit/s" in fits.notes[0]

    # Streams that get half of its rate or more together are not starved: one more reaches it.
    half = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 42.1e6, 1, shared)
    assert half.streams_needed == 2 and "2 streams reach it, more only share it" in half.reason
    assert not any("unpaced" in note for note in half.notes)


def test_a_full_bottleneck_is_shared_by_more_streams() -> None:
    diagnosis, _ = capacity_limited()
    shared = shared_ceiling(diagnosis.label, diagnosis.rate_bps, 9.9e9, None)
    assert shared == SharedCeiling(500e6, "the path's full bottleneck")
    plan = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 500e6, 4, shared)
    assert plan.streams_needed == 4 and "the path's full bottleneck carries at most 500.0 Mbit/s" in plan.reason
    fits = capacity_plan(2**40, 500e6, 4, shared)
    assert not fits.backlog_grows and fits.streams_needed is not None and fits.streams_needed <= 4


def test_per_flow_limits_add_up_to_the_link_and_no_further() -> None:
    link = SharedCeiling(2e9, "the link (the slower NIC)")
    plan = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 100e6, 1, link)
    assert plan.streams_needed == 14 and "keep up" in plan.reason and plan.notes
    # 13 TiB/day needs 1.32 Gbit/s: past a 1 Gbit/s link, 10 streams of 100 Mbit/s reach the link, no more.
    slow = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 100e6, 1, SharedCeiling(1e9, "the link (the slower NIC)"))
    assert slow.streams_needed == 10 and "10 streams reach it, more only share it" in slow.reason
    assert capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 100e6, 1).streams_needed == 14


def test_the_policer_rate_is_in_the_advice_as_an_estimate_with_its_basis() -> None:
    diagnosis, facts = policed()
    ceilings = run_ceilings(facts)
    lower = policer_estimate(diagnosis.rate_bps, 3)
    advice = advise(
        diagnosis, ceilings, facts, sender_name="tigo", receiver_name="jive", goal_bps=90e6, rtt_ms=120.0, policer=lower
    )
    first = advice[0]
    assert (first.kind, first.setting) == ("estimate", "policer rate")
    assert first.value == "at least 0.2 Mbit/s, an estimate"
    assert "steady TCP rate of 3 runs" in first.reason and "paced UDP ramp" in first.reason
    assert next(item for item in advice if item.kind == "pacing").value == "just below the policer's rate"

    udp = [UdpRun(100e6, 90.2e6, 0.098), UdpRun(120e6, 89.8e6, 0.25), UdpRun(50e6, 50e6, 0.0)]
    measured = policer_estimate(diagnosis.rate_bps, 3, udp)
    assert measured is not None and measured.basis is EstimateBasis.PACED_UDP
    advice = advise(
        diagnosis,
        ceilings,
        facts,
        sender_name="tigo",
        receiver_name="jive",
        goal_bps=1e9,
        rtt_ms=120.0,
        policer=measured,
    )
    assert advice[0].value == "about 90.0 Mbit/s, an estimate"
    assert "2 paced UDP runs offering 110.0 Mbit/s" in advice[0].reason
    assert "below the goal of 1.00 Gbit/s" in advice[0].reason
    assert next(item for item in advice if item.kind == "pacing").value == "81.0 Mbit/s (90% of the estimate)"
    assert not any(item.kind == "streams" for item in advice)


def test_policer_estimates_prefer_the_most_direct_evidence() -> None:
    ramp = PolicerEstimate(91e6, EstimateBasis.UDP_RAMP, "a paced UDP ramp lost from 91 Mbit/s on")
    udp = [UdpRun(100e6, 90e6, 0.1)]
    assert policer_estimate(1e6, 1, udp, ramp=ramp) is ramp
    assert policer_estimate(1e6, 1, udp) == from_udp_runs(udp)
    # UDP that lost nothing only raises the lower bound; without any evidence there is none.
    clean = policer_estimate(1e6, 1, [UdpRun(40e6, 40e6, 0.0)])
    assert clean is not None and clean.lower_bound and clean.rate_bps == 40e6
    assert policer_estimate(None, 0) is None and policer_estimate(0.0, 1) is None
    assert from_udp_runs([UdpRun(100e6, 0.0, 1.0)]) is None


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([Diagnosis.CAPACITY] * 9 + [Diagnosis.BELOW_CEILINGS] * 2, ("capacity", 9, 11)),
        (
            [Diagnosis.BELOW_CEILINGS, Diagnosis.CAPACITY, Diagnosis.BELOW_CEILINGS, Diagnosis.CAPACITY],
            ("below_ceilings", 2, 4),
        ),
        ([Diagnosis.UNKNOWN, Diagnosis.UNKNOWN, Diagnosis.LOSS], ("loss", 1, 3)),
        ([Diagnosis.UNKNOWN, Diagnosis.UNKNOWN], ("unknown", 2, 2)),
    ],
)
def test_the_path_label_is_the_consensus_of_its_runs(labels: list[Diagnosis], expected: tuple[str, int, int]) -> None:
    label = path_label(labels)
    assert label is not None
    assert (label.diagnosis.value, label.agreeing_runs, label.runs) == expected
    assert label.to_dict()["share"] == pytest.approx(expected[1] / expected[2])


def test_the_label_summary_and_no_runs() -> None:
    label = path_label([Diagnosis.CAPACITY] * 9 + [Diagnosis.BELOW_CEILINGS] * 2)
    assert label is not None and label.summary == "capacity (9 of 11 runs)"
    assert path_label([]) is None


def test_below_every_ceiling_the_lowest_term_binds_next_not_now() -> None:
    _, facts = capacity_limited()
    below = RunDiagnosis(Diagnosis.BELOW_CEILINGS, 500e6, 3.19e9, Limit.RECEIVE_WINDOW, 0.16, ())
    advice = advise(
        below, run_ceilings(facts), facts, sender_name="dca", receiver_name="dcb", goal_bps=GOAL_BPS, rtt_ms=7.9
    )
    assert advice[0].setting == "net.ipv4.tcp_rmem" and "would bind next at 3.19 Gbit/s" in advice[0].reason
    assert not any("binds now" in item.reason for item in advice)
    assert advice[-1].kind == "test"


def test_an_unknown_shared_ceiling_is_said_so() -> None:
    plan = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 100e6, 1)
    assert plan.shared_ceiling_bps is None and "what all streams share is unknown" in plan.notes[0]
    assert capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 3e9, 1).notes == []


def test_a_run_at_the_link_names_the_link_once() -> None:
    nic = host(64 * MIB, wmem_max=64 * MIB, link_rate_bps=10e9, mtu_bytes=9000)
    facts = grnet_default(sender=nic, receiver=nic, mode_rtts_ms=(), inflight_bytes=None)
    ceilings = run_ceilings(facts)
    link_bps = ceilings.at_min_rtt.ceilings.link.rate_bps
    assert link_bps is not None
    diagnosis = diagnose(ceilings, interval_stats(steady_rows(0.97 * link_bps, jitter=0.01), facts.mss_bytes), facts)
    assert diagnosis.label is Diagnosis.CAPACITY
    advice = advise(diagnosis, ceilings, facts, sender_name="dca", receiver_name="dcb", goal_bps=40e9, rtt_ms=7.9)
    assert [item.setting for item in advice].count("link speed") == 1
    assert advice[0].setting == "link speed" and "the link binds now" in advice[0].reason
    assert not any(item.setting == "bottleneck" for item in advice)
