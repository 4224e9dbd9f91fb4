"""Run ceilings, diagnosis, advice and capacity plans on the seeds' situations (pure, no DB)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from analysis.advice import advise
from analysis.capacity import DEFAULT_DAILY_VOLUME_BYTES, capacity_plan
from analysis.ceilings import Limit
from analysis.choices import Diagnosis
from analysis.diagnosis import FLAT_RATE_CV, diagnose
from analysis.intervals import IntervalRow, interval_stats, per_second_rows
from analysis.runs import RunFacts, run_buffers, run_ceilings, wilson_lower_bound
from analysis.tuning import HostTuning

MIB = 2**20


def host(rmem_max: int | None, wmem_max: int | None = 4 * MIB, **extra: object) -> HostTuning:
    values: dict[str, object] = {
        "kernel": "6.18.0-1-amd64",
        "tcp_rmem_max_bytes": rmem_max,
        "tcp_wmem_max_bytes": wmem_max,
        "rmem_max_bytes": 4 * MIB,
        "wmem_max_bytes": 4 * MIB,
        "adv_win_scale": 1,
        "congestion_control": "cubic",
    }
    values.update(extra)
    return HostTuning(**values)  # type: ignore[arg-type]


def steady_rows(
    rate_bps: float,
    *,
    seconds: int = 10,
    snd_wnd: int | None = None,
    snd_cwnd: int | None = None,
    retransmits: int = 0,
    pmtu: int = 9000,
    jitter: float = 0.0,
) -> list[IntervalRow]:
    rates = [rate_bps * (1 + (jitter if second % 2 else -jitter)) for second in range(seconds)]
    return per_second_rows(
        rates, retransmits=retransmits, snd_cwnd_bytes=snd_cwnd, snd_wnd_bytes=snd_wnd, rtt_us=8000, pmtu=pmtu
    )


def grnet_default(**overrides: object) -> RunFacts:
    values: dict[str, object] = {
        "streams": 1,
        "sender": host(6 * MIB),
        "receiver": host(6 * MIB),
        "congestion_control": "cubic",
        "pmtu_bytes": 9000,
        "run_min_rtt_ms": 7.9,
        "run_mean_rtt_ms": 8.6,
        "path_min_rtt_ms": 7.9,
        "mode_rtts_ms": (7.9, 12.0),
        "loss_fraction": 0.0,
        "loss_source": "ping: 0 of 600 lost",
        # 3.05 Gbit/s at 8.6 ms under load: 3.3 MB in flight from a 4 MiB send buffer.
        "inflight_bytes": 3.05e9 * 0.0086 / 8,
    }
    values.update(overrides)
    return RunFacts(**values)  # type: ignore[arg-type]


def test_seed_000_default_buffers_are_receive_window_limited_with_two_mode_ceilings() -> None:
    facts = grnet_default()
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.limit is Limit.RECEIVE_WINDOW
    assert ceilings.at_min_rtt.ceiling_bps == pytest.approx(6 * MIB * 0.5 * 8 / 0.0079, rel=1e-9)
    assert [mode.ceiling_bps for mode in ceilings.per_mode] == pytest.approx([3.19e9, 2.10e9], rel=0.01)

    rows = steady_rows(3.05e9, snd_wnd=3_300_000, snd_cwnd=5_000_000)
    stats = interval_stats(rows, facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.RECEIVE_WINDOW
    assert result.evidence and any("snd_wnd < snd_cwnd in 100%" in line for line in result.evidence)


def test_receive_window_wins_when_the_send_buffer_is_large() -> None:
    facts = grnet_default(sender=host(6 * MIB, wmem_max=16 * MIB))
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.limit is Limit.RECEIVE_WINDOW
    stats = interval_stats(steady_rows(3.05e9, snd_wnd=3_300_000, snd_cwnd=5_000_000), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.RECEIVE_WINDOW
    assert result.fraction_of_ceiling == pytest.approx(3.05e9 / ceilings.at_min_rtt.ceiling_bps, rel=1e-9)  # type: ignore[operator]
    advice = advise(result, ceilings, facts, sender_name="dca", receiver_name="dcb", goal_bps=10e9, rtt_ms=12.0)
    rmem = next(item for item in advice if item.setting == "net.ipv4.tcp_rmem")
    assert rmem.where == "dcb"
    # 2 x BDP of 10 Gbit/s over the slower 12 ms mode: 30 MB, rounded up to whole MiB.
    assert int(rmem.value.split()[2]) == math.ceil(10e9 * 0.012 / 8 / 0.5 / MIB) * MIB
    assert any(item.where == "dca" and item.setting == "net.ipv4.tcp_wmem" for item in advice)


def test_send_buffer_limited_when_only_rmem_was_raised() -> None:
    # Seed 000: rmem raised to 16 MiB, wmem left at 4 MiB: the sender throttles at 2 MiB in flight.
    facts = grnet_default(
        receiver=host(16 * MIB), sender=host(16 * MIB, wmem_max=4 * MIB), mode_rtts_ms=(), inflight_bytes=None
    )
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.limit is Limit.SEND_BUFFER
    stats = interval_stats(steady_rows(2.05e9), facts.mss_bytes)
    assert diagnose(ceilings, stats, facts).label is Diagnosis.SEND_BUFFER


def test_tuned_hosts_have_a_higher_ceiling_and_another_limit() -> None:
    facts = grnet_default(
        sender=host(16 * MIB, wmem_max=16 * MIB), receiver=host(16 * MIB, wmem_max=16 * MIB), inflight_bytes=None
    )
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.ceiling_bps == pytest.approx(8.49e9, rel=0.01)
    # The emulator carries ~4.6 Gbit/s flat: far below the window ceilings.
    stats = interval_stats(steady_rows(4.6e9, jitter=0.02), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.CAPACITY


def test_seed_004_window_limited_and_about_a_dozen_streams_for_100_mbit() -> None:
    slac = host(131_072, wmem_max=131_072)
    facts = RunFacts(
        streams=1, sender=slac, receiver=slac, congestion_control="cubic", pmtu_bytes=1500, run_min_rtt_ms=65.2
    )
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.ceiling_bps == pytest.approx(8.04e6, rel=0.01)
    stats = interval_stats(steady_rows(7.8e6, pmtu=1500), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label in (Diagnosis.RECEIVE_WINDOW, Diagnosis.SEND_BUFFER)
    advice = advise(result, ceilings, facts, sender_name="slac", receiver_name="uvic", goal_bps=100e6, rtt_ms=65.2)
    streams = next(item for item in advice if item.kind == "streams")
    assert 10 <= int(streams.value) <= 16  # seed 004: "about 12 streams of 64 KB for 100 Mbit/s"


def test_window_request_is_doubled_and_capped() -> None:
    facts = RunFacts(
        streams=1,
        sender=host(None, rmem_max_bytes=131_071, wmem_max_bytes=131_071),
        receiver=host(None, rmem_max_bytes=131_071, wmem_max_bytes=131_071),
        window_request_bytes=1_000_000,
    )
    buffers = run_buffers(facts)
    assert buffers.receive_bytes == 2 * 131_071
    assert "doubled" in buffers.receive_source


def seed_002_facts(**overrides: object) -> RunFacts:
    """tigo -> jive: one CUBIC stream, 16 MiB buffers, 310 ms, the pings' loss 0.05%."""
    values: dict[str, object] = {
        "streams": 1,
        "sender": host(16 * MIB, wmem_max=16 * MIB),
        "receiver": host(16 * MIB),
        "congestion_control": "cubic",
        "pmtu_bytes": 1500,
        "run_min_rtt_ms": 310.2,
        "loss_fraction": 0.0005,
        "loss_source": "ping",
    }
    values.update(overrides)
    return RunFacts(**values)  # type: ignore[arg-type]


