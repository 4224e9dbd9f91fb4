"""The corpus generator's pure parts: the matrix draws every class, its truth follows from the
configuration alone, every drawn scenario is one fathom-lab accepts, and the ping reader
counts a request lost only when no answer ever came."""

from __future__ import annotations

import itertools
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from .corpus_matrix import (
    LIMITS,
    MARGIN,
    MIN_BINDING_SEND_BUFFER,
    MIN_LOSS_EVENTS,
    buffers,
    describe,
    from_description,
    loss_events_per_run,
    matrix,
    rtt_members,
    scenario,
    truth,
)
from .lab import LAB_BIN
from .lab_corpus import ping_samples, ramp_rates


def test_the_matrix_draws_every_class_and_is_reproducible() -> None:
    draws = matrix(31, 64)
    assert [d.name for d in draws] == [d.name for d in matrix(31, 64)]
    assert [d.name for d in matrix(31, 4, first=60)] == [d.name for d in draws[60:]]
    assert Counter(d.limit for d in draws) == dict.fromkeys(LIMITS, 8)
    assert {d.congestion_control for d in draws} == {"cubic", "bbr", "reno"}
    assert {d.mtu for d in draws} == {1500, 9000}
    assert {d.ecmp for d in draws} == {"none", "forward", "reverse", "both"}
    assert any(d.cpu_contention for d in draws) and any(d.reverse_test for d in draws)
    assert min(d.rtt_ms for d in draws) < 5 and max(d.rtt_ms for d in draws) > 150


def test_the_truth_is_the_configured_limit_with_every_other_well_above() -> None:
    for draw in matrix(31, 64):
        told = truth(draw)
        terms = told["terms_mbps"]
        binding = min(terms, key=terms.get)
        assert terms[binding] == told["rate_mbps"]
        others = [value for key, value in terms.items() if key != binding]
        assert all(value >= MARGIN * 0.9 * told["rate_mbps"] for value in others), (draw.name, terms)
        if draw.limit in ("random_loss", "bursty_loss") and draw.congestion_control == "bbr":
            assert told["label"] == "receive_window"  # BBR does not back off on loss below ~2%


def test_members_combine_both_directions_with_their_shares() -> None:
    draw = next(d for d in matrix(31, 64) if d.ecmp == "both")
    members = rtt_members(draw)
    assert len(members) <= len(draw.forward_members) * len(draw.reverse_members)
    assert sum(m["share"] for m in members) == pytest.approx(1.0, abs=0.01)
    assert members[0]["rtt_ms"] == pytest.approx(draw.rtt_ms)


@pytest.mark.skipif(not LAB_BIN.exists(), reason="make agents builds fathom-lab")
def test_every_drawn_scenario_is_one_the_lab_accepts() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for draw in matrix(31, 64):
            path = Path(folder) / f"{draw.name}.yaml"
            path.write_text(yaml.safe_dump(scenario(draw)))
            check = subprocess.run([str(LAB_BIN), "check", str(path)], capture_output=True, text=True)
            assert check.returncode == 0, (draw.name, check.stderr)


def test_a_request_answered_after_the_next_one_left_is_not_lost() -> None:
    out = """PING 198.18.0.2 (198.18.0.2) from 198.18.0.1 : 56(84) bytes of data.
[1000.000] no answer yet for icmp_seq=1
[1000.005] no answer yet for icmp_seq=2
[1000.011] 64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=11.0 ms
[1000.016] 64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=11.1 ms
[1000.020] no answer yet for icmp_seq=3
[1000.041] 64 bytes from 198.18.0.2: icmp_seq=4 ttl=64 time=11.2 ms
[1000.042] 64 bytes from 198.18.0.2: icmp_seq=4 ttl=64 time=11.3 ms (DUP!)
garbage line
[not a time] 64 bytes from 198.18.0.2: icmp_seq=5 ttl=64 time=1 ms
"""
    assert ping_samples(out) == [[1000.011, 11.0], [1000.016, 11.1], [1000.02, None], [1000.041, 11.2]]
    assert ping_samples("") == []


def test_a_recorded_draw_gives_back_the_same_draw_and_truth() -> None:
    for draw in matrix(31, 16):
        assert from_description(describe(draw)) == draw


def test_a_send_buffer_the_kernel_does_not_hold_to_is_no_single_truth() -> None:
    draws = [d for d in matrix(31, 100) if d.limit == "send_buffer"]
    small = [d for d in draws if buffers(d)[1] < MIN_BINDING_SEND_BUFFER]
    assert {d.name for d in small} == {
        "c033-send-buffer-cubic-1500", "c057-send-buffer-reno-1500", "c065-send-buffer-bbr-1500",
        "c081-send-buffer-cubic-1500",
    }  # fmt: skip
    assert all(truth(d)["label"] == "ambiguous" and "tcp_wmem" in truth(d)["unclear"] for d in small)
    assert all(truth(d)["label"] == "send_buffer" and "unclear" not in truth(d) for d in draws if d not in small)


def test_a_loss_limit_a_run_meets_only_a_few_times_is_no_single_truth() -> None:
    draws = [d for d in matrix(31, 64) if d.limit in ("random_loss", "bursty_loss") and d.congestion_control != "bbr"]
    few = [d for d in draws if loss_events_per_run(d) < MIN_LOSS_EVENTS]
    assert few and all(truth(d)["label"] == "ambiguous" for d in few)
    assert all(truth(d)["label"] == "loss" for d in draws if d not in few)


def _recorded(rates_mbps: list[float], *, link_mbps: float | None, mtu: int, windows_mbps: float) -> dict[str, object]:
    runs = [{"status": "ok", "throughput": {"summary": {"receiver_bits_per_s": rate * 1e6}}} for rate in rates_mbps]
    return {
        "runs": [*runs, {"status": "failed", "throughput": {}}],
        "truth": {"terms_mbps": {"receive_window": windows_mbps, "send_buffer": 2 * windows_mbps}},
        "scenario": {"links": [{"a_to_b": {"rate_mbps": link_mbps} if link_mbps else {}}]},
        "draw": {"mtu": mtu},
    }


def test_a_ramp_is_planned_from_what_the_recorded_runs_told_the_server() -> None:
    # TCP's median 30 Mbit/s under a policer, windows far above: 0.75x to 6x it, geometric.
    rates = ramp_rates(_recorded([28, 30, 35], link_mbps=None, mtu=9000, windows_mbps=100))
    assert rates[0] == 22_500_000 and rates[-1] == 180_000_000 and len(rates) == 5
    assert all(b / a == pytest.approx(rates[1] / rates[0], rel=1e-3) for a, b in itertools.pairwise(rates))
    # A TCP ceiling above 6x reaches further; the lab's "NIC" (twice the link, and at most twice
    # what the emulator carries at the MTU) stops it.
    assert ramp_rates(_recorded([30], link_mbps=None, mtu=1500, windows_mbps=900))[-1] == 240_000_000
    assert ramp_rates(_recorded([30], link_mbps=50, mtu=9000, windows_mbps=900))[-1] == 100_000_000
    # No run that measured, or a link below the estimate: no ramp.
    assert ramp_rates(_recorded([], link_mbps=None, mtu=9000, windows_mbps=100)) == []
    assert ramp_rates(_recorded([100], link_mbps=30, mtu=9000, windows_mbps=900)) == []
