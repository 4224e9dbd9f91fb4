"""RTT modes against the database: each flow sweep's modes stored, and the modes a path has now.

A sweep's modes come from the per-flow rule (analysis.modes) over its stored samples. Which
sweep's modes stand now is `current_modes` over the path's recent sweeps, with the throughput
runs that overlapped them; the page also shows pooled ping dip candidates, base-RTT levels
that follow each other in time, and the trace path nearest each mode's RTT.
"""

from __future__ import annotations

import bisect
import json
import statistics
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from analysis.choices import RttModeVerdict
from analysis.models import ANALYSIS_VERSION, StandingModes, SweepModes
from analysis.modes import (
    CurrentModes,
    DipResult,
    FlowRtts,
    ModeAnalysis,
    ModeVerdict,
    SweepSummary,
    TimeModes,
    current_modes,
    per_flow_modes,
    pooled_dip_candidate,
    time_separated_modes,
)
from analysis.payloads import checked
from analysis.runs import CeilingSet, RunCeilings
from inventory.models import Agent
from measurements import route_match
from measurements.choices import RunStatus, TestType
from measurements.models import FlowSample, PingSample, Run, TracePath

# RTT modes of a run: the newest flow sweep of the path at most this long before it.
MODES_LOOKBACK = timedelta(hours=24)


def flow_rtts(run: Run) -> list[FlowRtts]:
    samples = FlowSample.objects.filter(
        run_id=run.id, time__gte=run.started_at - timedelta(minutes=1), time__lte=run.ended_at + timedelta(minutes=5)
    ).values_list("flow", "src_port", "rtt_ms")
    by_flow: dict[tuple[int, int], list[float]] = defaultdict(list)
    for flow, src_port, rtt_ms in samples:
        answered = by_flow[(flow, src_port)]
        if rtt_ms is not None:
            answered.append(rtt_ms)
    return [FlowRtts(flow, port, tuple(rtts)) for (flow, port), rtts in sorted(by_flow.items())]


def analyze_sweep(run: Run, agents: dict[uuid.UUID, Agent] | None = None) -> SweepModes | None:
    """The RTT modes of one OK flow sweep, stored (overwritten) by run id."""
    if run.test_type != TestType.FLOWSWEEP or run.status != RunStatus.OK or run.destination_id is None:
        return None
    if agents is None:
        agents = Agent.objects.in_bulk([run.source_id, run.destination_id])
    if run.source_id not in agents or run.destination_id not in agents:
        return None
    # probes-and-detection.md: 16 flows x 10 samples; a few lost samples may be missing.
    result: ModeAnalysis = per_flow_modes(flow_rtts(run), min_flows=12, min_samples_per_flow=8)
    base = min((mode.min_rtt_ms for mode in result.modes), default=None)
    sweep, _ = SweepModes.objects.update_or_create(
        run_id=run.id,
        defaults={
            "started_at": run.started_at,
            "source": agents[run.source_id],
            "destination": agents[run.destination_id],
            "family": run.family,
            "verdict": result.verdict.value,
            "base_rtt_ms": base,
            "mode_count": len(result.modes),
            "analysis": checked("SweepAnalysis", result.to_dict()),
            "analysis_version": ANALYSIS_VERSION,
            "computed_at": timezone.now(),
        },
    )
    return sweep


def sweep_modes_near(source: Agent, destination: Agent, when: datetime, family: int = 4) -> SweepModes | None:
    """The flow-sweep modes that stood on the path (in its family) at `when` (or, failing that,
    on the reverse path): the rule of `current_modes` over the sweeps of the day before."""
    # Only sweeps that started before: a later one would make a recompute differ from the first.
    for src, dst in ((source, destination), (destination, source)):
        found = path_current_modes([src.pk], [dst.pk], when - MODES_LOOKBACK, when)
        chosen = found.get((src.pk, dst.pk, family))
        if chosen is not None and chosen.sweep is not None:
            return SweepModes.objects.filter(run_id=chosen.sweep.key).first()
    return None