def pinged(lost: int, sent: int) -> RunFacts:
    """Seed 002 with the pings' own counts, their loss floor included."""
    return seed_002_facts(
        loss_fraction=lost / sent,
        loss_source=f"ping: {lost} of {sent} lost in the 6 h before",
        loss_floor=wilson_lower_bound(lost, sent),
    )


def test_seed_002_policer_suspected_when_tcp_loses_far_more_than_ping() -> None:
    facts = seed_002_facts()
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.limit is Limit.LOSS
    stats = interval_stats(steady_rows(0.3e6, retransmits=3, pmtu=1500, jitter=0.5), facts.mss_bytes)
    assert stats.retransmit_rate is not None and stats.retransmit_rate > 0.05
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.POLICER
    advice = advise(result, ceilings, facts, sender_name="tigo", receiver_name="jive", goal_bps=90e6, rtt_ms=310.2)
    assert any(item.kind == "pacing" and item.where == "tigo" for item in advice)


def test_a_policed_flow_collapsed_under_a_loaded_cpu_is_no_queue() -> None:
    # A fresh machine's make test, other suites loading both cores: TCP through seed 002's
    # policer collapsed to 0.2 Mbit/s, its measured seconds without a retransmit (timeouts
    # between them), and its RTT under load read 390 ms against 310 ms: "capacity 0.2
    # Mbit/s". At 0.2 Mbit/s, 80 ms holds 2 KB, not a queue at any bottleneck.
    facts = seed_002_facts(run_mean_rtt_ms=390.0)
    quiet = interval_stats(steady_rows(0.2e6, retransmits=0, pmtu=1500, jitter=0.5), facts.mss_bytes)
    assert diagnose(run_ceilings(facts), quiet, facts).label is Diagnosis.BELOW_CEILINGS
    lossy = interval_stats(steady_rows(0.2e6, retransmits=3, pmtu=1500, jitter=0.5), facts.mss_bytes)
    assert diagnose(run_ceilings(facts), lossy, facts).label is Diagnosis.POLICER


