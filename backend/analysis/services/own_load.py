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

A latency interval (a minute of a TWAMP-light session, by default) is judged whole: one that
overlaps a busy span of either agent is loaded, since its percentiles and loss mix the test's
queue in. A session runs back to back and cannot wait for a loaded window to pass, so the
agent ends its intervals at the plan's loaded windows (a second outside them): the piece
inside a window is flagged here, the pieces around it are kept. Older agents send whole
minutes, and a run no slot announced still flags what it overlaps.

SQL pieces (constants: composing them takes no input) for a query with the parameters a, b
(the path's two agents, either direction), start and end; the same rule in Python
(busy_spans, overlaps_busy) for callers that judge whole runs they have already read, such as
the alerts' RTT and loss thresholds; and mark_own_load, which flags the ping samples and
latency intervals the rule leaves out as they are stored, so the rollups' percentile bands
and loss, and the latency baselines, leave them out too.
"""

from __future__ import annotations

import bisect
import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from history.buckets import MINUTE
from history.marks import Mark, mark
from history.models import Kind
from measurements.choices import TestType
from measurements.kinds.base import timestamp
from measurements.models import LatencyInterval, Run
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


# --- flagging the samples as they are stored ----------------------------------------------------

# The batch's pings in a busy span of either agent of their path.
MARK_PINGS_SQL = """
UPDATE measurements_pingsample s SET own_load = true
FROM unnest(%(runs)s::uuid[], %(starts)s::timestamptz[], %(ends)s::timestamptz[]) AS b(run_id, start_at, end_at)
WHERE s.run_id = b.run_id AND s.time >= b.start_at AND s.time < b.end_at
  AND s.time >= %(lo)s AND s.time <= %(hi)s AND NOT s.own_load
"""
# Pings stored before a throughput run that no slot announced (a run the plan did not hold,
# or one that started past its slot) on a path of either of its agents: flagged late, their
# minutes returned to be recomputed.
MARK_EARLIER_PINGS_SQL = """
WITH flagged AS (
    UPDATE measurements_pingsample s SET own_load = true
    FROM unnest(%(a)s::uuid[], %(b)s::uuid[], %(starts)s::timestamptz[], %(ends)s::timestamptz[])
         AS t(a, b, start_at, end_at)
    WHERE (s.source_id IN (t.a, t.b) OR s.destination_id IN (t.a, t.b))
      AND s.time >= t.start_at AND s.time < t.end_at
      AND s.time >= %(lo)s AND s.time < %(hi)s AND NOT s.own_load
    RETURNING s.source_id, s.destination_id, s.family, s.time
)
SELECT DISTINCT source_id, destination_id, family, time_bucket(%(width)s, time)
FROM flagged WHERE destination_id IS NOT NULL
"""
# Latency intervals stored before a throughput run that no slot announced, on a path of either
# of its agents, that overlap it. An interval starts at most its longest length (the options'
# report_interval_s) before the run it overlaps, which bounds the chunks read.
MARK_EARLIER_LATENCY_SQL = """
UPDATE measurements_latencyinterval l SET own_load = true
FROM unnest(%(a)s::uuid[], %(b)s::uuid[], %(starts)s::timestamptz[], %(ends)s::timestamptz[])
     AS t(a, b, start_at, end_at)
WHERE (l.source_id IN (t.a, t.b) OR l.destination_id IN (t.a, t.b))
  AND l.time < t.end_at AND l.ended_at > t.start_at
  AND l.time >= %(lo)s AND l.time < %(hi)s AND NOT l.own_load
"""
# Around a batch's samples when asking for the spans that cover them: a span starting at the
# last sample's very instant is still found.
SPAN_MARGIN = timedelta(seconds=1)
MAX_LATENCY_INTERVAL = timedelta(hours=1)


def mark_own_load(agent_id: uuid.UUID, results: list[dict[str, Any]]) -> None:
    """Flags the stored pings of `results` (from `agent_id`, as the contract has them) that a
    throughput test overlapped, and the earlier pings that the batch's throughput runs
    overlapped. In ingest's transaction, after the rows and before the commit: the rollups
    never see them unflagged."""
    _mark_pings(agent_id, [result for result in results if result["test_type"] == TestType.PING])
    _mark_latency(agent_id, [result for result in results if result.get("latency") is not None])
    throughput = [result for result in results if result["test_type"] == TestType.THROUGHPUT]
    _mark_earlier_pings(agent_id, throughput)
    _mark_earlier_latency(agent_id, throughput)


def _span(result: dict[str, Any]) -> Span:
    return timestamp(result["started_at"]), timestamp(result["ended_at"])


def _mark_pings(agent_id: uuid.UUID, pings: list[dict[str, Any]]) -> None:
    times = [timestamp(sample["time"]) for result in pings for sample in (result.get("ping") or {}).get("samples", [])]
    if not times:
        return
    lo, hi = min(times), max(times)
    spans = busy_spans(lo - SPAN_MARGIN, hi + SPAN_MARGIN)
    rows = [
        (uuid.UUID(result["id"]), start, end)
        for result in pings
        for agent in [agent_id, *([uuid.UUID(result["peer_id"])] if result.get("peer_id") else [])]
        for start, end in spans.get(agent, [])
    ]
    if not rows:
        return
    runs, starts, ends = (list(column) for column in zip(*rows, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(MARK_PINGS_SQL, {"runs": runs, "starts": starts, "ends": ends, "lo": lo, "hi": hi})


def _mark_earlier_pings(agent_id: uuid.UUID, runs: list[dict[str, Any]]) -> None:
    if not runs:
        return
    spans = [_span(result) for result in runs]
    params: dict[str, Any] = {
        "a": [agent_id] * len(runs),
        "b": [uuid.UUID(result["peer_id"]) if result.get("peer_id") else agent_id for result in runs],
        "starts": [start for start, _ in spans],
        "ends": [end for _, end in spans],
        "lo": min(start for start, _ in spans),
        "hi": max(end for _, end in spans),
        "width": MINUTE.width,
    }
    with connection.cursor() as cursor:
        cursor.execute(MARK_EARLIER_PINGS_SQL, params)
        minutes = cursor.fetchall()
    mark(MINUTE, (Mark(Kind.RTT, *minute) for minute in minutes))


def _mark_latency(agent_id: uuid.UUID, sessions: list[dict[str, Any]]) -> None:
    """Flags the batch's latency intervals that overlap a busy span of either agent."""
    if not sessions:
        return
    spans = [_span(result) for result in sessions]
    busy = busy_spans(min(start for start, _ in spans) - SPAN_MARGIN, max(end for _, end in spans) + SPAN_MARGIN)
    loaded = [
        (uuid.UUID(result["id"]), start)
        for result, (start, end) in zip(sessions, spans, strict=True)
        if overlaps_busy(busy, [agent_id, uuid.UUID(result["peer_id"]) if result.get("peer_id") else None], start, end)
    ]
    if loaded:
        # Each interval's run and time: the hypertable reads only the chunks of those times.
        LatencyInterval.objects.filter(
            run_id__in=[run for run, _ in loaded], time__in=sorted({time for _, time in loaded})
        ).update(own_load=True)


def _mark_earlier_latency(agent_id: uuid.UUID, runs: list[dict[str, Any]]) -> None:
    if not runs:
        return
    spans = [_span(result) for result in runs]
    params: dict[str, Any] = {
        "a": [agent_id] * len(runs),
        "b": [uuid.UUID(result["peer_id"]) if result.get("peer_id") else agent_id for result in runs],
        "starts": [start for start, _ in spans],
        "ends": [end for _, end in spans],
        "lo": min(start for start, _ in spans) - MAX_LATENCY_INTERVAL,
        "hi": max(end for _, end in spans),
    }
    with connection.cursor() as cursor:
        cursor.execute(MARK_EARLIER_LATENCY_SQL, params)
