"""Checks of how fast TCP and UDP get through: steady TCP throughput against
min(rate, window/RTT), TCP and paced UDP through a policer, the policer's rate as Fathom's
UDP ramp reads it, and unpaced TCP into a shallow queue. The paced checks (UDP at 90 % of
the policer, the ramp, --fq-rate into a 32 KB queue) carry the emulator's pacing lateness
and are not judged when it, not the path, missed the schedule (attempts.record_attempts)."""

from __future__ import annotations

import math

from .attempts import first_passing, record_attempts
from .lab import Lab, iperf3, iperf3_end, ping, sender_stats, steady_rate_bps
from .report import Row, record

# What the emulator carries on this 2-core machine with iperf3 on both ends (see `make
# lab-bench`). A window ceiling above it cannot be reproduced, so it is shown, not asserted.
EMULATOR_CAPACITY_MBPS = 3000


def check_throughput(
    scenario: str,
    lab: Lab,
    source: str,
    destination: str,
    rate_mbps: float | None,
    *options: str,
    paced: bool = False,
) -> None:
    """Steady throughput (slow start omitted) against min(rate, window/RTT), where the window
    is the largest the receiver advertised (max_snd_wnd, per stream) and the RTT the path's
    minimum (ping), since TCP's own RTT includes the queue it builds."""
    path_rtt_ms, _, _ = ping(lab, source, destination, count=10)
    min_rtt_s = path_rtt_ms / 1000

    def measure() -> tuple[float, float, float, float]:
        """Measured rate, ceiling, window and the window's rate, from one iperf3 run."""
        result = iperf3(lab, source, destination, *options)
        streams = len(iperf3_end(result)["streams"])
        window = float(sender_stats(result).get("max_snd_wnd", 0)) * streams
        window_mbps = window * 8 / min_rtt_s / 1e6 if window and min_rtt_s else math.inf
        return steady_rate_bps(result) / 1e6, min(rate_mbps or math.inf, window_mbps), window, window_mbps

    def within(run: tuple[float, float, float, float]) -> bool:
        return run[1] > EMULATOR_CAPACITY_MBPS or abs(run[0] - run[1]) <= 0.10 * run[1]

    attempts = first_passing(measure, within, lab if paced else None)
    measured, ceiling, window, window_mbps = attempts.value
    limit = "rate" if rate_mbps is not None and rate_mbps <= window_mbps else "window"
    check = f"TCP throughput {source}->{destination}{' ' + ' '.join(options) if options else ''}"
    details = f"{limit}: wnd {window / 1024:.0f} KiB, min RTT {min_rtt_s * 1000:.2f} ms" + (
        f", rate {rate_mbps:g}" if rate_mbps else ""
    )
    if ceiling > EMULATOR_CAPACITY_MBPS:
        details += f"; above the emulator's {EMULATOR_CAPACITY_MBPS} Mbit/s, not asserted"
    configured = f"{ceiling:.1f} Mbit/s ({details})"
    if ceiling > EMULATOR_CAPACITY_MBPS:
        record(scenario, check, configured, f"{measured:.1f} Mbit/s", "within 10 %", True, asserted=False)
        return
    ok = within(attempts.value)
    record_attempts(Row(scenario, check, configured, f"{measured:.1f} Mbit/s", "within 10 %", ok), attempts)


def check_policer(scenario: str, lab: Lab, source: str, destination: str, policed_mbps: float) -> None:
    tcp = steady_rate_bps(iperf3(lab, source, destination, seconds=8, omit=2)) / 1e6
    record(
        scenario,
        f"TCP through the policer {source}->{destination}",
        f"policer {policed_mbps:g} Mbit/s",
        f"{tcp:.1f} Mbit/s",
        "below half the policed rate",
        tcp < policed_mbps / 2,
    )
    target = 0.9 * policed_mbps

    def paced_loss_percent() -> float:
        udp = iperf3(
            lab, source, destination, "-u", "-b", f"{target}M", "-l", "1400", "--pacing-timer", "100", seconds=6, omit=0
        )
        return float(iperf3_end(udp)["sum"]["lost_percent"])

    attempts = first_passing(paced_loss_percent, lambda lost: lost < 1, lab)
    record_attempts(
        Row(
            scenario,
            f"UDP paced at 90 % of the policer {source}->{destination}",
            f"{target:g} Mbit/s, head-end loss 0.05 %",
            f"{attempts.value:.3f} % lost",
            "nearly lossless (< 1 %)",
            attempts.value < 1,
        ),
        attempts,
    )


# The steps of Fathom's policer ramp here (meshes/ramps.py, the agent's ramp.go): 2 s each,
# released every 100 us, nothing omitted, from below the policer's rate to well above it.
RAMP_STEP_FACTORS = (0.4, 1.5, 2.4)


def ramp_estimate_mbps(lab: Lab, source: str, destination: str, policed_mbps: float) -> float:
    """What Fathom's ramp reads (analysis/policer.py from_ramp): the most that a step losing
    at least 2% got through, a step's delivery being its sender's rate less the share lost;
    0 when no step was policed."""
    delivered = []
    for factor in RAMP_STEP_FACTORS:
        step = iperf3(
            lab, source, destination, "-u", "-b", f"{factor * policed_mbps:g}M", "-l", "1400",
            "--pacing-timer", "100", seconds=2, omit=0,
        )  # fmt: skip
        summary = iperf3_end(step)["sum"]
        lost = float(summary["lost_percent"])
        if lost >= 2:
            delivered.append(float(summary["bits_per_second"]) * (1 - lost / 100) / 1e6)
    return max(delivered, default=0.0)


def check_policer_ramp(scenario: str, lab: Lab, source: str, destination: str, policed_mbps: float) -> None:
    attempts = first_passing(
        lambda: ramp_estimate_mbps(lab, source, destination, policed_mbps),
        lambda estimate: abs(estimate / policed_mbps - 1) <= 0.1,
        lab,
    )
    steps = ", ".join(f"{factor * policed_mbps:g}" for factor in RAMP_STEP_FACTORS)
    record_attempts(
        Row(
            scenario,
            f"UDP ramp through the policer {source}->{destination}",
            f"policer {policed_mbps:g} Mbit/s; steps {steps} Mbit/s",
            f"{attempts.value:.1f} Mbit/s",
            "within 10 %",
            abs(attempts.value / policed_mbps - 1) <= 0.1,
        ),
        attempts,
    )


def check_unpaced_into_shallow_queue(
    scenario: str, lab: Lab, source: str, destination: str, bottleneck_mbps: float
) -> None:
    """Unpaced TCP from a fast link into a slow one with a 32 KB queue loses its bursts there
    and stays well under the bottleneck."""
    unpaced = steady_rate_bps(iperf3(lab, source, destination)) / 1e6
    record(
        scenario,
        f"unpaced TCP {source}->{destination} into the shallow queue",
        f"bottleneck {bottleneck_mbps:g} Mbit/s, queue 32 KB",
        f"{unpaced:.1f} Mbit/s",
        "below 80 % of the bottleneck",
        unpaced < 0.8 * bottleneck_mbps,
    )
