"""Fathom's own throughput tests load the hosts they run on: a ping answered while one runs
on either host of a path sees the queue the test builds on that host's link (and a
policer's drops), not the path. The RTT and loss rules and the loss a run's ceiling rests on
leave those pings out; the charts still show every ping.

A test between one host of the path and a third agent counts too: it fills that host's
access link and CPU, which the path's pings share.

A test counts from its slot, not only from its run: the run reaches the server only when the
agent uploads it, after the test, and an analysis pass in between judged the pings of a test
still running (a lab CI run found a +2.2 ms "RTT shift" on a path in the middle of its own
iperf3, cleared 30 s later when the run landed). Every exclusive slot that may have run
(planned, measured, failed or missed; not one the planner found no time for) covers its
reserved time, margins included.

SQL pieces (constants: composing them takes no input) for a query with the parameters a, b
(the path's two agents, either direction), start and end; and the same rule in Python
(busy_spans, overlaps_busy) for callers that judge whole runs they have already read, such as
the alerts' RTT and loss thresholds.
"""

from __future__ import annotations

import bisect
import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from measurements.choices import TestType
from measurements.models import Run
from meshes.choices import SlotState
from meshes.models import Slot

# Throughput runs (UDP ramps included) and throughput slots with either agent of the path at
# either end that overlap [start, end).
BUSY_CTE = """busy AS (
    SELECT started_at, ended_at FROM measurements_run
    WHERE test_type = 'throughput'
      AND (source_id IN (%(a)s, %(b)s) OR destination_id IN (%(a)s, %(b)s))
      AND started_at < %(end)s AND ended_at > %(start)s
    UNION ALL
    SELECT start_at, end_at FROM meshes_slot
    WHERE test_type = 'throughput' AND state <> 'unschedulable'
      AND (source_id IN (%(a)s, %(b)s) OR destination_id IN (%(a)s, %(b)s))
      AND start_at < %(end)s AND end_at > %(start)s
)"""
# A ping sample's time in none of them.
NOT_BUSY = "NOT EXISTS (SELECT 1 FROM busy WHERE time >= busy.started_at AND time < busy.ended_at)"


# --- the same rule in Python, for callers that already hold the runs they judge ----------------

Span = tuple[datetime, datetime]


def busy_spans(since: datetime, until: datetime) -> dict[uuid.UUID, list[Span]]:
    """Per agent, when a throughput test had it at either end (the runs and slots BUSY_CTE
    counts), overlapping spans merged, oldest first. Two queries for the whole mesh."""
    runs = Run.objects.filter(test_type=TestType.THROUGHPUT, started_at__lt=until, ended_at__gt=since).values_list(
        "started_at", "ended_at", "source_id", "destination_id"
    )
    slots = (
        Slot.objects.filter(test_type=TestType.THROUGHPUT, start_at__lt=until, end_at__gt=since)
        .exclude(state=SlotState.UNSCHEDULABLE)
        .values_list("start_at", "end_at", "source_id", "destination_id")
    )
    per_agent: dict[uuid.UUID, list[Span]] = defaultdict(list)
    for start, end, *agents in itertools.chain(runs, slots):
        for agent in agents:
            if agent is not None:
                per_agent[agent].append((start, end))
    return {agent: _merged(spans) for agent, spans in per_agent.items()}


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def overlaps_busy(
    spans: dict[uuid.UUID, list[Span]], agents: Iterable[uuid.UUID | None], start: datetime, end: datetime
) -> bool:
    """Whether [start, end] meets a busy span of any of the agents (None: a target, no agent)."""
    for agent in agents:
        merged = spans.get(agent, []) if agent is not None else []
        # The last span that starts before `end`: merged spans are disjoint and sorted.
        index = bisect.bisect_left(merged, (end,)) - 1
        if index >= 0 and merged[index][1] > start:
            return True
    return False
