"""Whether a daily volume fits a path: seed 000's question.

Pure. `capacity_plan` says whether the backlog grows at today's rate, and whether more
streams help or only share a bottleneck or policer.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from analysis.advice import SharedCeiling
from core.units import rate_text

# Seed 001: about 13 TiB of Copernicus products a day.
DEFAULT_DAILY_VOLUME_BYTES = 13 * 2**40


def _hours_a_day(hours: float) -> str:
    """How long a day's volume takes, "10.2 h a day"; past two days' worth, in days too, which
    a starved path reaches ("127,055 h (5,294 days) a day", not "127055.0 h a day")."""
    if hours <= 48:
        return f"{hours:.1f} h a day"
    return f"{hours:,.0f} h ({hours / 24:,.0f} days) a day"


# Behind a policer, streams that together get less than this share of what they need (or of
# what it passes) are starved by its drops: the plan paces them rather than multiplying them.
PACE_BELOW_SHARE = 0.5


@dataclass(frozen=True)
class CapacityPlan:
    daily_volume_bytes: int
    required_bps: float
    rate_bps: float | None
    streams: int
    per_stream_bps: float | None
    hours_per_day: float | None
    streams_needed: int | None
    backlog_grows: bool | None
    reason: str
    notes: list[str] = field(default_factory=list)
    shared_ceiling_bps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def capacity_plan(
    daily_volume_bytes: int, rate_bps: float | None, streams: int, shared: SharedCeiling | None = None
) -> CapacityPlan:
    """Hours a day the volume takes at the current rate, and the streams worth running.

    Parallel streams add up only while each has its own limit (a window, its share of random
    loss): they stop adding up at what all of them share, a full bottleneck or a policer, or
    the link. The stream count is capped there, and the plan says when no count keeps up.
    Behind a policer the remedy is pacing: when today's streams get less than half of what it
    passes (or of what the volume needs), the plan keeps their count and says to pace them,
    with the unpaced count as a note.
    """
    required = daily_volume_bytes * 8 / 86400
    if rate_bps is None or rate_bps <= 0 or streams < 1:
        return CapacityPlan(daily_volume_bytes, required, rate_bps, streams, None, None, None, None,
                            "no throughput measured yet")  # fmt: skip
    per_stream = rate_bps / streams
    hours = daily_volume_bytes * 8 / rate_bps / 3600
    grows = hours > 24
    verdict = "the backlog grows" if grows else "the volume fits"
    volume = f"{daily_volume_bytes / 2**40:.1f} TiB/day needs {rate_text(required)}"
    now = f"at {rate_text(rate_bps)} ({streams} x {rate_text(per_stream)}) it takes {_hours_a_day(hours)}: {verdict}"
    notes: list[str] = []
    if shared is not None and shared.pacing_reaches_it and rate_bps < PACE_BELOW_SHARE * min(required, shared.rate_bps):
        needed = streams
        verdict, notes = _paced_verdict(daily_volume_bytes, required, per_stream, streams, shared)
        reason = f"{volume}; {now}; {verdict}"
    elif shared is None or required <= shared.rate_bps:
        needed = math.ceil(required / per_stream)
        reason = f"{volume}; {now}; {needed} streams at today's per-stream rate keep up"
        if shared is not None and needed > streams:
            notes.append(f"{shared.what} carries up to {rate_text(shared.rate_bps)}: the streams add up below it")
        elif needed > streams:
            notes.append(
                "what all streams share is unknown (no link speed, no full bottleneck seen): they stop adding up "
                "there, perhaps before this count"
            )
    else:
        needed = max(1, math.ceil(shared.rate_bps / per_stream))
        best_hours = daily_volume_bytes * 8 / shared.rate_bps / 3600
        reason = (
            f"{volume}; {now}; no number of streams keeps up: {shared.what} carries at most "
            f"{rate_text(shared.rate_bps)} for all streams together ({_hours_a_day(best_hours)}); "
            + (
                f"{needed} streams reach it, more only share it"
                if needed > streams
                else "more streams only share it rather than add up"
            )
        )
        notes.append(
            "streams add up only while each has its own limit (a window, its share of random loss), never past "
            "what they share (a full bottleneck, a policer, the link)"
        )
    return CapacityPlan(
        daily_volume_bytes=daily_volume_bytes,
        required_bps=required,
        rate_bps=rate_bps,
        streams=streams,
        per_stream_bps=per_stream,
        hours_per_day=hours,
        streams_needed=needed,
        backlog_grows=grows,
        reason=reason,
        notes=notes,
        shared_ceiling_bps=shared.rate_bps if shared is not None else None,
    )


def _paced_verdict(
    daily_volume_bytes: int, required: float, per_stream: float, streams: int, shared: SharedCeiling
) -> tuple[str, list[str]]:
    """Behind a policer: today's streams, paced, rather than the hundreds of unpaced ones that
    per-stream arithmetic asks for (each keeps only what the policer's drops leave it)."""
    reachable = min(required, shared.rate_bps)
    todays = f"today's {streams} {'stream' if streams == 1 else 'streams'}"
    carry, reach = ("carries", "reaches") if streams == 1 else ("carry", "reach")
    if required <= shared.rate_bps:
        verdict = (
            f"pacing keeps up, not more streams: paced to between {rate_text(required)} in all and just below "
            f"{shared.what}, {todays} {carry} the volume"
        )
    else:
        best_hours = daily_volume_bytes * 8 / shared.rate_bps / 3600
        verdict = (
            f"no number of streams keeps up: {shared.what} carries at most {rate_text(shared.rate_bps)} for all "
            f"streams together ({_hours_a_day(best_hours)}), and {todays}, paced just below it, {reach} that"
        )
    notes = [
        f"unpaced, each stream keeps about {rate_text(per_stream)} through the policer's drops: it would take "
        f"{math.ceil(reachable / per_stream)} of them to reach {rate_text(reachable)}, and that many flows burst "
        "into the policer together",
        "a paced stream's own ceilings (its window, the send buffer) still apply: the advice sizes them",
    ]
    return verdict, notes
