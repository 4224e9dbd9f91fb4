"""What every regression rule returns: the episode of a change, and the values rules share.

An episode's times mean:

- `started_at`: the first point (test, window, trace run) of the changed regime, as the rule
  estimates it;
- `detected_at`: the point whose data confirmed it (for windows: the window's start; its data
  is complete at start + window length);
- `cleared_at`: the first point of the run of points that confirmed the recovery, None while
  the episode is still open at the end of the series.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

# 1.4826 x MAD estimates the standard deviation of normal data.
MAD_TO_SIGMA = 1.4826


class Direction(StrEnum):
    UP = "up"
    DOWN = "down"


class Metric(StrEnum):
    THROUGHPUT = "throughput"
    RTT = "rtt"
    LOSS = "loss"
    ROUTE = "route"
    ECMP = "ecmp"


@dataclass(frozen=True)
class Point:
    """One measurement: a throughput test's rate in bit/s (or any value a rule documents)."""

    time: datetime
    value: float
    # What the value could have been at most (a throughput run's ceiling, in the value's
    # unit): the prior a rule may lean on while the series' own history is short.
    ceiling: float | None = None
    # Its own circumstances may explain a drop (a throughput run on an ECMP member no sweep
    # has shown): it confirms a drop only through a rule's slower, more-points test.
    ambiguous: bool = False


@dataclass(frozen=True)
class Episode:
    """A change a rule found: when it started, when it was confirmed and when it cleared."""

    metric: Metric
    rule: str  # "throughput_fast", "throughput_slow", "rtt_cusum", "loss", "route"
    started_at: datetime  # first point that belongs to the changed regime
    detected_at: datetime  # the point at which the rule confirmed it
    cleared_at: datetime | None  # None while still open at the end of the series
    direction: Direction
    baseline: float  # in the metric's unit (bit/s, ms, fraction, fingerprint count)
    current: float  # level after the change (median of the confirming points)
    # Relative change for throughput ((current-baseline)/baseline), ms for RTT, percentage
    # points for loss, count of new fingerprints for routes.
    magnitude: float
    evidence: dict[str, object] = field(default_factory=dict)  # JSON-serializable numbers it rests on


def iso(moment: datetime) -> str:
    return moment.isoformat()


def mad(values: Sequence[float], center: float) -> float:
    """Median absolute deviation of values around center."""
    return statistics.median([abs(value - center) for value in values])


def require_positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")
