"""An estimate of a policer's rate from what a path's runs already show.

Pure. A token bucket passes its rate and drops the rest, so:

- a paced UDP ramp (not scheduled yet: it needs the planner and the agent) would measure it
  directly, and is preferred whenever one is handed in;
- a paced UDP run offered above the rate delivers about the rate, losing the excess: the
  median delivered rate of such runs estimates it; runs that lost nothing only say the rate
  is at least what they delivered;
- TCP through a policer saws below its rate (far below with a small burst, seed 002), so the
  steady TCP rate is only a lower bound.

Each estimate says which of these it rests on, so the advice can label it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

# A UDP run losing this share of what it offered hit a limit on the way: its delivered rate
# is the limit's. Below it, loss is the path's own and the run only bounds the rate below.
POLICED_UDP_LOSS = 0.02


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
class PolicerEstimate:
    rate_bps: float
    basis: EstimateBasis
    detail: str  # the numbers it rests on, one sentence

    @property
    def lower_bound(self) -> bool:
        return self.basis is EstimateBasis.TCP_LOWER_BOUND


def _mbit(rate_bps: float) -> str:
    return f"{rate_bps / 1e9:.2f} Gbit/s" if rate_bps >= 1e9 else f"{rate_bps / 1e6:.1f} Mbit/s"


def from_udp_runs(runs: Sequence[UdpRun]) -> PolicerEstimate | None:
    """The median delivered rate of the UDP runs that lost what they offered beyond a limit."""
    policed = [run for run in runs if run.lost_fraction >= POLICED_UDP_LOSS and run.delivered_bps > 0]
    if not policed:
        return None
    rate = statistics.median(run.delivered_bps for run in policed)
    offered = statistics.median(run.offered_bps for run in policed)
    lost = statistics.median(run.lost_fraction for run in policed)
    detail = (
        f"{len(policed)} paced UDP run{'s' if len(policed) > 1 else ''} offering {_mbit(offered)} delivered "
        f"a median {_mbit(rate)} and lost {lost:.1%}: the excess over the policer's rate"
    )
    return PolicerEstimate(rate, EstimateBasis.PACED_UDP, detail)


def from_tcp(rate_bps: float, runs: int, udp_runs: Sequence[UdpRun] = ()) -> PolicerEstimate:
    """A lower bound: TCP's steady rate, or more where a UDP run delivered more without loss."""
    clean = [run.delivered_bps for run in udp_runs if run.lost_fraction < POLICED_UDP_LOSS]
    if clean and max(clean) > rate_bps:
        return PolicerEstimate(
            max(clean),
            EstimateBasis.TCP_LOWER_BOUND,
            f"a paced UDP run delivered {_mbit(max(clean))} without losing: the policer passes at least that",
        )
    detail = (
        f"the steady TCP rate of {runs} run{'s' if runs > 1 else ''} ({_mbit(rate_bps)}); TCP saws below a "
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
