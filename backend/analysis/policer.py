"""An estimate of a policer's rate from what a path's runs already show.

Pure. A token bucket passes its rate and drops the rest, so:

- a paced UDP ramp (analysis/services/ramps.py puts one in the path's next exclusive slot)
  measures it directly: the steps offered above the rate deliver about the rate and lose the
  excess, the steps below deliver what they offer; it wins whenever there is one;
- a paced UDP run offered above the rate delivers about the rate, losing the excess: the
  median delivered rate of such runs estimates it; runs that lost nothing only say the rate
  is at least what they delivered;
- TCP through a policer saws below its rate (far below with a small burst, seed 002), so the
  steady TCP rate is only a lower bound.

Each estimate says which of these it rests on, so the advice can label it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from analysis.run_judgement import number
from core.units import rate_text

# A UDP run losing this share of what it offered hit a limit on the way: its delivered rate
# is the limit's. Below it, loss is the path's own and the run only bounds the rate below.
POLICED_UDP_LOSS = 0.02
# A ramp's policed steps deliver the policer's rate give or take this: one below the best
# delivery by more lost to something else (a burst, cross traffic) on the way up.
PLATEAU_TOLERANCE = 0.05
# A step offered at most this share of the ramp's policed rate that still lost DISTURBED_LOSS
# of it was not losing to the policer but to something else (cross traffic, a starved
# sender or receiver), which the faster steps suffered too: their rate is only a lower bound.
# A small burst costs slower steps a few percent (3.6% at 38 of 90 Mbit/s in the lab), a
# congested path or a starved host far more (13% of 7 Mbit/s in a loaded CI run).
DISTURBED_SHARE = 0.5
DISTURBED_LOSS = 0.10


class EstimateBasis(StrEnum):
    """What a policer-rate estimate rests on, most direct first."""

    UDP_RAMP = "udp_ramp"
    PACED_UDP = "paced_udp"
    TCP_LOWER_BOUND = "tcp_lower_bound"


@dataclass(frozen=True)
class UdpRun:
    """One paced UDP run of the path in the direction of the data: offered, delivered, lost."""

    offered_bps: float
    delivered_bps: float
    lost_fraction: float


@dataclass(frozen=True)
class RampStep:
    """One step of a paced UDP ramp: the rate offered, what arrived, the share lost."""

    offered_bps: float
    delivered_bps: float
    lost_fraction: float


@dataclass(frozen=True)
class PolicerEstimate:
    rate_bps: float
    basis: EstimateBasis
    detail: str  # the numbers it rests on, one sentence
    # A ramp that lost nothing only says the policer passes at least its fastest step.
    at_least: bool = False
    # A ramp whose slow steps lost too: at least its best, and no reason to climb higher.
    disturbed: bool = False

    @property
    def lower_bound(self) -> bool:
        return self.at_least or self.basis is EstimateBasis.TCP_LOWER_BOUND


def ramp_steps(summary: Any) -> list[RampStep]:
    """The steps an agent reported (contract: throughput.ramp); a step without usable numbers
    is left out rather than read as zero."""
    steps = _as_dict(summary).get("ramp")
    found: list[RampStep] = []
    for step in steps if isinstance(steps, list) else []:
        fields = _as_dict(step)
        offered, lost = number(fields, "offered_bps"), number(fields, "lost_percent")
        delivered = _delivered(fields, lost)
        if offered is None or delivered is None or lost is None:
            continue
        if math.isfinite(offered + delivered + lost) and offered > 0 and delivered >= 0 and 0 <= lost <= 100:
            found.append(RampStep(offered, delivered, lost / 100))
    return found


def _delivered(fields: dict[str, Any], lost_percent: float | None) -> float | None:
    """What got through: the sender's rate less the share lost. iperf3's receiver rate is
    over the receiver's time, which includes the path's delay (13 % low for a 2 s step on a
    310 ms path); the receiver's own rate only stands in when the sender's is missing."""
    sent = number(fields, "sender_bits_per_s")
    if sent is not None and lost_percent is not None and 0 <= lost_percent <= 100:
        return sent * (1 - lost_percent / 100)
    return number(fields, "receiver_bits_per_s")


def _as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def from_udp_runs(runs: Sequence[UdpRun]) -> PolicerEstimate | None:
    """The median delivered rate of the UDP runs that lost what they offered beyond a limit."""
    policed = [run for run in runs if run.lost_fraction >= POLICED_UDP_LOSS and run.delivered_bps > 0]
    if not policed:
        return None
    rate = statistics.median(run.delivered_bps for run in policed)
    offered = statistics.median(run.offered_bps for run in policed)
    lost = statistics.median(run.lost_fraction for run in policed)
    detail = (
        f"{len(policed)} paced UDP run{'s' if len(policed) > 1 else ''} offering {rate_text(offered)} delivered "
        f"a median {rate_text(rate)} and lost {lost:.1%}: the excess over the policer's rate"
    )
    return PolicerEstimate(rate, EstimateBasis.PACED_UDP, detail)


def from_ramp(steps: Sequence[RampStep], when: str) -> PolicerEstimate | None:
    """The most a step that lost its excess delivered. A token bucket passes at most its
    rate and steps below it deliver what they offer, so the policed steps' plateau is the
    rate; a step that lost to a burst below the rate delivered less and does not pull it
    down. A ramp with no policed step near its best delivery only bounds the rate below, at
    that delivery; so does one whose slow steps lost heavily too (DISTURBED_LOSS). `when`
    dates the ramp in words."""
    measured = [step for step in steps if step.offered_bps > 0 and step.delivered_bps >= 0]
    if not measured:
        return None
    span = (
        f"a paced UDP ramp ({when}) offering {rate_text(measured[0].offered_bps)} to "
        f"{rate_text(measured[-1].offered_bps)} in {len(measured)} steps"
    )
    top = max(step.delivered_bps for step in measured)
    policed = [step for step in measured if step.lost_fraction >= POLICED_UDP_LOSS and step.delivered_bps > 0]
    best = max(policed, key=lambda step: step.delivered_bps, default=None)
    if best is None or best.delivered_bps < (1 - PLATEAU_TOLERANCE) * top:
        detail = f"{span} lost nothing at its fastest: the policer passes at least {rate_text(top)}"
        return PolicerEstimate(top, EstimateBasis.UDP_RAMP, detail, at_least=True)
    detail = (
        f"{span}: at most {rate_text(best.delivered_bps)} got through (the {rate_text(best.offered_bps)} step, "
        f"{best.lost_fraction:.0%} lost)"
    )
    disturbed = next(
        (
            step
            for step in measured
            if step.offered_bps <= DISTURBED_SHARE * best.delivered_bps and step.lost_fraction >= DISTURBED_LOSS
        ),
        None,
    )
    if disturbed is not None:
        detail += (
            f", but the {rate_text(disturbed.offered_bps)} step lost {disturbed.lost_fraction:.0%} too: something "
            "besides the policer (cross traffic, a busy host) was losing packets, so the policer passes at least that"
        )
        return PolicerEstimate(best.delivered_bps, EstimateBasis.UDP_RAMP, detail, at_least=True, disturbed=True)
    return PolicerEstimate(best.delivered_bps, EstimateBasis.UDP_RAMP, detail)


def ramp_rates(estimate_bps: float, cap_bps: float | None, steps: int, reach_bps: float | None = None) -> list[int]:
    """Offered rates for a ramp: geometric from 0.75x the estimate up to 6x it, or up to
    `reach_bps` (the path's TCP ceiling) when that is higher: TCP through a policer with a
    small burst can saw at a fraction of a percent of its rate, and the policer is below
    what TCP could have reached. Kept under the link (`cap_bps`); rising, whole kbit/s.
    Empty when no sensible ramp exists (no estimate, fewer than 2 steps)."""
    if not (estimate_bps > 0 and math.isfinite(estimate_bps)) or steps < 2:
        return []
    low, high = 0.75 * estimate_bps, 6 * estimate_bps
    if reach_bps is not None and math.isfinite(reach_bps):
        high = max(high, reach_bps)
    if cap_bps is not None and math.isfinite(cap_bps) and cap_bps > 0:
        high = min(high, cap_bps)
    if high <= low:
        return []
    ratio = (high / low) ** (1 / (steps - 1))
    rates = sorted({round(low * ratio**index / 1000) * 1000 for index in range(steps)})
    return [rate for rate in rates if rate > 0]


def from_tcp(rate_bps: float, runs: int, udp_runs: Sequence[UdpRun] = ()) -> PolicerEstimate:
    """A lower bound: TCP's steady rate, or more where a UDP run delivered more without loss."""
    clean = [run.delivered_bps for run in udp_runs if run.lost_fraction < POLICED_UDP_LOSS]
    if clean and max(clean) > rate_bps:
        return PolicerEstimate(
            max(clean),
            EstimateBasis.TCP_LOWER_BOUND,
            f"a paced UDP run delivered {rate_text(max(clean))} without losing: the policer passes at least that",
        )
    detail = (
        f"the steady TCP rate of {runs} run{'s' if runs > 1 else ''} ({rate_text(rate_bps)}); TCP saws below a "
        "policer's rate (far below with a small burst), so the rate is at least this"
    )
    return PolicerEstimate(rate_bps, EstimateBasis.TCP_LOWER_BOUND, detail)


def policer_estimate(
    tcp_rate_bps: float | None,
    tcp_runs: int,
    udp_runs: Sequence[UdpRun] = (),
    ramp: PolicerEstimate | None = None,
) -> PolicerEstimate | None:
    """The most direct estimate there is: a measured ramp, then paced UDP runs, then TCP."""
    if ramp is not None:
        return ramp
    from_udp = from_udp_runs(udp_runs)
    if from_udp is not None:
        return from_udp
    if tcp_rate_bps is None or tcp_rate_bps <= 0:
        return None
    return from_tcp(tcp_rate_bps, max(tcp_runs, 1), udp_runs)