def test_a_sawing_flow_losing_heavily_is_policed_though_a_loaded_host_stretched_its_rtt() -> None:
    # Seed 002 on a busy CI machine: CUBIC saws far below the 90 Mbit/s policer, losing 2 %,
    # and the emulator's late packets stretched its RTT by 80 ms: 1.5 MB "in a queue" at 15
    # Mbit/s. A loss-based sender at a real queue loses little and runs flat at its rate.
    facts = seed_002_facts(run_mean_rtt_ms=390.0, loss_fraction=0.0, loss_source="ping: 0 of 720 lost")
    stats = interval_stats(steady_rows(15e6, retransmits=26, pmtu=1500, jitter=0.5), facts.mss_bytes)
    assert stats.rate_cv is not None and stats.rate_cv > FLAT_RATE_CV
    assert diagnose(run_ceilings(facts), stats, facts).label is Diagnosis.POLICER
    # The same loss with the rate flat at the queue's link, as Reno into a 7-packet queue: capacity.
    flat = interval_stats(steady_rows(15e6, retransmits=26, pmtu=1500), facts.mss_bytes)
    assert diagnose(run_ceilings(facts), flat, facts).label is Diagnosis.CAPACITY


def test_a_receiver_reading_slowly_is_no_receive_buffer_limit() -> None:
    # CI's grnet-ecmp-tuned run on a loaded machine: 16 MiB buffers, the receiver advertising
    # less than cwnd all run long, 1.4 Gbit/s at 32 ms under load (5.6 MB in flight against the
    # 8 MiB window its buffer allows). Its application read slowly; a larger buffer would not help.
    facts = grnet_default(
        sender=host(16 * MIB, wmem_max=16 * MIB),
        receiver=host(16 * MIB, wmem_max=16 * MIB),
        run_min_rtt_ms=13.9,
        run_mean_rtt_ms=32.1,
        inflight_bytes=1.398e9 * 0.0321 / 8,
        max_snd_wnd_bytes=8_500_000,
        max_snd_cwnd_bytes=12_500_000,
    )
    stats = interval_stats(steady_rows(1.398e9, snd_wnd=5_600_000, snd_cwnd=12_000_000, retransmits=1), facts.mss_bytes)
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.BELOW_CEILINGS and "read slowly" in result.evidence[0], result.evidence[0]


