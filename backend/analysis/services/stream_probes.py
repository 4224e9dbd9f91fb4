"""One stream against several, planned and read (issue 31's "1 vs N streams").

When a path's newest single-stream run is far below its ceilings, nothing in it tells a limit
each flow meets on its own (its window, the loss it meets, a per-flow shaper, one core) from
one the path puts on all flows together (a bottleneck, a policer). A streams probe tells: its
next exclusive slot in the data's direction runs PROBE_STREAMS streams instead
(meshes/probes.py), at most every FATHOM_STREAMS_PROBE_EVERY_H, and analysis/streams.py
compares the probe's aggregate with the single-stream runs before it. A probe that measured
nothing (it failed, its slot was missed, or the agent ran the slot's earlier test) is tried
again in a later slot, up to MAX_UNMEASURED an interval, as a ramp is.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from analysis.models import RunAnalysis
from analysis.services.inputs import as_dict, is_reverse, ok_throughput_runs
from analysis.services.marked_slots import MAX_UNMEASURED, failure_reason, measured_and_unmeasured
from analysis.streams import MIN_SINGLE_RUNS, StreamsVerdict, compare_streams
from inventory.models import Agent
from measurements.models import Run
from meshes.choices import SlotState
from meshes.probes import next_probe_slot, probe_slots, put_streams_probe

logger = logging.getLogger(__name__)

# A single stream under this share of its ceiling is far below it: worth a probe.
FAR_BELOW = 0.5
# The single-stream runs a probe is compared with: those of the day before it, newest first.
SINGLE_LOOKBACK = timedelta(hours=24)
SINGLE_RUNS = 10
# How long a probe's verdict stands on the path page.
SHOWN_FOR = timedelta(days=7)


@dataclass(frozen=True)
class ProbeRequest:
    """What a request for a streams probe came to: the slot it took, or why none."""

    slot_id: str | None
    reason: str


def request_streams_probe(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> ProbeRequest:
    """Puts a probe in the path's next slot when its newest single-stream run is far below its
    ceilings and no probe is recent or planned; says why not otherwise."""
    every_h = settings.STREAMS_PROBE_EVERY_H
    if every_h <= 0:
        return ProbeRequest(None, "probes are off (FATHOM_STREAMS_PROBE_EVERY_H=0)")
    singles = _single_runs(sender, receiver, now - SINGLE_LOOKBACK, now, family)
    if len(singles) < MIN_SINGLE_RUNS:
        return ProbeRequest(None, f"fewer than {MIN_SINGLE_RUNS} single-stream runs in the last day")
    latest = singles[0]
    if not latest.ceiling_bps or latest.rate_bps is None or latest.rate_bps >= FAR_BELOW * latest.ceiling_bps:
        return ProbeRequest(None, "the newest single-stream run is not far below its ceilings")
    since = now - timedelta(hours=every_h)
    probes = probe_slots(sender, receiver, since, family)
    if any(slot.state == SlotState.PLANNED for slot in probes):
        return ProbeRequest(None, "a probe is already planned")
    measured, failed = measured_and_unmeasured(probes, since, "streams_probe")
    if measured:
        return ProbeRequest(None, f"a probe ran in the last {every_h} h")
    if len(failed) >= MAX_UNMEASURED:  # the next interval tries again
        return ProbeRequest(
            None, f"{len(failed)} probes failed in the last {every_h} h; the latest: {failure_reason(failed[-1])}"
        )
    slot = next_probe_slot(sender, receiver, now, family)
    if slot is None or not put_streams_probe(slot):
        return ProbeRequest(None, "no planned TCP slot ahead")
    logger.info("streams probe %s -> %s in slot %s at %s", sender, receiver, slot.pk, slot.start_at)
    return ProbeRequest(str(slot.pk), f"a probe in the slot at {slot.start_at:%H:%M:%S}")


def _single_runs(
    sender: Agent, receiver: Agent, since: datetime, until: datetime, family: int = 4
) -> list[RunAnalysis]:
    """The path's analysed single-stream runs in [since, until), newest first."""
    return list(
        RunAnalysis.objects.filter(
            source=sender, destination=receiver, family=family, streams=1, started_at__gte=since, started_at__lt=until
        ).order_by("-started_at")[:SINGLE_RUNS]
    )


@dataclass(frozen=True)
class StreamsProbe:
    """The path's newest probe and what it said."""

    run: Run
    verdict: StreamsVerdict

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": str(self.run.id), "started_at": self.run.started_at, **self.verdict.to_dict()}


def latest_streams_probe(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> StreamsProbe | None:
    """The newest measured probe in the data's direction within SHOWN_FOR, with its verdict;
    None without one, or without the single-stream runs to compare it with."""
    runs = ok_throughput_runs(sender, receiver, now - SHOWN_FOR, now, family).filter(params__streams_probe=True)[:5]
    for run in runs:
        if (run.source_id == sender.pk) == is_reverse(run):
            continue  # the other direction's data
        rate = as_dict(run.summary).get("receiver_bits_per_s")
        streams = as_dict(run.params).get("parallel")
        if not isinstance(rate, int | float) or not isinstance(streams, int):
            continue
        singles = _single_runs(sender, receiver, run.started_at - SINGLE_LOOKBACK, run.started_at, family)
        verdict = compare_streams([row.rate_bps for row in singles if row.rate_bps], float(rate), streams)
        if verdict is not None:
            return StreamsProbe(run, verdict)
    return None
