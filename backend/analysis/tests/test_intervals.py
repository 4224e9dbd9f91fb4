"""Robust interval statistics: one noisy second must not change a run's label, while a run
that ramps or saws must still not pass as flat (pure, no DB)."""

from __future__ import annotations

import statistics

import pytest

from analysis.choices import Diagnosis
from analysis.diagnosis import FLAT_RATE_CV, diagnose
from analysis.intervals import IntervalRow, interval_stats, per_second_rows, still_rising, trimmed_cv
from analysis.runs import run_ceilings
from analysis.tests.test_diagnosis import MIB, grnet_default, host

# A steady 500 Mbit/s bottleneck: per-second rates within 1%, as the lab's emulator gives.
FLAT = [500e6 * (1 + 0.01 * ((second * 7) % 5 - 2) / 2) for second in range(11)]


def rows(rates: list[float]) -> list[IntervalRow]:
    return per_second_rows(rates, retransmits=0, rtt_us=8000, pmtu=9000)


def with_noisy_second(at: int, rate_bps: float) -> list[float]:
    rates = list(FLAT)
    rates[at] = rate_bps
    return rates


def label(rates: list[float]) -> Diagnosis:
    # Tuned hosts: every ceiling term far above 500 Mbit/s, RTT under load near the unloaded one.
    facts = grnet_default(
        sender=host(16 * MIB, wmem_max=16 * MIB), receiver=host(16 * MIB, wmem_max=16 * MIB), inflight_bytes=None
    )
    return diagnose(run_ceilings(facts), interval_stats(rows(rates), facts.mss_bytes), facts).label


def test_one_noisy_second_broke_the_old_flatness_test() -> None:
    rates = with_noisy_second(1, 240e6)
    classic = statistics.pstdev(rates) / statistics.fmean(rates)
    assert classic > 0.15  # the 15.6%: "below every ceiling", "not converged"
    assert statistics.fmean(rates[-3:]) > 1.1 * statistics.fmean(rates[:3])
    stats = interval_stats(rows(rates), 8948)
    assert stats.rate_cv is not None and stats.rate_cv < 0.01
    assert not stats.not_converged
    assert stats.steady_rate_bps == pytest.approx(500e6, rel=0.01)


def test_seconds_quantized_by_the_senders_writes_average_to_the_flows_rate() -> None:
    """Corpus c024: a window-held flow whose seconds iperf3 counted as 40 or 50 of its
    128 KiB writes (41.9 or 52.4 Mbit/s). The median picked a level, 11 % off the flow's rate;
    the trimmed mean averages the levels and still drops the stalled second."""
    step = 128 * 1024 * 8
    seconds = [50, 50, 40, 50, 40, 50, 50, 40, 30, 50]
    stats = interval_stats(rows([count * step for count in seconds]), 1448)
    assert statistics.median(count * step for count in seconds) == 50 * step
    assert stats.steady_rate_bps == pytest.approx(sum(seconds[:8] + seconds[9:]) / 9 * step)
    assert stats.steady_rate_bps == pytest.approx(48.9e6, rel=0.001)  # the median: 52.4 Mbit/s


@pytest.mark.parametrize("at", range(11))
@pytest.mark.parametrize("noisy_bps", [260e6, 420e6, 650e6])
def test_identical_runs_get_the_same_label_wherever_the_noisy_second_falls(at: int, noisy_bps: float) -> None:
    assert label(with_noisy_second(at, noisy_bps)) is Diagnosis.CAPACITY


def test_a_flat_run_is_capacity_limited() -> None:
    assert label(FLAT) is Diagnosis.CAPACITY


@pytest.mark.parametrize(
    ("name", "rates"),
    [
        ("ramp", [100e6 * (second + 1) for second in range(10)]),
        ("sawtooth", [300e6, 350e6, 400e6, 450e6, 500e6] * 2),
        ("fast sawtooth", [250e6, 500e6] * 5),
        ("flat in 6 seconds of 10, low in 4", [500e6] * 6 + [250e6] * 4),
        ("two noisy seconds of 10", [500e6] * 8 + [200e6, 800e6]),
    ],
)
def test_a_ramping_or_sawtoothing_run_is_not_flat(name: str, rates: list[float]) -> None:
    stats = interval_stats(rows(rates), 8948)
    assert stats.rate_cv is not None and stats.rate_cv >= FLAT_RATE_CV, name
    assert label(rates) is not Diagnosis.CAPACITY, name


def test_trimming_leaves_short_runs_whole() -> None:
    assert trimmed_cv([]) is None and trimmed_cv([5e8]) is None
    four = [500e6, 500e6, 500e6, 100e6]
    assert trimmed_cv(four) == pytest.approx(statistics.pstdev(four) / statistics.fmean(four))
    # From five seconds on, the one farthest from the median is left out; a tenth from 20 on.
    assert trimmed_cv([500e6] * 4 + [100e6]) == 0.0
    assert trimmed_cv([500e6] * 18 + [100e6, 900e6]) == 0.0
    assert trimmed_cv([0.0, 0.0, 0.0]) is None


def test_slow_start_is_judged_on_the_thirds_medians() -> None:
    assert still_rising([1e8, 2e8, 4e8, 8e8, 1.6e9, 3e9])
    assert not still_rising([2.6e8, 5e8, 5e8, 5e8, 5e8, 5e8, 5e8, 5e8, 5e8])
    assert still_rising([2e8, 2e8, 5e8, 5e8, 5e8, 5e8, 5e8, 5e8, 5e8])
    assert not still_rising([5e8, 5e8]) and not still_rising([0.0, 0.0, 1e8])


def test_a_reverse_run_with_both_ends_counts_the_rate_once_and_keeps_the_senders_tcp_info() -> None:
    # iperf3 -R --get-server-output: the client's receiver rows and the server's sender rows.
    received = per_second_rows([400e6] * 8, stream=5)
    received = [IntervalRow(**{**row.__dict__, "sender": False}) for row in received]
    sent = per_second_rows([410e6] * 8, stream=5, retransmits=3, snd_cwnd_bytes=900_000, snd_wnd_bytes=800_000,
                           rtt_us=9100, pmtu=9000)  # fmt: skip
    stats = interval_stats([*received, *sent], 8948)
    assert stats.steady_rate_bps == 400e6  # what arrived, not 810 Mbit/s
    assert stats.retransmits == 24 and stats.window_limited_share == 1.0 and stats.pmtu_bytes == 9000