def test_a_sender_at_three_quarters_of_its_send_buffer_ceiling_is_send_buffer_limited() -> None:
    # A small tcp_wmem (1 MiB) on a tuned path: the run kept 0.7 of the buffer in flight,
    # 75 % of the ceiling planned from 0.9 (the run's own in-flight evidence), flat and
    # without loss. "Flat below the hosts' ceilings" called it a path bottleneck.
    rtt_s = 0.040
    rate = 0.7 * MIB * 8 / rtt_s
    facts = grnet_default(
        sender=host(64 * MIB, wmem_max=1 * MIB),
        receiver=host(64 * MIB),
        run_min_rtt_ms=40.0,
        run_mean_rtt_ms=40.4,
        path_min_rtt_ms=40.0,
        mode_rtts_ms=(),
        inflight_bytes=rate * 0.0404 / 8,
    )
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.limit is Limit.SEND_BUFFER
    stats = interval_stats(steady_rows(rate, snd_wnd=60 * MIB, snd_cwnd=2 * MIB), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.SEND_BUFFER, result.evidence[0]
    # What binds is the buffer at the share this run kept in flight over the unloaded RTT:
    # its rate with the 1 % its own queue added taken out, not the planning share's 0.9.
    assert result.binding_bps == pytest.approx(rate * 40.4 / 40.0)
    planned = ceilings.at_min_rtt.ceilings.send_buffer.rate_bps
    assert planned is not None and result.binding_bps is not None and result.binding_bps < 0.8 * planned


def test_a_receive_window_binds_at_the_flows_own_rtt_when_its_acks_return_slower() -> None:
    # The corpus's c016: 160 KiB windows over a 7.3 ms ECMP path whose ACKs returned over a
    # member 3.5 ms slower than any ping or sweep had taken. The window at the path's minimum
    # says 90 Mbit/s; the flow, at 10.8 ms, had 61.
    buffer = 160 * 1024
    window = buffer * 0.5
    rate = window * 8 / 0.0108
    facts = grnet_default(
        sender=host(buffer),
        receiver=host(buffer),
        run_min_rtt_ms=10.6,
        run_mean_rtt_ms=10.8,
        path_min_rtt_ms=7.3,
        mode_rtts_ms=(),
        ecmp_seen=True,
        inflight_bytes=window,
    )
    ceilings = run_ceilings(facts)
    stats = interval_stats(steady_rows(rate, snd_wnd=int(window), snd_cwnd=int(4 * window)), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.RECEIVE_WINDOW, result.evidence[0]
    assert ceilings.at_min_rtt.ceilings.receive_window.rate_bps == pytest.approx(window * 8 / 0.0073)
    assert result.binding_bps == pytest.approx(rate)


def test_a_sender_holding_its_flow_is_its_send_buffer_though_its_bursts_queue() -> None:
    # The corpus's c025: cubic, tcp_wmem 688 KiB, 118 ms, a 143 Mbit/s link. The sender writes
    # its buffer in bursts that queue at the link: 182 ms under load, which the queue test
    # read as a bottleneck. TCP_INFO says neither window held the 1.4 MB in flight.
    rate = 62.9e6
    facts = grnet_default(
        sender=host(24 * MIB, wmem_max=704_512),
        receiver=host(24 * MIB),
        run_min_rtt_ms=173.0,
        run_mean_rtt_ms=181.7,
        path_min_rtt_ms=118.0,
        mode_rtts_ms=(),
        inflight_bytes=rate * 0.1817 / 8,
        max_snd_wnd_bytes=6_626_816,
        max_snd_cwnd_bytes=3_516_564,
    )
    stats = interval_stats(steady_rows(rate, snd_wnd=6_626_816, snd_cwnd=3_516_564), facts.mss_bytes)
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.SEND_BUFFER and "the sender did" in result.evidence[0], result.evidence[0]
    # With a 16 MiB buffer the same 1.4 MB in flight is not the buffer: something else held it.
    roomy = replace(facts, sender=host(24 * MIB, wmem_max=16 * MIB))
    assert diagnose(run_ceilings(roomy), stats, roomy).label is not Diagnosis.SEND_BUFFER
    # Congestion control holding the same bytes (in flight near cwnd) is the bottleneck's queue.
    held = replace(facts, max_snd_cwnd_bytes=1_500_000)
    assert diagnose(run_ceilings(held), stats, held).label is Diagnosis.CAPACITY


def test_one_ping_lost_of_a_hundred_does_not_hide_the_policer() -> None:
    # A CI run of seed 002: TCP lost 6.1% through the policer while 1 of 100 pings was lost
    # (the head-end's 0.05%). Read as 1%, that loss "explained" the run; the pings only show
    # at least 0.18%, which TCP's 6.1% far exceeds.
    facts = pinged(1, 100)
    assert facts.loss_floor is not None and 0.0017 < facts.loss_floor < 0.0018
    ceilings = run_ceilings(facts)
    stats = interval_stats(steady_rows(0.2e6, retransmits=1, pmtu=1500, jitter=0.3), facts.mss_bytes)
    assert stats.retransmit_rate is not None and 0.05 < stats.retransmit_rate < 0.08
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.POLICER, result
    assert "(at least 0.177% at 95%)" in result.evidence[0]
    # Taken at its face value, as before, the same ping made it "loss".
    assert diagnose(ceilings, stats, replace(facts, loss_floor=None)).label is Diagnosis.LOSS


def collapsed_run(rate_bps: float, retransmits: int) -> list[IntervalRow]:
    """Seed 002's flow waiting out timeouts: a few hundred segments, `retransmits` in all."""
    rows = steady_rows(rate_bps, seconds=4, pmtu=1500, jitter=0.5)
    return [replace(row, retransmits=1 if index < retransmits else 0) for index, row in enumerate(rows)]


def test_a_collapsed_flow_with_few_retransmits_is_policed_before_the_pings_count() -> None:
    # The official CI's seed 002, twice in a row: 0.4 Mbit/s through the policer, one
    # retransmit in about 140 segments (0.7 %, under the 1 % that alone is heavy loss) and too
    # few pings yet for a loss rate: "below ceilings", so no UDP ramp measured the policer.
    facts = seed_002_facts(loss_fraction=None, loss_source="only 40 pings in the 6 h before")
    stats = interval_stats(collapsed_run(0.4e6, 1), facts.mss_bytes)
    assert stats.retransmit_rate is not None and stats.retransmit_rate < 0.01
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.POLICER, result.evidence
    assert result.evidence[0].startswith("the flow collapsed to 0.2% of its ceiling with 1 retransmits")
    assert "not measured yet" in result.evidence[0]
    # No ping lost of 720: the same.
    quiet = pinged(0, 720)
    assert diagnose(run_ceilings(quiet), stats, quiet).label is Diagnosis.POLICER
    # One of 150 lost (the head-end's 0.05 %): the least loss that supports, 0.12 %, would let
    # CUBIC run more than three times faster, so the collapse is the flow's own.
    one = pinged(1, 150)
    result = diagnose(run_ceilings(one), stats, one)
    assert result.label is Diagnosis.POLICER and "would allow" in result.evidence[0], result.evidence


def test_a_collapsed_flow_on_a_path_losing_enough_to_hold_it_is_loss() -> None:
    # 20 of 1,000 pings lost (at least 1.3 %): at 310 ms that holds CUBIC near 0.4 Mbit/s.
    facts = pinged(20, 1000)
    stats = interval_stats(collapsed_run(0.3e6, 1), facts.mss_bytes)
    assert diagnose(run_ceilings(facts), stats, facts).label is Diagnosis.LOSS
    # BBR does not collapse on loss: its slow run is not judged by this rule.
    bbr = seed_002_facts(loss_fraction=None, congestion_control="bbr")
    assert diagnose(run_ceilings(bbr), stats, bbr).label is not Diagnosis.POLICER


def test_a_path_that_really_loses_stays_loss_limited() -> None:
    # 20 of 1,000 pings lost (at least 1.3%): TCP losing 2.5% is the path's loss, not its own.
    facts = pinged(20, 1000)
    ceilings = run_ceilings(facts)
    loss_bps = ceilings.at_min_rtt.ceilings.loss.rate_bps
    assert loss_bps is not None
    segments_per_s = loss_bps / 8 / 1448
    rows = steady_rows(loss_bps, retransmits=max(1, round(segments_per_s * 0.025)), pmtu=1500, jitter=0.2)
    stats = interval_stats(rows, facts.mss_bytes)
    assert stats.retransmit_rate is not None and stats.retransmit_rate < 0.13
    assert diagnose(ceilings, stats, facts).label is Diagnosis.LOSS


@pytest.mark.parametrize(
    ("lost", "sent", "low", "high"),
    [
        (0, 100, 0.0, 0.0),
        (1, 100, 0.0017, 0.0018),
        (10, 1000, 0.0054, 0.0055),
        (100, 100, 0.96, 0.97),
        (5, 0, 0.0, 0.0),
    ],
)
def test_wilson_lower_bound(lost: int, sent: int, low: float, high: float) -> None:
    assert low <= wilson_lower_bound(lost, sent) <= high


def test_loss_limited_near_the_cubic_ceiling() -> None:
    facts = RunFacts(
        streams=1,
        sender=host(64 * MIB, wmem_max=64 * MIB),
        receiver=host(64 * MIB),
        congestion_control="cubic",
        pmtu_bytes=1500,
        run_min_rtt_ms=50.0,
        loss_fraction=1e-4,
        loss_source="ping",
    )
    ceilings = run_ceilings(facts)
    loss_bps = ceilings.at_min_rtt.ceilings.loss.rate_bps
    assert loss_bps is not None and ceilings.at_min_rtt.limit is Limit.LOSS
    # Retransmits of about the ping loss: the path's loss, not the flow's own.
    segments_per_s = loss_bps / 8 / 1448
    rows = steady_rows(loss_bps * 0.95, retransmits=max(1, round(segments_per_s * 1e-4)), pmtu=1500, jitter=0.2)
    result = diagnose(ceilings, interval_stats(rows, facts.mss_bytes), facts)
    assert result.label is Diagnosis.LOSS


def test_bbr_has_no_loss_ceiling() -> None:
    facts = grnet_default(congestion_control="bbr", loss_fraction=0.01)
    ceilings = run_ceilings(facts)
    assert not ceilings.at_min_rtt.ceilings.loss.known
    assert "BBR" in ceilings.at_min_rtt.ceilings.loss.reason


@pytest.mark.parametrize(
    ("facts", "reason"),
    [
        (RunFacts(streams=1, sender=HostTuning(), receiver=HostTuning()), "receive buffer size unknown"),
        (
            RunFacts(streams=1, sender=host(6 * MIB), receiver=host(6 * MIB), run_min_rtt_ms=0.0),
            "RTT unknown or zero",
        ),
    ],
)
def test_missing_inputs_give_unknown_terms_and_an_unknown_diagnosis(facts: RunFacts, reason: str) -> None:
    ceilings = run_ceilings(facts)
    assert ceilings.at_min_rtt.ceilings.receive_window.reason == reason
    assert ceilings.at_min_rtt.ceiling_bps is None
    stats = interval_stats(steady_rows(1e9, jitter=0.3), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.UNKNOWN
    assert result.fraction_of_ceiling is None


def test_no_intervals_and_no_rate() -> None:
    facts = grnet_default()
    stats = interval_stats([], facts.mss_bytes)
    assert stats.steady_rate_bps is None and stats.window_limited_share is None
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.UNKNOWN and "no rate" in result.evidence[0]


def test_runs_without_tcp_info_still_get_a_rate() -> None:
    stats = interval_stats(per_second_rows([8e8] * 5), None)
    assert stats.steady_rate_bps == 8e8
    assert stats.retransmits is None and stats.retransmit_rate is None and stats.pmtu_bytes is None


def test_interval_stats_slow_start_and_collapses() -> None:
    rates = [1e8, 2e8, 4e8, 8e8, 1.6e9, 3e9]
    rows = [
        IntervalRow(
            stream=5,
            start_s=s,
            end_s=s + 1,
            omitted=False,
            sender=True,
            bytes=int(rate / 8),
            bits_per_s=rate,
            retransmits=0,
            snd_cwnd_bytes=[100, 200, 50, 400, 800, 100][s],
        )
        for s, rate in enumerate(rates)
    ]
    stats = interval_stats(rows, 1448)
    assert stats.not_converged
    assert stats.cwnd_collapses == 2
    omitted = [IntervalRow(stream=5, start_s=0, end_s=1, omitted=True, sender=True, bytes=1, bits_per_s=8.0)]
    assert interval_stats(omitted, 1448).steady_rate_bps is None


def test_observed_window_refines_the_fraction_only_when_the_flow_filled_it() -> None:
    window = int(0.62 * 6 * MIB)
    filled = grnet_default(max_snd_wnd_bytes=window, inflight_bytes=0.95 * window)
    assert run_buffers(filled).receive_fraction == pytest.approx(0.62)
    assert run_buffers(filled).receive_fraction_source == "observed max_snd_wnd"
    # A flow that kept far less in flight than the window was not bound by it (tuned hosts
    # behind a slower bottleneck): its window says nothing about the ratio.
    assert run_buffers(grnet_default(max_snd_wnd_bytes=window, inflight_bytes=0.5 * window)).receive_fraction == 0.5
    # Nor does a window that never grew near the buffer.
    assert run_buffers(grnet_default(max_snd_wnd_bytes=100_000, inflight_bytes=100_000)).receive_fraction == 0.5


def test_host_tuning_from_facts() -> None:
    facts = {
        "kernel": "5.10.0-28-amd64",
        "iperf3_version": "3.12",
        "interfaces": [
            {"name": "lo", "mtu": 65536, "speed_mbps": None, "addresses": ["127.0.0.1/8"]},
            {"name": "eth0", "mtu": 9000, "speed_mbps": 10000, "addresses": ["198.18.1.1/30"]},
        ],
        "sysctls": {
            "net.ipv4.tcp_rmem": "4096 131072 6291456",
            "net.ipv4.tcp_wmem": "4096\t16384\t4194304",
            "net.core.rmem_max": "212992",
            "net.ipv4.tcp_adv_win_scale": "1",
            "net.ipv4.tcp_congestion_control": "cubic",
        },
    }
    tuning = HostTuning.from_facts(facts, "198.18.1.1")
    assert tuning.tcp_rmem_max_bytes == 6291456 and tuning.tcp_wmem_max_bytes == 4194304
    assert tuning.rmem_max_bytes == 212992 and tuning.wmem_max_bytes is None
    assert tuning.mtu_bytes == 9000 and tuning.link_rate_bps == 10e9 and tuning.adv_win_scale == 1
    garbled = HostTuning.from_facts({"sysctls": {"net.ipv4.tcp_rmem": "lots", "net.core.rmem_max": "-1"}})
    assert garbled.tcp_rmem_max_bytes is None and garbled.rmem_max_bytes is None
    assert HostTuning.from_facts(None) == HostTuning()
    assert HostTuning.from_facts(["not", "a", "dict"]) == HostTuning()


def test_host_tuning_of_an_address_on_the_loopback_takes_the_one_other_interface() -> None:
    # The lab (and router-style hosts) put the agent's address on lo: lo's 65536-byte MTU is
    # no packet the path carries.
    facts = {
        "interfaces": [
            {"name": "lo", "mtu": 65536, "speed_mbps": None, "addresses": ["127.0.0.1/8", "198.18.0.1/32"]},
            {"name": "fl774fl0a", "mtu": 1500, "speed_mbps": 10000, "addresses": ["198.18.1.1/32"]},
        ],
    }
    assert HostTuning.from_facts(facts, "198.18.0.1").mtu_bytes == 1500
    two = {"interfaces": [*facts["interfaces"], {"name": "eth1", "mtu": 9000, "addresses": []}]}
    assert HostTuning.from_facts(two, "198.18.0.1").mtu_bytes is None  # which one carries it is unknown


def test_autotuning_never_reaches_below_the_default_buffer() -> None:
    # A socket starts at the default and only grows: a maximum under it is no cap.
    facts = {"sysctls": {"net.ipv4.tcp_rmem": "4096 131072 51200", "net.ipv4.tcp_wmem": "4096 16384 8192"}}
    tuning = HostTuning.from_facts(facts)
    assert (tuning.tcp_rmem_max_bytes, tuning.tcp_wmem_max_bytes) == (131072, 16384)


def test_capacity_plan_for_seed_001_volume() -> None:
    plan = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 1e9, 1)
    assert plan.required_bps == pytest.approx(1.32e9, rel=0.01)
    assert plan.hours_per_day == pytest.approx(31.8, rel=0.01)
    assert plan.backlog_grows and plan.streams_needed == 2
    fits = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 3.1e9, 1)
    assert not fits.backlog_grows and fits.hours_per_day == pytest.approx(10.3, rel=0.01)
    unknown = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, None, 1)
    assert unknown.backlog_grows is None and "no throughput" in unknown.reason
    assert "it takes 31.8 h a day: the backlog grows" in plan.reason