# Each path's decided sweeps in a time range, newest last, with when each ended. The newest
# CURRENT_MODES_SWEEPS per path are enough for the hold rule and bound the work. {paths} is
# CROSS_PATHS (every source to every destination, every family) or LISTED_PATHS (given paths).
SWEEP_SUMMARIES_SQL = """
SELECT source_id, destination_id, family, run_id, started_at, ended_at, verdict, modes, flows_used FROM (
  SELECT s.source_id, s.destination_id, s.family, s.run_id, s.started_at, r.ended_at, s.verdict,
         (s.analysis->'modes')::text AS modes, (s.analysis->>'flows_used')::int AS flows_used,
         row_number() OVER (PARTITION BY s.source_id, s.destination_id, s.family ORDER BY s.started_at DESC) AS newest
  FROM analysis_sweepmodes s
  LEFT JOIN measurements_run r ON r.id = s.run_id AND r.started_at = s.started_at
  WHERE {paths} AND s.started_at >= %(since)s AND s.started_at <= %(until)s AND s.verdict <> %(insufficient)s
) recent
WHERE newest <= %(limit)s
ORDER BY started_at
"""
CROSS_PATHS = "s.source_id = ANY(%(sources)s) AND s.destination_id = ANY(%(destinations)s)"
LISTED_PATHS = (
    "(s.source_id, s.destination_id, s.family)"
    " IN (SELECT * FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[]))"
)
# Throughput runs are few (one per path every few hours) and last minutes (at most 300 s plus
# omit and margin): fetching those of the agents in one go is cheaper than a lookup per sweep.
# A host is busy in every family: an IPv4 run loads the host an IPv6 sweep leaves from.
THROUGHPUT_SPANS_SQL = """
SELECT source_id, destination_id, started_at, ended_at FROM measurements_run
WHERE test_type = %(throughput)s AND started_at >= %(since)s AND started_at <= %(until)s
  AND (source_id = ANY(%(ids)s) OR destination_id = ANY(%(ids)s))
"""
THROUGHPUT_SPAN_BOUND = timedelta(hours=1)
CURRENT_MODES_SWEEPS = 100

PathKey = tuple[uuid.UUID, uuid.UUID, int]  # source, destination, family


def _columns(paths: Sequence[PathKey]) -> tuple[list[uuid.UUID], list[uuid.UUID], list[int]]:
    """Sources, destinations and families of paths, as parallel lists for unnest."""
    return [path[0] for path in paths], [path[1] for path in paths], [path[2] for path in paths]


def _mode_pairs(text: str | None) -> tuple[tuple[float, float], ...]:
    """(RTT, share) per mode from a stored sweep analysis's modes (JSON text)."""
    modes = json.loads(text) if text else None
    if not isinstance(modes, list):
        return ()
    return tuple(
        (float(mode["rtt_ms"]), float(mode.get("share") or 0.0))
        for mode in modes
        if isinstance(mode, dict) and isinstance(mode.get("rtt_ms"), int | float)
    )


def _recent_sweeps(
    paths: str,
    sources: Sequence[uuid.UUID],
    destinations: Sequence[uuid.UUID],
    since: datetime,
    until: datetime,
    families: Sequence[int] = (),
) -> dict[PathKey, list[SweepSummary]]:
    """Each path's decided sweeps in the range, oldest first, each marked disturbed when a
    throughput run of either agent overlapped it. `families` go with LISTED_PATHS."""
    with connection.cursor() as cursor:
        cursor.execute(
            SWEEP_SUMMARIES_SQL.format(paths=paths),
            {
                "sources": list(sources),
                "destinations": list(destinations),
                "families": list(families),
                "since": since,
                "until": until,
                "insufficient": RttModeVerdict.INSUFFICIENT.value,
                "limit": CURRENT_MODES_SWEEPS,
            },
        )
        rows = cursor.fetchall()
        if not rows:
            return {}
        cursor.execute(
            THROUGHPUT_SPANS_SQL,
            {
                "throughput": TestType.THROUGHPUT.value,
                "since": since - THROUGHPUT_SPAN_BOUND,
                "until": until,
                "ids": sorted({*sources, *destinations}),
            },
        )
        busy: dict[uuid.UUID, list[tuple[datetime, datetime]]] = defaultdict(list)
        for source_id, destination_id, started_at, ended_at in cursor.fetchall():
            for agent in {source_id, destination_id} - {None}:
                busy[agent].append((started_at, ended_at))
    # By start, so each sweep looks only at the runs that began within the bound before it.
    for spans in busy.values():
        spans.sort()
    by_path: dict[PathKey, list[SweepSummary]] = defaultdict(list)
    for source_id, destination_id, family, run_id, started_at, ended_at, verdict, modes, flows_used in rows:
        # A throughput run of either agent during the sweep queues its probes (or their echo
        # replies) and blurs the modes.
        end = ended_at or started_at
        disturbed = any(_overlaps(busy.get(agent, []), started_at, end) for agent in (source_id, destination_id))
        summary = SweepSummary(
            str(run_id), started_at, ModeVerdict(verdict), _mode_pairs(modes), int(flows_used or 0), disturbed
        )
        by_path[(source_id, destination_id, family)].append(summary)
    return by_path


