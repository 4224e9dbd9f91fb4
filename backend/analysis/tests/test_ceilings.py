"""The test vectors of tcp-ceilings.md, mostly from the seeds, plus the unknown cases."""

from __future__ import annotations

import pytest

from analysis.ceilings import (
    Limit,
    PathCeilings,
    Term,
    buffer_for_rate_bytes,
    link_ceiling,
    loss_ceiling,
    parse_kernel_version,
    receive_window_fraction,
    slow_start_rounds,
    socket_buffer_bytes,
    window_ceiling,
)

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("buffer_bytes", "rtt_s", "expected_bps"),
    [
        (6 * MIB, 0.008, 3145.73e6),  # seed 000: "3145.73 Mbit/sec"
        (6 * MIB, 0.012, 2097.15e6),  # seed 000: the 11.9 ms ECMP member, "2097.15"
        (16 * MIB, 0.008, 8388.61e6),  # seed 000 tuned: "8388.61"
        (256 * MIB, 0.148, 7254.90e6),  # seed 000 figure 5: 128 MiB window at 148 ms
        (6 * MIB, 0.148, 0.17e9),  # the default buffer across the Atlantic
    ],
)
def test_receive_window_ceiling_matches_seed_000(buffer_bytes: int, rtt_s: float, expected_bps: float) -> None:
    fraction, _ = receive_window_fraction("5.10.0-28-amd64", adv_win_scale=1)
    term = window_ceiling(1, fraction, buffer_bytes, rtt_s, "receive")
    assert term.rate_bps == pytest.approx(expected_bps, rel=0.01)


def test_seed_004_one_stream_and_streams_for_100_mbit() -> None:
    # 131 KB max window (fraction already applied), 65 ms: about 16 Mbit/s per stream.
    one = window_ceiling(1, 1.0, 131_072, 0.065, "receive")
    assert one.rate_bps == pytest.approx(16.1e6, rel=0.02)
    # Linux doubles a requested 64 KB window; with the 131071 rmem_max cap it stays ~128 KB of
    # buffer, i.e. ~64 KB of window at f = 0.5: about 12 streams for 100 Mbit/s.
    buffer_bytes = socket_buffer_bytes(65_536, autotune_max_bytes=None, core_max_bytes=131_071)
    assert buffer_bytes == 131_072
    per_stream = window_ceiling(1, 0.5, buffer_bytes, 0.065, "receive").rate_bps
    assert per_stream is not None
    assert round(100e6 / per_stream) == 12


def test_mathis_vector() -> None:
    term = loss_ceiling(1, 1448, 0.050, 1e-5, "reno")
    assert term.rate_bps == pytest.approx(89.7e6, rel=0.01)


def test_cubic_beats_mathis_at_large_bdp() -> None:
    reno = loss_ceiling(1, 1448, 0.050, 3.5e-8, "reno").rate_bps
    cubic = loss_ceiling(1, 1448, 0.050, 3.5e-8, "cubic").rate_bps
    assert reno is not None and cubic is not None
    # tcp-ceilings.md: 10 Gbit/s at 50 ms needs p <= 8e-10 with Reno but only 3.5e-8 with CUBIC.
    assert cubic == pytest.approx(10e9, rel=0.1)
    assert reno < cubic
    assert loss_ceiling(1, 1448, 0.050, 8e-10, "reno").rate_bps == pytest.approx(10e9, rel=0.1)


def test_bbr_and_zero_loss_have_no_loss_ceiling() -> None:
    assert not loss_ceiling(1, 1448, 0.05, 0.01, "bbr").known
    zero = loss_ceiling(1, 1448, 0.05, 0.0, "cubic")
    assert not zero.known and "no finite bound" in zero.reason
    assert not loss_ceiling(1, 1448, 0.05, None, "cubic").known


def test_link_ceiling_on_10gbe() -> None:
    assert link_ceiling(10e9, 1448, 1500).rate_bps == pytest.approx(9.41e9, rel=0.002)
    assert link_ceiling(10e9, 8948, 9000).rate_bps == pytest.approx(9.90e9, rel=0.002)
    assert not link_ceiling(None, 1448, 1500).known


@pytest.mark.parametrize(
    ("kernel", "scale", "expected"),
    [
        ("5.10.0", 1, 0.5),
        ("5.10.0", 2, 0.75),
        ("4.19.0", -2, 0.25),
        ("6.6.0", 1, 0.5),  # obsolete from 6.6: planning value
        ("6.18.2-generic", None, 0.5),
        ("5.4.0", None, None),
        (None, None, None),
    ],
)
def test_receive_window_fraction(kernel: str | None, scale: int | None, expected: float | None) -> None:
    fraction, reason = receive_window_fraction(kernel, scale)
    assert fraction == expected
    assert reason


def test_observed_fraction_wins() -> None:
    assert receive_window_fraction("6.1.0", 1, observed_fraction=0.62) == (0.62, "observed max_snd_wnd")


def test_unknown_inputs_are_reasons_not_numbers() -> None:
    assert window_ceiling(1, 0.5, None, 0.01, "receive").reason == "receive buffer size unknown"
    assert window_ceiling(1, 0.5, MIB, 0.0, "receive").reason == "RTT unknown or zero"
    assert window_ceiling(1, None, MIB, 0.01, "send").reason == "send window fraction unknown"
    assert not window_ceiling(0, 0.5, MIB, 0.01, "receive").known
    assert parse_kernel_version("garbage") is None


def test_limit_is_the_smallest_known_term() -> None:
    ceilings = PathCeilings(
        link=Term(9.41e9),
        receive_window=Term(3.15e9),
        send_buffer=Term.unknown("sender facts missing"),
        loss=Term.unknown("no loss measured"),
    )
    assert ceilings.limit is Limit.RECEIVE_WINDOW
    assert ceilings.ceiling_bps == 3.15e9
    nothing = PathCeilings(*(Term.unknown("x") for _ in range(4)))
    assert nothing.limit is Limit.UNKNOWN and nothing.ceiling_bps is None


def test_slow_start_at_148_ms() -> None:
    # tcp-ceilings.md: 10 Gbit/s at 148 ms from IW10 takes n = 14 RTTs (2.1 s) at MSS 1448;
    # a 9000-byte MTU shortens it.
    assert slow_start_rounds(10e9 * 0.148 / 8, 1448) == 14
    assert pytest.approx(2.1, abs=0.03) == 14 * 0.148
    assert slow_start_rounds(10e9 * 0.148 / 8, 8948) == 12


def test_buffer_advice_for_seed_000() -> None:
    # 10 Gbit/s over 8 ms at f = 0.5 needs a 20 MB buffer; 2 x BDP is the usual advice.
    assert buffer_for_rate_bytes(10e9, 0.008, 0.5) == 20_000_000
    with pytest.raises(ValueError, match="positive"):
        buffer_for_rate_bytes(0, 0.008, 0.5)