def test_a_starved_path_says_its_hours_a_day_in_days_too() -> None:
    starved = capacity_plan(DEFAULT_DAILY_VOLUME_BYTES, 0.25e6, 1)
    assert starved.hours_per_day == pytest.approx(127_055, abs=1)
    assert "it takes 127,055 h (5,294 days) a day: the backlog grows" in starved.reason


def test_a_window_larger_than_the_bdp_fills_a_queue_at_a_bottleneck() -> None:
    # The lab's tuned grnet pair: 16 MiB windows, the emulator carries ~3.5 Gbit/s, and the
    # flow's RTT grows from 7.9 ms to 21 ms while the window waits in the queue.
    facts = grnet_default(
        sender=host(16 * MIB, wmem_max=16 * MIB),
        receiver=host(16 * MIB, wmem_max=16 * MIB),
        run_min_rtt_ms=21.0,
        run_mean_rtt_ms=21.5,
        max_snd_wnd_bytes=9_100_000,
        inflight_bytes=3.47e9 * 0.0215 / 8,
    )
    ceilings = run_ceilings(facts)
    # 21 ms is far above both modes: the member is hidden, so the ideal ceiling uses 7.9 ms.
    assert ceilings.at_min_rtt.rtt_ms == 7.9 and "hides its ECMP member" in ceilings.at_min_rtt.rtt_source
    assert (ceilings.at_min_rtt.ceilings.receive_window.rate_bps or 0) > 8e9
    # Kept as well: at its own 21 ms the window gives far less, which the fast rule weighs.
    above = ceilings.flow_above_path
    assert above is not None and above.rtt_ms == 21.0
    at_min = ceilings.at_min_rtt.ceilings
    window_at_min = min(at_min.receive_window.rate_bps or math.inf, at_min.send_buffer.rate_bps or math.inf)
    assert above.window_ceiling_bps == pytest.approx(window_at_min * 7.9 / 21.0)
    assert ceilings.to_dict()["flow_above_path"] == {"rtt_ms": 21.0, "window_ceiling_bps": above.window_ceiling_bps}
    assert run_ceilings(grnet_default(run_min_rtt_ms=8.0)).flow_above_path is None
    # One known RTT (no ECMP seen): a flow 35% above the path's minimum, as on a 1-in-128 member.
    unseen = run_ceilings(grnet_default(mode_rtts_ms=(), run_min_rtt_ms=10.7, ecmp_seen=True)).flow_above_path
    assert unseen is not None and unseen.rtt_ms == 10.7
    # Where no sweep ever showed ECMP, it is a queue the flow built: judged as it always was.
    assert run_ceilings(grnet_default(mode_rtts_ms=(), run_min_rtt_ms=10.7)).flow_above_path is None
    stats = interval_stats(steady_rows(3.47e9, snd_wnd=9_100_000, snd_cwnd=12_000_000), facts.mss_bytes)
    result = diagnose(ceilings, stats, facts)
    assert result.label is Diagnosis.CAPACITY and "queue" in result.evidence[0]