def _overlaps(spans: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> bool:
    """Whether a run of these (sorted by start, none longer than THROUGHPUT_SPAN_BOUND)
    overlaps [start, end]."""
    first = bisect.bisect_left(spans, (start - THROUGHPUT_SPAN_BOUND,))
    for begin, finish in spans[first:]:
        if begin >= end:
            return False
        if finish > start:
            return True
    return False


def path_current_modes(
    sources: Sequence[uuid.UUID], destinations: Sequence[uuid.UUID], since: datetime, until: datetime
) -> dict[PathKey, CurrentModes]:
    """`current_modes` for every source -> destination path (each family) with a decided sweep
    in the range, in two queries."""
    by_path = _recent_sweeps(CROSS_PATHS, sources, destinations, since, until)
    return {path: current_modes(summaries) for path, summaries in by_path.items()}


# The grid shows every path's standing modes; reading each path's last day of sweeps (a sweep
# every 15 minutes is 950,000 of them at 100 agents) for that costs seconds, so the analysis
# task keeps the answer per path (StandingModes) whenever what it rests on changes: a sweep
# of the path analysed, a throughput run that overlapped one of its sweeps analysed, or the
# day-long window moving past a sweep that counted (valid_until). The grid computes the few
# paths without a valid row as before.


def standing_valid_until(summaries: Sequence[SweepSummary], chosen: CurrentModes) -> datetime | None:
    """Until when `chosen` stands without new data: the window (MODES_LOOKBACK) drops sweeps
    oldest first. The newest sweep of the pool stands until it leaves the window unless the
    hold rule weighed older ECMP sweeps, which then count until the oldest one leaves it.
    None: no decided sweep, which only new data changes."""
    decided = sorted((s for s in summaries if s.verdict != ModeVerdict.INSUFFICIENT), key=lambda s: s.started_at)
    pool = [s for s in decided if not s.disturbed] or decided
    if chosen.sweep is None or not pool:
        return None
    ecmp_before_newest = any(s.verdict == ModeVerdict.ECMP for s in pool[:-1])
    counted = pool[0] if ecmp_before_newest and pool[-1].verdict != ModeVerdict.ECMP else pool[-1]
    return counted.started_at + MODES_LOOKBACK


def refresh_standing_modes(paths: Iterable[PathKey], now: datetime) -> int:
    """Recomputes the standing modes of these paths at `now`; returns how many rows it wrote."""
    wanted = sorted(set(paths))
    if not wanted:
        return 0
    sources, destinations, families = _columns(wanted)
    by_path = _recent_sweeps(LISTED_PATHS, sources, destinations, now - MODES_LOOKBACK, now, families)
    rows = []
    for source_id, destination_id, family in wanted:
        summaries = by_path.get((source_id, destination_id, family), [])
        chosen = current_modes(summaries)
        sweep = chosen.sweep
        rows.append(
            StandingModes(
                source_id=source_id,
                destination_id=destination_id,
                family=family,
                sweep_run_id=uuid.UUID(sweep.key) if sweep is not None else None,
                mode_count=len(sweep.modes) if sweep is not None else None,
                verdict=sweep.verdict.value if sweep is not None else "",
                valid_until=standing_valid_until(summaries, chosen),
                computed_at=now,
            )
        )
    StandingModes.objects.bulk_create(
        rows,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["source", "destination", "family"],
        update_fields=["sweep_run_id", "mode_count", "verdict", "valid_until", "computed_at"],
    )
    return len(rows)


# Paths whose standing modes a newly analysed throughput run may change: those of either agent
# with a sweep that overlapped the run (the rule passes over disturbed sweeps).
OVERLAPPED_SQL = """
SELECT DISTINCT s.source_id, s.destination_id, s.family
FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(starts)s::timestamptz[], %(ends)s::timestamptz[])
     AS t(source_id, destination_id, started_at, ended_at)
JOIN analysis_sweepmodes s
  ON s.started_at < t.ended_at AND s.started_at >= t.started_at - make_interval(secs => %(bound_s)s)
  AND (s.source_id IN (t.source_id, t.destination_id) OR s.destination_id IN (t.source_id, t.destination_id))
JOIN measurements_run r ON r.id = s.run_id AND r.started_at = s.started_at AND r.ended_at > t.started_at
"""


def overlapped_paths(runs: Sequence[Run]) -> set[PathKey]:
    """Paths with a sweep that one of these throughput runs overlapped."""
    spans = [run for run in runs if run.ended_at is not None]
    if not spans:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            OVERLAPPED_SQL,
            {
                "sources": [run.source_id for run in spans],
                "destinations": [run.destination_id for run in spans],
                "starts": [run.started_at for run in spans],
                "ends": [run.ended_at for run in spans],
                "bound_s": THROUGHPUT_SPAN_BOUND.total_seconds(),
            },
        )
        return {(row[0], row[1], row[2]) for row in cursor.fetchall()}


