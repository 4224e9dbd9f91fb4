"""One stream against several: whether a limit holds each flow on its own or the path holds
them all together (issue 31's "1 vs N streams"). Pure.

A flow held by its own window, the loss it meets, a per-flow shaper or the CPU of one core
leaves room beside it: N such flows add up to about N times one. A bottleneck's rate or a
policer's is shared: N flows together get about what one got. The comparison is the probe's
aggregate rate against the median of the path's single-stream runs just before it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.units import rate_text

# N streams reaching at least this share of N times one: they add up (per-flow limits).
ADD_UP_SHARE = 0.6
# N streams together at most this many times one: they share one limit (the path's).
SHARED_RATIO = 1.25
# Single-stream runs the comparison needs, so one odd run does not set its base.
MIN_SINGLE_RUNS = 3


@dataclass(frozen=True)
class StreamsVerdict:
    streams: int
    probe_bps: float
    single_bps: float  # the median single-stream rate before the probe
    single_runs: int
    kind: str  # "per_flow", "path" or "partly"
    text: str

    @property
    def ratio(self) -> float:
        return self.probe_bps / self.single_bps

    def to_dict(self) -> dict[str, Any]:
        return {
            "streams": self.streams,
            "probe_bps": self.probe_bps,
            "single_bps": self.single_bps,
            "single_runs": self.single_runs,
            "ratio": self.ratio,
            "kind": self.kind,
            "text": self.text,
        }


def compare_streams(single_bps: Sequence[float], probe_bps: float, streams: int) -> StreamsVerdict | None:
    """The verdict of a probe of `streams` streams at `probe_bps` in all, against the rates of
    the single-stream runs before it; None without enough of them or without a rate."""
    rates = [rate for rate in single_bps if rate > 0]
    if len(rates) < MIN_SINGLE_RUNS or probe_bps <= 0 or streams < 2:
        return None
    single = statistics.median(rates)
    ratio = probe_bps / single
    together = (
        f"{streams} streams together reached {rate_text(probe_bps)}, {ratio:.1f}x one stream's {rate_text(single)}"
    )
    if ratio >= ADD_UP_SHARE * streams:
        kind = "per_flow"
        text = (
            f"{together}: each flow is held on its own (its window, the loss it meets, a per-flow shaper, "
            "one core's CPU), not by a rate the streams share; more streams add up, and so does lifting what "
            "holds each one"
        )
    elif ratio <= SHARED_RATIO:
        kind = "path"
        text = (
            f"{together}: one limit on the path (a bottleneck, or a policer's rate) holds them all together; "
            "more streams share it rather than add up"
        )
    else:
        kind = "partly"
        text = f"{together}: partly each flow's own limit, partly one the streams share on the path"
    return StreamsVerdict(streams, probe_bps, single, len(rates), kind, text)