@pytest.mark.parametrize(
    ("run_min_ms", "expected_ms"),
    [(8.6, 7.9), (12.6, 12.0), (7.0, 7.0), (30.0, 7.9)],
)
def test_the_flows_own_ecmp_member(run_min_ms: float, expected_ms: float) -> None:
    ceilings = run_ceilings(grnet_default(run_min_rtt_ms=run_min_ms))
    assert ceilings.at_min_rtt.rtt_ms == expected_ms


def slow_start_loss_rows(omitted_retransmits: int) -> list[IntervalRow]:
    """A Reno flow at 175 ms that lost in slow start (the omitted seconds) and not after: its
    congestion window climbs back a segment per RTT, 7.3 Mbit/s for the whole run, in the
    coarse steps a few segments a round trip make per second (3.65, 7.3, 10.95)."""
    omitted = [
        replace(row, omitted=True, retransmits=omitted_retransmits if index == 1 else 0)
        for index, row in enumerate(steady_rows(7.3e6, seconds=4, snd_wnd=1_500_000, snd_cwnd=160_000, pmtu=1500))
    ]
    measured = steady_rows(7.3e6, snd_wnd=1_500_000, snd_cwnd=160_000, pmtu=1500, jitter=0.5)
    return omitted + measured


def test_a_flow_that_lost_only_in_slow_start_and_crawls_back_is_policed() -> None:
    # The corpus's c076: a policer with a large burst at 175 ms. The losses all fell in the
    # four omitted seconds; the measured ones show a congestion window crawling back, no
    # retransmit, 1.6 % of the hosts' ceiling: "below every ceiling" named no cause.
    facts = seed_002_facts(
        congestion_control="reno", run_min_rtt_ms=175.0, loss_fraction=0.0, loss_source="ping: 0 of 805 lost"
    )
    stats = interval_stats(slow_start_loss_rows(133), facts.mss_bytes)
    assert (stats.retransmits, stats.omitted_retransmits) == (0, 133)
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.POLICER, result.evidence
    assert "no retransmit in the measured seconds after 133 in the omitted ones" in result.evidence[0]
    # Without that loss nothing shows the flow's own drops: still below every ceiling.
    quiet = interval_stats(slow_start_loss_rows(0), facts.mss_bytes)
    assert diagnose(run_ceilings(facts), quiet, facts).label is Diagnosis.BELOW_CEILINGS


