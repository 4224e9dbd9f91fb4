"""The grid's colour thresholds of a mesh: what an operator set (Mesh.thresholds, only the keys
set), over defaults for the rest.

A pure module: the API validates with `threshold_errors`, the grid reads `effective_thresholds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

# Newest data older than this many of the mesh's longest test interval is stale; never sooner
# than STALE_FLOOR_S, so a mesh of minute pings does not flag a path after a few missed runs.
STALE_INTERVALS = 3
STALE_FLOOR_S = 3600


@dataclass(frozen=True)
class GridThresholds:
    # Throughput as a share of its ceiling: green from good on, red at bad or under.
    fraction_good: float = 0.9
    fraction_bad: float = 0.5
    # Absolute throughput.
    rate_good_bps: float = 1e9
    rate_bad_bps: float = 1e8
    # RTT median of the last hour: amber from warn on, red from crit on.
    rtt_warn_ms: float = 100.0
    rtt_crit_ms: float = 250.0
    # Loss of the last hour, a fraction of the pings sent (perfSONAR's MaDDash: 0.1 % and 1 %).
    loss_warn: float = 0.001
    loss_crit: float = 0.01
    # None: STALE_INTERVALS x the mesh's longest enabled test interval, at least STALE_FLOOR_S.
    stale_after_s: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULTS = GridThresholds()
KEYS = tuple(DEFAULTS.to_dict())
# Pairs that must be ordered: (lower, higher).
ORDERED = (
    ("fraction_bad", "fraction_good"),
    ("rate_bad_bps", "rate_good_bps"),
    ("rtt_warn_ms", "rtt_crit_ms"),
    ("loss_warn", "loss_crit"),
)


def effective_thresholds(stored: Mapping[str, Any], test_intervals_s: Iterable[int]) -> GridThresholds:
    """What the grid colours by: the operator's values over the defaults, stale_after_s resolved."""
    values = {key: stored[key] for key in KEYS if stored.get(key) is not None}
    if "stale_after_s" not in values:
        values["stale_after_s"] = max([STALE_FLOOR_S, *(STALE_INTERVALS * interval for interval in test_intervals_s)])
    return GridThresholds(**values)


def threshold_errors(stored: Mapping[str, Any]) -> dict[str, str]:
    """Each ordered pair whose two values, the operator's over the defaults, are not ordered;
    the ranges of single values are the serializer's."""
    merged = {**DEFAULTS.to_dict(), **stored}
    return {
        low: f"must be below {high} ({merged[high]:g}); it is {merged[low]:g}"
        for low, high in ORDERED
        if merged[low] >= merged[high]
    }