STANDING_SQL = """
SELECT source_id::text, destination_id::text, family, mode_count, verdict,
       valid_until IS NULL OR valid_until > %(now)s
FROM analysis_standingmodes
WHERE source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s)
"""


def standing_mode_counts(
    ids: Sequence[uuid.UUID], now: datetime, families: Sequence[int] = (4, 6)
) -> dict[tuple[str, str, int], tuple[int, str]]:
    """(mode count, verdict) of the sweep whose modes stand now, for every path between the
    agents (in each of `families`) that has one, keyed by the ids as text and the family (as
    analysis.services.path_state): the kept rows, and the paths without a valid one computed
    here."""
    with connection.cursor() as cursor:
        cursor.execute(STANDING_SQL, {"ids": list(ids), "now": now})
        rows = cursor.fetchall()
    counts = {(row[0], row[1], row[2]): (row[3], row[4]) for row in rows if row[5] and row[3] is not None}
    kept = {(row[0], row[1], row[2]) for row in rows if row[5]}
    text_ids = [(agent_id, str(agent_id)) for agent_id in ids]
    missing = [
        (src, dst, family)
        for src, s in text_ids
        for dst, d in text_ids
        for family in families
        if src != dst and (s, d, family) not in kept
    ]
    if missing:
        sources, destinations, wanted = _columns(missing)
        by_path = _recent_sweeps(LISTED_PATHS, sources, destinations, now - MODES_LOOKBACK, now, wanted)
        for (source_id, destination_id, family), summaries in by_path.items():
            sweep = current_modes(summaries).sweep
            if sweep is not None:
                counts[(str(source_id), str(destination_id), family)] = (len(sweep.modes), sweep.verdict.value)
    return counts


def _trace_paths_by_rtt(
    source: Agent, destination: Agent, since: datetime, family: int
) -> list[tuple[float, list[str]]]:
    """(median RTT at the destination, router addresses) per distinct reached trace path; a
    path with silent hops counts as the complete one it fits (measurements.route_match)."""
    rows = TracePath.objects.filter(
        source_id=source.pk, destination_id=destination.pk, family=family, time__gte=since, reached=True
    ).values_list("fingerprint", "hops")
    patterns: dict[str, route_match.HopPattern] = {}
    rtts: dict[str, list[float]] = {}
    for fingerprint, hops in rows:
        if not isinstance(hops, list) or not hops:
            continue
        patterns.setdefault(fingerprint, route_match.hop_pattern(hops))
        last = hops[-1] if isinstance(hops[-1], dict) else {}
        rtts.setdefault(fingerprint, []).extend(
            probe["rtt_ms"] for probe in last.get("probes") or [] if isinstance(probe.get("rtt_ms"), int | float)
        )
    read = route_match.read_as(patterns, {fingerprint: len(found) for fingerprint, found in rtts.items()})
    merged: dict[str, list[float]] = {}
    for fingerprint, found in rtts.items():
        merged.setdefault(read[fingerprint], []).extend(found)
    return [
        (statistics.median(found), [min(hop) if hop else "*" for hop in patterns[fingerprint]])
        for fingerprint, found in merged.items()
        if found
    ]