def c074_facts(run_min_rtt_ms: float) -> RunFacts:
    """BBR through a 39.9 Mbit/s link with a 71 KB queue on a five-member ECMP path."""
    return grnet_default(
        sender=host(572_416, wmem_max=572_416),
        receiver=host(572_416, wmem_max=572_416),
        congestion_control="bbr",
        run_min_rtt_ms=run_min_rtt_ms,
        run_mean_rtt_ms=run_min_rtt_ms + 2.0,
        path_min_rtt_ms=5.7,
        mode_rtts_ms=(5.7, 8.6, 9.7),
        loss_fraction=0.0,
        loss_source="ping: 0 of 800 lost",
        inflight_bytes=None,
    )


def test_a_queue_far_beyond_every_ecmp_member_is_the_bottleneck_though_bbr_lost() -> None:
    # The corpus's c074: BBR overfilled the queue (2 % lost, none by the pings) and its RTT
    # stood at 19.4 ms, twice the largest of three modes 4 ms apart. An unseen member that
    # far beyond the known ones is no explanation; a full queue is: capacity, not "policer".
    facts = c074_facts(19.4)
    stats = interval_stats(steady_rows(39.7e6, retransmits=12, jitter=0.005), facts.mss_bytes)
    result = diagnose(run_ceilings(facts), stats, facts)
    assert result.label is Diagnosis.CAPACITY and "queue" in result.evidence[0], result.evidence
    # 2.3 ms above the largest mode, within the modes' own spread: it may be a member no sweep
    # has shown, behind a policer that drops without queueing.
    near_members = c074_facts(12.0)
    assert diagnose(run_ceilings(near_members), stats, near_members).label is Diagnosis.POLICER