@dataclass(frozen=True)
class ModeNow:
    """One RTT mode of the standing sweep, with the trace path at its RTT and its ceilings."""

    mode: dict[str, Any]  # as the sweep stored it (SweepMode of contract/analysis.v1.schema.json)
    trace_path: list[str] | None  # router addresses of the trace path at this RTT, if one is near
    ceiling: CeilingSet | None  # the four terms at this mode's RTT (ECMP only)


@dataclass(frozen=True)
class PathModesNow:
    """A path's RTT modes now, and what else the last day of probes says about them."""

    sweep: SweepModes | None  # the sweep whose modes stand now; None without a decided one
    chosen: CurrentModes | None  # why they stand (a newer one-mode sweep may not overturn them)
    modes: list[ModeNow]
    sweeps: int  # decided sweeps of the last day
    ecmp_sweeps: int
    ping_dip: DipResult
    time_modes: TimeModes


def path_modes_now(source: Agent, destination: Agent, ceilings: RunCeilings | None, family: int = 4) -> PathModesNow:
    """RTT modes now (the newest sweep no throughput run disturbed), how often sweeps saw
    ECMP, ping dip candidates and modes that separate in time."""
    now = timezone.now()
    since = now - MODES_LOOKBACK
    sweeps = list(
        SweepModes.objects.filter(
            source=source, destination=destination, family=family, started_at__gte=since
        ).order_by("started_at")
    )
    decided = [sweep for sweep in sweeps if sweep.verdict != RttModeVerdict.INSUFFICIENT]
    chosen = path_current_modes([source.pk], [destination.pk], since, now).get((source.pk, destination.pk, family))
    standing = chosen.sweep.key if chosen is not None and chosen.sweep is not None else None
    latest = next((sweep for sweep in reversed(decided) if str(sweep.run_id) == standing), None)
    traces = _trace_paths_by_rtt(source, destination, since, family)
    modes: list[ModeNow] = []
    for index, mode in enumerate((latest.analysis.get("modes") or []) if latest else []):
        path = min(traces, key=lambda trace: abs(trace[0] - mode["rtt_ms"]), default=None)
        near = path is not None and abs(path[0] - mode["rtt_ms"]) <= max(1.0, 0.1 * mode["rtt_ms"])
        ceiling = None
        if ceilings is not None and latest is not None and latest.verdict == RttModeVerdict.ECMP:
            ceiling = ceilings.per_mode[index] if index < len(ceilings.per_mode) else None
        modes.append(ModeNow(mode, path[1] if near and path else None, ceiling))
    pings = (
        PingSample.objects.filter(
            source_id=source.pk,
            destination_id=destination.pk,
            family=family,
            time__gte=since,
            rtt_ms__isnull=False,
            duplicate=False,
        )
        .order_by("-time")
        .values_list("rtt_ms", flat=True)[:20000]
    )
    dip = pooled_dip_candidate([float(value) for value in pings if value is not None])
    # Only when flows show one mode: levels that then differ follow each other in time.
    bases = [(sweep.started_at, sweep.base_rtt_ms) for sweep in decided if sweep.base_rtt_ms is not None]
    in_time = time_separated_modes(bases if not latest or latest.verdict != RttModeVerdict.ECMP else [])
    return PathModesNow(
        sweep=latest,
        chosen=chosen,
        modes=modes,
        sweeps=len(decided),
        ecmp_sweeps=sum(1 for sweep in decided if sweep.verdict == RttModeVerdict.ECMP),
        ping_dip=dip,
        time_modes=in_time,
    )
