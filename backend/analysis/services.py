"""The analysis against the database: reads runs, samples and host-facts history, calls the
pure modules (runs, diagnosis, modes, changes) and stores what they found.

Every entry point is idempotent: analysing a run again overwrites its row with the same
values, and detecting regressions again over the same data matches the stored findings
instead of adding new ones.
"""

from __future__ import annotations

import itertools
import json
import logging
import statistics
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from analysis import changes
from analysis.choices import Diagnosis, FindingKind, FindingMetric, FindingState, RttModeVerdict
from analysis.diagnosis import NEAR_FRACTION, RunDiagnosis, advise, capacity_plan, diagnose
from analysis.models import ANALYSIS_VERSION, Finding, RunAnalysis, SweepModes
from analysis.modes import (
    CurrentModes,
    FlowRtts,
    ModeAnalysis,
    ModeVerdict,
    SweepSummary,
    current_modes,
    per_flow_modes,
    pooled_dip_candidate,
    time_separated_modes,
)
from analysis.runs import IntervalRow, IntervalStats, RunCeilings, RunFacts, interval_stats, run_ceilings
from analysis.tuning import HostTuning
from inventory.models import Agent, HostFactsSnapshot
from measurements.choices import RunStatus, TestType
from measurements.models import FlowSample, PingSample, Run, ThroughputInterval, TracePath
from meshes.services import mesh_pairs

logger = logging.getLogger(__name__)

# Loss and RTT around a run come from the pings of this period before it.
LOSS_LOOKBACK = timedelta(hours=6)
# RTT modes of a run: the newest flow sweep of the path at most this long before it.
MODES_LOOKBACK = timedelta(hours=24)
# The incremental task looks this far back for runs without analysis.
INCREMENTAL_LOOKBACK = timedelta(days=2)
# Paths with results received this recently get their regression rules re-run.
NEW_DATA_WINDOW = timedelta(minutes=2)
# Regression rules see this much throughput history (the slow rule's window is 50 runs).
THROUGHPUT_HISTORY = timedelta(days=120)
TRACE_HISTORY = timedelta(days=14)
# Host facts reported within this long after a run still describe it (an agent reports
# its facts right after start, before its first results upload).
FACTS_GRACE = timedelta(hours=1)
TUNING_KEYS = ("sysctls", "kernel", "iperf3_version", "interfaces")


def _number(mapping: dict[str, Any], key: str) -> float | None:
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _positive_int(mapping: dict[str, Any], key: str) -> int | None:
    value = _number(mapping, key)
    return int(value) if value is not None and value > 0 else None


@dataclass(frozen=True)
class FactsAt:
    facts: dict[str, Any] | None
    source: str


def host_facts_at(agent: Agent, when: datetime) -> FactsAt:
    """The facts the agent reported last before `when` (its tuning at that moment); failing
    that, the first ones it reported within FACTS_GRACE after (an agent that has just
    started). Never later ones: a retune after the run must not rewrite its ceilings."""
    before = HostFactsSnapshot.objects.filter(agent=agent, collected_at__lte=when).order_by("-collected_at").first()
    if before is not None:
        return FactsAt(_dict(before.facts), f"host facts of {before.collected_at:%Y-%m-%d %H:%M:%S}")
    after = (
        HostFactsSnapshot.objects.filter(agent=agent, collected_at__gt=when, collected_at__lte=when + FACTS_GRACE)
        .order_by("collected_at")
        .first()
    )
    if after is not None:
        return FactsAt(_dict(after.facts), f"first host facts, of {after.collected_at:%Y-%m-%d %H:%M:%S}")
    return FactsAt(None, "no host facts reported before the run")


@dataclass(frozen=True)
class PathLoss:
    fraction: float | None
    sent: int
    lost: int
    min_rtt_ms: float | None
    source: str


# Per ping run: packets that could have been answered (no ICMP error, no duplicate) and lost.
PING_LOSS_SQL = """
SELECT sum(sent) FILTER (WHERE lost < sent), sum(lost) FILTER (WHERE lost < sent),
       count(*) FILTER (WHERE lost = sent AND sent > 0), min(min_rtt)
FROM (
    SELECT run_id,
           count(*) FILTER (WHERE NOT duplicate AND error = '') AS sent,
           count(*) FILTER (WHERE NOT duplicate AND error = '' AND rtt_ms IS NULL) AS lost,
           min(rtt_ms) AS min_rtt
    FROM measurements_pingsample
    WHERE ((agent_id = %(a)s AND peer_id = %(b)s) OR (agent_id = %(b)s AND peer_id = %(a)s))
      AND time >= %(start)s AND time < %(end)s
    GROUP BY run_id
) AS runs
"""
# Fewer pings than this give no loss rate worth a ceiling (1 lost of 10 is not p = 0.1).
MIN_LOSS_SAMPLES = 100


def path_loss(a: uuid.UUID, b: uuid.UUID, start: datetime, end: datetime) -> PathLoss:
    """Random loss and minimum RTT between two agents from pings (either direction: both are
    round trips). A ping run that lost every packet is an outage, not random loss, and ICMP
    errors are not losses; both are left out."""
    with connection.cursor() as cursor:
        cursor.execute(PING_LOSS_SQL, {"a": a, "b": b, "start": start, "end": end})
        sent, lost, outages, min_rtt = cursor.fetchone() or (None, None, 0, None)
    sent, lost = int(sent or 0), int(lost or 0)
    outage_note = f"; {outages} ping runs lost entirely (outages) left out" if outages else ""
    if sent < MIN_LOSS_SAMPLES:
        return PathLoss(None, sent, lost, min_rtt, f"only {sent} pings in the 6 h before: too few for a loss rate")
    return PathLoss(lost / sent, sent, lost, min_rtt, f"ping: {lost} of {sent} lost in the 6 h before{outage_note}")


def sweep_modes_near(source: Agent, destination: Agent, when: datetime) -> SweepModes | None:
    """The flow-sweep modes that stood on the path at `when` (or, failing that, on the reverse
    path): the rule of `current_modes` over the sweeps of the day before."""
    # Only sweeps that started before: a later one would make a recompute differ from the first.
    for src, dst in ((source, destination), (destination, source)):
        chosen = path_current_modes([src.pk], [dst.pk], when - MODES_LOOKBACK, when).get((src.pk, dst.pk))
        if chosen is not None and chosen.sweep is not None:
            return SweepModes.objects.filter(run_id=chosen.sweep.key).first()
    return None


# Each path's decided sweeps in a time range, newest last, with when each ended. The newest
# CURRENT_MODES_SWEEPS per path are enough for the hold rule and bound the work.
SWEEP_SUMMARIES_SQL = """
SELECT source_id, destination_id, run_id, started_at, ended_at, verdict, modes, flows_used FROM (
  SELECT s.source_id, s.destination_id, s.run_id, s.started_at, r.ended_at, s.verdict,
         (s.analysis->'modes')::text AS modes, (s.analysis->>'flows_used')::int AS flows_used,
         row_number() OVER (PARTITION BY s.source_id, s.destination_id ORDER BY s.started_at DESC) AS newest
  FROM analysis_sweepmodes s
  LEFT JOIN measurements_run r ON r.id = s.run_id AND r.started_at = s.started_at
  WHERE s.source_id = ANY(%(sources)s) AND s.destination_id = ANY(%(destinations)s)
    AND s.started_at >= %(since)s AND s.started_at <= %(until)s AND s.verdict <> %(insufficient)s
) recent
WHERE newest <= %(limit)s
ORDER BY started_at
"""
# Throughput runs are few (one per path every few hours) and last minutes (at most 300 s plus
# omit and margin): fetching those of the agents in one go is cheaper than a lookup per sweep.
THROUGHPUT_SPANS_SQL = """
SELECT agent_id, peer_id, started_at, ended_at FROM measurements_run
WHERE test_type = %(throughput)s AND started_at >= %(since)s AND started_at <= %(until)s
  AND (agent_id = ANY(%(ids)s) OR peer_id = ANY(%(ids)s))
"""
THROUGHPUT_SPAN_BOUND = timedelta(hours=1)
CURRENT_MODES_SWEEPS = 100


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


def path_current_modes(
    sources: Sequence[uuid.UUID], destinations: Sequence[uuid.UUID], since: datetime, until: datetime
) -> dict[tuple[uuid.UUID, uuid.UUID], CurrentModes]:
    """`current_modes` for every source -> destination pair with a decided sweep in the range,
    in two queries."""
    ids = sorted({*sources, *destinations})
    with connection.cursor() as cursor:
        cursor.execute(
            SWEEP_SUMMARIES_SQL,
            {
                "sources": list(sources),
                "destinations": list(destinations),
                "since": since,
                "until": until,
                "insufficient": RttModeVerdict.INSUFFICIENT.value,
                "limit": CURRENT_MODES_SWEEPS,
            },
        )
        rows = cursor.fetchall()
        cursor.execute(
            THROUGHPUT_SPANS_SQL,
            {
                "throughput": TestType.THROUGHPUT.value,
                "since": since - THROUGHPUT_SPAN_BOUND,
                "until": until,
                "ids": ids,
            },
        )
        busy: dict[uuid.UUID, list[tuple[datetime, datetime]]] = defaultdict(list)
        for agent_id, peer_id, started_at, ended_at in cursor.fetchall():
            for agent in {agent_id, peer_id} - {None}:
                busy[agent].append((started_at, ended_at))
    by_path: dict[tuple[uuid.UUID, uuid.UUID], list[SweepSummary]] = defaultdict(list)
    for source_id, destination_id, run_id, started_at, ended_at, verdict, modes, flows_used in rows:
        # A throughput run of either agent during the sweep queues its probes (or their echo
        # replies) and blurs the modes.
        end = ended_at or started_at
        disturbed = any(
            begin < end and finish > started_at
            for agent in (source_id, destination_id)
            for begin, finish in busy.get(agent, ())
        )
        summary = SweepSummary(
            str(run_id), started_at, ModeVerdict(verdict), _mode_pairs(modes), int(flows_used or 0), disturbed
        )
        by_path[(source_id, destination_id)].append(summary)
    return {path: current_modes(summaries) for path, summaries in by_path.items()}


def _interval_rows(run: Run) -> list[IntervalRow]:
    rows = ThroughputInterval.objects.filter(
        run_id=run.id, time__gte=run.started_at, time__lte=run.ended_at + timedelta(minutes=10)
    ).order_by("interval_index")
    return [
        IntervalRow(
            stream=row.stream,
            start_s=row.start_s,
            end_s=row.end_s,
            omitted=row.omitted,
            sender=row.sender,
            bytes=row.bytes,
            bits_per_s=row.bits_per_s,
            retransmits=row.retransmits,
            snd_cwnd_bytes=row.snd_cwnd_bytes,
            snd_wnd_bytes=row.snd_wnd_bytes,
            rtt_us=row.rtt_us,
            pmtu=row.pmtu,
        )
        for row in rows
    ]


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def is_reverse(run: Run) -> bool:
    return _dict(run.summary).get("reverse") is True or _dict(run.params).get("reverse") is True


def is_udp(run: Run) -> bool:
    protocol = _dict(run.summary).get("protocol")
    return _dict(run.params).get("udp") is True or (isinstance(protocol, str) and protocol.upper() == "UDP")


def data_direction(run: Run, agents: dict[uuid.UUID, Agent]) -> tuple[Agent, Agent] | None:
    """(sender, receiver) of a throughput run: iperf3 -R makes the peer send."""
    if run.peer_id is None or run.agent_id not in agents or run.peer_id not in agents:
        return None
    client, server = agents[run.agent_id], agents[run.peer_id]
    return (server, client) if is_reverse(run) else (client, server)


def options_key(facts: RunFacts) -> str:
    """Runs comparable in a regression series: same streams, -w and congestion control."""
    return f"P{facts.streams}/w{facts.window_request_bytes or 0}/{facts.congestion_control or 'default'}"


@dataclass(frozen=True)
class RunInputs:
    facts: RunFacts
    sources: dict[str, str]


def _inflight_bytes(stats: IntervalStats | None, rtt_us: float | None, streams: int) -> float | None:
    """Bytes in flight per stream (windows and buffers are per socket)."""
    if stats is None or not stats.steady_rate_bps or not rtt_us or rtt_us <= 0:
        return None
    return stats.steady_rate_bps * rtt_us / 1e6 / 8 / max(streams, 1)


def run_inputs(run: Run, sender: Agent, receiver: Agent, at: datetime, stats: IntervalStats | None) -> RunInputs:
    """What one run's ceilings rest on, looked up as of `at` (the run's start, or now)."""
    sender_facts, receiver_facts = host_facts_at(sender, at), host_facts_at(receiver, at)
    loss = path_loss(sender.pk, receiver.pk, at - LOSS_LOOKBACK, at)
    modes = sweep_modes_near(sender, receiver, at)
    mode_rtts = tuple(mode["rtt_ms"] for mode in (modes.analysis.get("modes") or [])) if modes else ()
    summary, params = _dict(run.summary), _dict(run.params)
    streams = _positive_int(summary, "streams") or _positive_int(params, "parallel") or 1
    sender_tuning = HostTuning.from_facts(sender_facts.facts, sender.address)
    congestion = next(
        (
            value
            for value in (summary.get("sender_congestion"), params.get("congestion"), sender_tuning.congestion_control)
            if isinstance(value, str) and value
        ),
        None,
    )
    client_sends = not is_reverse(run)
    min_rtt_us, mean_rtt_us = _number(summary, "min_rtt_us"), _number(summary, "mean_rtt_us")
    path_min = [value for value in (loss.min_rtt_ms, modes.base_rtt_ms if modes else None) if value]
    facts = RunFacts(
        streams=streams,
        sender=sender_tuning,
        receiver=HostTuning.from_facts(receiver_facts.facts, receiver.address),
        window_request_bytes=_positive_int(params, "window_bytes"),
        congestion_control=congestion,
        mss_request_bytes=_positive_int(params, "mss"),
        pmtu_bytes=stats.pmtu_bytes if stats else None,
        run_min_rtt_ms=min_rtt_us / 1000 if min_rtt_us and min_rtt_us > 0 else None,
        run_mean_rtt_ms=mean_rtt_us / 1000 if mean_rtt_us and mean_rtt_us > 0 else None,
        path_min_rtt_ms=min(path_min) if path_min else None,
        mode_rtts_ms=mode_rtts if modes and modes.verdict == RttModeVerdict.ECMP else (),
        loss_fraction=loss.fraction,
        loss_source=loss.source,
        max_snd_wnd_bytes=_positive_int(summary, "max_snd_wnd"),
        inflight_bytes=_inflight_bytes(stats, mean_rtt_us or min_rtt_us, streams),
        # iperf3 reports the client's socket buffers: the sender's with a forward run.
        sndbuf_actual_bytes=_positive_int(summary, "sndbuf_actual") if client_sends else None,
        rcvbuf_actual_bytes=None if client_sends else _positive_int(summary, "rcvbuf_actual"),
    )
    sources = {
        "sender_facts": sender_facts.source,
        "receiver_facts": receiver_facts.source,
        "loss": loss.source,
        "modes": f"flow sweep {modes.run_id} ({modes.verdict})" if modes else "no flow sweep in the 24 h before",
    }
    return RunInputs(facts, sources)


def _inputs_json(inputs: RunInputs) -> dict[str, Any]:
    facts = inputs.facts
    return {
        "streams": facts.streams,
        "sender": facts.sender.to_dict(),
        "receiver": facts.receiver.to_dict(),
        "window_request_bytes": facts.window_request_bytes,
        "congestion_control": facts.congestion_control,
        "mss_bytes": facts.mss_bytes,
        "mtu_bytes": facts.mtu_bytes,
        "link_rate_bps": facts.link_rate_bps,
        "run_min_rtt_ms": facts.run_min_rtt_ms,
        "run_mean_rtt_ms": facts.run_mean_rtt_ms,
        "path_min_rtt_ms": facts.path_min_rtt_ms,
        "mode_rtts_ms": list(facts.mode_rtts_ms),
        "loss_fraction": facts.loss_fraction,
        "loss_source": facts.loss_source,
        "max_snd_wnd_bytes": facts.max_snd_wnd_bytes,
        "sources": inputs.sources,
    }


def analyze_throughput_run(run: Run, agents: dict[uuid.UUID, Agent] | None = None) -> RunAnalysis | None:
    """Ceilings and diagnosis of one OK TCP throughput run, stored (overwritten) by run id.

    UDP runs are skipped: TCP's ceilings do not apply and their paced rate would read as a
    throughput regression.
    """
    if run.test_type != TestType.THROUGHPUT or run.status != RunStatus.OK or is_udp(run):
        return None
    if agents is None:
        agents = Agent.objects.in_bulk([run.agent_id, *([run.peer_id] if run.peer_id else [])])
    direction = data_direction(run, agents)
    if direction is None:
        return None
    sender, receiver = direction
    summary = _dict(run.summary)
    rows = _interval_rows(run)
    # The rate and path MTU do not depend on the MSS; the retransmit rate does.
    inputs = run_inputs(run, sender, receiver, run.started_at, interval_stats(rows, None))
    stats = with_summary_retransmits(interval_stats(rows, inputs.facts.mss_bytes), summary, inputs.facts.mss_bytes)
    rate = stats.steady_rate_bps or _number(summary, "receiver_bits_per_s")
    ceilings = run_ceilings(inputs.facts)
    loss_term = ceilings.at_min_rtt.ceilings.loss
    if rate and loss_term.rate_bps is not None and rate > (1 + NEAR_FRACTION) * loss_term.rate_bps:
        # The run beat the loss ceiling: the ping loss was not random loss on this flow's path.
        note = f"{inputs.facts.loss_source}, contradicted by the measured rate (not random loss on this path)"
        inputs = RunInputs(replace(inputs.facts, loss_fraction=None, loss_source=note), inputs.sources)
        ceilings = run_ceilings(inputs.facts)
    diagnosis = diagnose(ceilings, stats, inputs.facts, rate)
    version = summary.get("iperf3_version")
    analysis, _ = RunAnalysis.objects.update_or_create(
        run_id=run.id,
        defaults={
            "started_at": run.started_at,
            "source": sender,
            "destination": receiver,
            "streams": inputs.facts.streams,
            "options_key": options_key(inputs.facts),
            "rate_bps": diagnosis.rate_bps,
            "ceiling_bps": diagnosis.ceiling_bps,
            "limit": ceilings.at_min_rtt.limit.value,
            "diagnosis": diagnosis.label.value,
            "ceilings": ceilings.to_dict(),
            "inputs": _inputs_json(inputs),
            "interval_stats": stats.to_dict(),
            "evidence": diagnosis.to_dict(),
            "iperf3_version": version if isinstance(version, str) else "",
            "analysis_version": ANALYSIS_VERSION,
            "computed_at": timezone.now(),
        },
    )
    return analysis


def with_summary_retransmits(stats: IntervalStats, summary: dict[str, Any], mss_bytes: int | None) -> IntervalStats:
    """Reverse runs have only the receiver's intervals (no TCP_INFO): take the retransmits
    from iperf3's end summary instead."""
    if stats.retransmits is not None:
        return stats
    retransmits = _number(summary, "retransmits")
    sent_bytes = _number(summary, "sender_bytes")
    if retransmits is None or retransmits < 0:
        return stats
    rate = retransmits / (sent_bytes / mss_bytes) if sent_bytes and mss_bytes else None
    return replace(stats, retransmits=int(retransmits), retransmit_rate=rate)


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
    if run.test_type != TestType.FLOWSWEEP or run.status != RunStatus.OK or run.peer_id is None:
        return None
    if agents is None:
        agents = Agent.objects.in_bulk([run.agent_id, run.peer_id])
    if run.agent_id not in agents or run.peer_id not in agents:
        return None
    # probes-and-detection.md: 16 flows x 10 samples; a few lost samples may be missing.
    result: ModeAnalysis = per_flow_modes(flow_rtts(run), min_flows=12, min_samples_per_flow=8)
    base = min((mode.min_rtt_ms for mode in result.modes), default=None)
    sweep, _ = SweepModes.objects.update_or_create(
        run_id=run.id,
        defaults={
            "started_at": run.started_at,
            "source": agents[run.agent_id],
            "destination": agents[run.peer_id],
            "verdict": result.verdict.value,
            "base_rtt_ms": base,
            "mode_count": len(result.modes),
            "analysis": result.to_dict(),
            "analysis_version": ANALYSIS_VERSION,
            "computed_at": timezone.now(),
        },
    )
    return sweep


@dataclass(frozen=True)
class Progress:
    throughput_runs: int = 0
    sweeps: int = 0
    paths: int = 0
    findings_opened: int = 0


def _runs_in(start: datetime, end: datetime, only_missing: bool, ended_before: datetime | None = None) -> list[Run]:
    runs = Run.objects.filter(
        started_at__gte=start,
        started_at__lt=end,
        ended_at__lte=ended_before or end + timedelta(days=1),
        status=RunStatus.OK,
        test_type__in=[TestType.THROUGHPUT, TestType.FLOWSWEEP],
        peer_id__isnull=False,
    ).order_by("started_at")
    if only_missing:
        done = set(
            RunAnalysis.objects.filter(started_at__gte=start, analysis_version=ANALYSIS_VERSION).values_list(
                "run_id", flat=True
            )
        )
        done |= set(
            SweepModes.objects.filter(started_at__gte=start, analysis_version=ANALYSIS_VERSION).values_list(
                "run_id", flat=True
            )
        )
        return [run for run in runs if run.id not in done]
    return list(runs)


def analyze_range(
    start: datetime, end: datetime, *, only_missing: bool, now: datetime | None = None, settled: bool = False
) -> Progress:
    """Analyses the runs in [start, end) (sweeps first: run ceilings use their modes), then
    re-detects regressions on every path that had one. With `settled`, only runs that ended
    FATHOM_ANALYSIS_SETTLE_S ago: the other agent's pings and sweeps from before them have landed by then,
    so a later recompute finds the same inputs."""
    settle = timedelta(seconds=settings.ANALYSIS_SETTLE_S)
    ended_before = (now or timezone.now()) - settle if settled else None
    runs = _runs_in(start, end, only_missing, ended_before)
    agents = Agent.objects.in_bulk()
    sweeps = [run for run in runs if run.test_type == TestType.FLOWSWEEP]
    throughput = [run for run in runs if run.test_type == TestType.THROUGHPUT]
    for run in sweeps:
        _guarded(f"flow sweep {run.id}", partial(analyze_sweep, run, agents))
    analysed = [
        result
        for run in throughput
        if (result := _guarded(f"throughput run {run.id}", partial(analyze_throughput_run, run, agents))) is not None
    ]
    paths: set[tuple[uuid.UUID, uuid.UUID]] = {(run.agent_id, run.peer_id) for run in runs if run.peer_id}
    paths |= {(result.source_id, result.destination_id) for result in analysed}
    paths |= recently_received_paths((now or timezone.now()) - NEW_DATA_WINDOW)
    opened = 0
    for source_id, destination_id in sorted(paths):
        if source_id in agents and destination_id in agents:
            source, destination = agents[source_id], agents[destination_id]
            work = partial(detect_findings, source, destination, now=now)
            opened += _guarded(f"path {source} -> {destination}", work) or 0
    return Progress(len(throughput), len(sweeps), len(paths), opened)


T = TypeVar("T")


def _guarded(what: str, work: Callable[[], T]) -> T | None:
    """One bad run or path must not stop the task for every other (nor forever: it is
    logged, and the next run of the task tries again)."""
    try:
        with transaction.atomic():
            return work()
    except Exception:  # logged with its traceback; the rest must go on
        logger.exception("analysis of %s failed", what)
        return None


def recently_received_paths(since: datetime) -> set[tuple[uuid.UUID, uuid.UUID]]:
    """Paths with results received since a moment: the ones whose rules may now say more."""
    rows = (
        Run.objects.filter(started_at__gte=since - timedelta(hours=1), received_at__gte=since, peer_id__isnull=False)
        .values_list("agent_id", "peer_id")
        .distinct()
    )
    return {(source, destination) for source, destination in rows if destination is not None}


def analyze_recent(now: datetime | None = None) -> Progress:
    """The incremental task: runs of the last two days without a current analysis."""
    now = now or timezone.now()
    return analyze_range(
        now - INCREMENTAL_LOOKBACK, now + timedelta(minutes=5), only_missing=True, now=now, settled=True
    )


# --- Regressions ------------------------------------------------------------------------

RTT_WINDOWS_SQL = """
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL),
       min(rtt_ms) FILTER (WHERE NOT duplicate),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate)
FROM measurements_pingsample
WHERE agent_id = %(source)s AND peer_id = %(destination)s AND time >= %(start)s AND time < %(end)s
GROUP BY bucket
ORDER BY bucket
"""


def rtt_windows(source: Agent, destination: Agent, start: datetime, end: datetime) -> list[changes.RttWindow]:
    """Ping samples of a path in fixed windows (only complete ones: the newest may still fill,
    and the first starts on a window boundary so it is not a partial one)."""
    width = settings.ANALYSIS_RTT_WINDOW_S
    start = datetime.fromtimestamp(-(-start.timestamp() // width) * width, tz=start.tzinfo)
    with connection.cursor() as cursor:
        cursor.execute(
            RTT_WINDOWS_SQL,
            {"width": width, "source": source.pk, "destination": destination.pk, "start": start, "end": end},
        )
        rows = cursor.fetchall()
    step = timedelta(seconds=width)
    return [
        changes.RttWindow(
            start=bucket, end=bucket + step, sent=sent, lost=lost, min_ms=min_ms, p50_ms=p50_ms, p90_ms=p90_ms
        )
        for bucket, sent, lost, min_ms, p50_ms, p90_ms in rows
        if bucket + step <= end and sent
    ]


def trace_route_sets(source: Agent, destination: Agent, since: datetime) -> list[tuple[datetime, frozenset[str]]]:
    """Per trace run, the fingerprints of the flows that reached the destination."""
    rows = TracePath.objects.filter(
        agent_id=source.pk, peer_id=destination.pk, time__gte=since, reached=True
    ).values_list("time", "run_id", "fingerprint")
    by_run: dict[uuid.UUID, tuple[datetime, set[str]]] = {}
    for time, run_id, fingerprint in rows:
        by_run.setdefault(run_id, (time, set()))[1].add(fingerprint)
    return sorted((time, frozenset(prints)) for time, prints in by_run.values())


def path_episodes(source: Agent, destination: Agent, now: datetime) -> dict[FindingMetric, list[changes.Episode]]:
    """Every rule over the path's history: what the stored findings must match."""
    history = RunAnalysis.objects.filter(
        source=source, destination=destination, started_at__gte=now - THROUGHPUT_HISTORY, rate_bps__isnull=False
    ).order_by("started_at")
    series: dict[str, list[changes.Point]] = defaultdict(list)
    for row in history:
        if row.rate_bps:
            series[row.options_key].append(changes.Point(row.started_at, row.rate_bps))
    # One series per option set: 1 stream and 8 streams are different levels, not a change.
    throughput = [
        episode
        for points in series.values()
        for episode in (*changes.throughput_fast_rule(points), *changes.throughput_slow_rule(points))
    ]
    baseline = timedelta(seconds=settings.ANALYSIS_RTT_BASELINE_S)
    windows = rtt_windows(source, destination, now - 2 * baseline, now)
    rtt = changes.rtt_cusum(windows, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
    loss = changes.loss_rule(windows, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
    route = changes.route_changes(trace_route_sets(source, destination, now - TRACE_HISTORY))
    return {
        FindingMetric.THROUGHPUT: throughput,
        FindingMetric.RTT: rtt,
        FindingMetric.LOSS: loss,
        FindingMetric.ROUTE: route,
    }


UNITS = {
    FindingMetric.THROUGHPUT: "relative",
    FindingMetric.RTT: "ms",
    FindingMetric.LOSS: "pp",
    FindingMetric.ROUTE: "paths",
}


@dataclass
class MergedEpisode:
    """Episodes of one metric whose periods overlap: one incident, several rules."""

    first: changes.Episode
    rules: list[str]
    cleared_at: datetime | None

    @property
    def started_at(self) -> datetime:
        return self.first.started_at


def merge_episodes(episodes: Iterable[changes.Episode]) -> list[MergedEpisode]:
    merged: list[MergedEpisode] = []
    for episode in sorted(episodes, key=lambda item: (item.started_at, item.detected_at)):
        last = merged[-1] if merged else None
        if last is not None and (last.cleared_at is None or episode.started_at <= last.cleared_at):
            if episode.rule not in last.rules:
                last.rules.append(episode.rule)
            if last.cleared_at is not None:
                last.cleared_at = None if episode.cleared_at is None else max(last.cleared_at, episode.cleared_at)
            continue
        merged.append(MergedEpisode(episode, [episode.rule], episode.cleared_at))
    return merged


def _facts_change(agent: Agent, start: datetime, end: datetime) -> str:
    """What of an agent's tuning changed between two moments, as a sentence ('' if nothing)."""
    snapshots = list(
        HostFactsSnapshot.objects.filter(agent=agent, collected_at__lte=end).order_by("-collected_at")[:50]
    )
    snapshots.reverse()
    for before, after in itertools.pairwise(snapshots):
        if not start < after.collected_at <= end:
            continue
        old_facts, new_facts = _dict(before.facts), _dict(after.facts)
        changed = [key for key in TUNING_KEYS if old_facts.get(key) != new_facts.get(key)]
        if "sysctls" in changed:
            old, new = _dict(old_facts.get("sysctls")), _dict(new_facts.get("sysctls"))
            keys = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
            changed = [key for key in changed if key != "sysctls"] + keys
        if changed:
            return f"{agent.name}'s host changed at {after.collected_at:%Y-%m-%d %H:%M}: {', '.join(changed)}"
    return ""


def coinciding_change(source: Agent, destination: Agent, episode: MergedEpisode, metric: FindingMetric) -> str:
    """A tuning or iperf3 change that explains a throughput step: then it is an annotation."""
    if metric != FindingMetric.THROUGHPUT:
        return ""
    before = (
        RunAnalysis.objects.filter(source=source, destination=destination, started_at__lt=episode.started_at)
        .order_by("-started_at")
        .first()
    )
    start = before.started_at if before else episode.started_at - timedelta(days=1)
    end = episode.first.detected_at
    notes = [note for agent in (source, destination) if (note := _facts_change(agent, start, end))]
    after = (
        RunAnalysis.objects.filter(source=source, destination=destination, started_at__gte=episode.started_at)
        .order_by("started_at")
        .first()
    )
    if before and after and before.iperf3_version and after.iperf3_version != before.iperf3_version:
        notes.append(f"iperf3 changed from {before.iperf3_version} to {after.iperf3_version}")
    return "; ".join(notes)


def _finding_fields(episode: MergedEpisode, metric: FindingMetric, annotation: str) -> dict[str, Any]:
    first = episode.first
    return {
        "rules": episode.rules,
        "kind": FindingKind.ANNOTATION if annotation else FindingKind.ALARM,
        "state": FindingState.CLEARED if episode.cleared_at else FindingState.OPEN,
        "started_at": first.started_at,
        "detected_at": first.detected_at,
        "cleared_at": episode.cleared_at,
        "direction": first.direction.value,
        "baseline": first.baseline,
        "current": first.current,
        "magnitude": first.magnitude,
        "unit": UNITS[metric],
        "evidence": first.evidence,
        "annotation": annotation,
    }


def _overlaps(finding: Finding, episode: MergedEpisode) -> bool:
    return (episode.cleared_at is None or finding.started_at <= episode.cleared_at) and (
        finding.cleared_at is None or episode.started_at <= finding.cleared_at
    )


def _overlap_s(finding: Finding, episode: MergedEpisode) -> float:
    far = datetime.max.replace(tzinfo=UTC)
    start = max(finding.started_at, episode.started_at)
    end = min(finding.cleared_at or far, episode.cleared_at or far)
    return (end - start).total_seconds() if end != far else float("inf")


def reconcile_findings(
    source: Agent, destination: Agent, metric: FindingMetric, episodes: Sequence[changes.Episode], now: datetime
) -> int:
    """Makes the stored findings of one path and metric match the rules' episodes.

    A stored finding is matched by overlapping periods, so a start estimate that moves as
    data arrives updates the finding rather than adding one. An open finding no rule still
    sees is cleared. Returns how many findings were opened.
    """
    merged = merge_episodes(episodes)
    opened = 0
    existing = list(Finding.objects.filter(source=source, destination=destination, metric=metric))
    matched: set[int] = set()
    plans: list[tuple[Finding | None, dict[str, Any]]] = []
    for episode in merged:
        candidates = [finding for finding in existing if finding.pk not in matched and _overlaps(finding, episode)]
        # The same start first, then the longest overlap: a start estimate that moved still
        # finds its finding, and two findings never end up with one start.
        candidates.sort(key=lambda finding: (finding.started_at != episode.started_at, -_overlap_s(finding, episode)))
        match = candidates[0] if candidates else None
        if match is not None:
            matched.add(match.pk)
            # Findings the merged episode also covers are folded into it.
            for extra in candidates[1:]:
                matched.add(extra.pk)
                extra.delete()
        fields = _finding_fields(episode, metric, coinciding_change(source, destination, episode, metric))
        plans.append((match, fields))
    # Close stale open findings first: at most one may be open per path and metric.
    for finding in existing:
        if finding.pk not in matched and finding.state == FindingState.OPEN:
            cleared = max(now, finding.started_at)
            finding.state, finding.cleared_at, finding.updated_at = FindingState.CLEARED, cleared, now
            finding.evidence = {**finding.evidence, "cleared": "no rule confirms it on the current data"}
            finding.save(update_fields=["state", "cleared_at", "updated_at", "evidence"])
    for match, fields in sorted(plans, key=lambda plan: plan[1]["state"] == FindingState.OPEN):
        if match is None:
            Finding.objects.create(source=source, destination=destination, metric=metric, **fields)
            opened += fields["state"] == FindingState.OPEN
            continue
        if any(getattr(match, key) != value for key, value in fields.items()):
            for key, value in fields.items():
                setattr(match, key, value)
            match.updated_at = now
            match.save()
    return opened


def detect_findings(source: Agent, destination: Agent, now: datetime | None = None) -> int:
    """Runs every rule on one path and stores the result; returns findings newly opened.

    The rules run under the path's lock and on data up to the moment the lock is held, so
    the task and a recompute cannot store findings from different views of the data.
    """
    opened = 0
    with transaction.atomic():
        with connection.cursor() as cursor:
            key = f"findings:{source.pk}:{destination.pk}"
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
        now = now or timezone.now()
        episodes = path_episodes(source, destination, now)
        for metric, found in episodes.items():
            opened += reconcile_findings(source, destination, metric, found, now)
    return opened


# --- Reports ----------------------------------------------------------------------------


def ceilings_now(source: Agent, destination: Agent, latest: RunAnalysis) -> tuple[RunCeilings, RunInputs, Run] | None:
    """The path's ceilings with today's tuning, RTT modes and loss, for the options of its
    newest analysed throughput run (stream count, -w)."""
    run = Run.objects.filter(id=latest.run_id, started_at=latest.started_at).first()
    if run is None:
        return None
    inputs = run_inputs(run, source, destination, timezone.now(), interval_stats(_interval_rows(run), None))
    # Today's ceilings rest on the path's RTT, not on one old flow's.
    facts = inputs.facts
    path_facts = replace(facts, run_min_rtt_ms=facts.path_min_rtt_ms or facts.run_min_rtt_ms, run_mean_rtt_ms=None)
    return run_ceilings(path_facts), RunInputs(path_facts, inputs.sources), run


def _trace_paths_by_rtt(source: Agent, destination: Agent, since: datetime) -> list[tuple[float, list[str]]]:
    """(median RTT at the destination, router addresses) per distinct reached trace path."""
    rows = TracePath.objects.filter(
        agent_id=source.pk, peer_id=destination.pk, time__gte=since, reached=True
    ).values_list("fingerprint", "hops")
    by_print: dict[str, tuple[list[str], list[float]]] = {}
    for fingerprint, hops in rows:
        if not isinstance(hops, list) or not hops:
            continue
        addresses = [
            next((probe.get("address") for probe in hop.get("probes") or [] if probe.get("address")), "*")
            for hop in hops
            if isinstance(hop, dict)
        ]
        last = hops[-1] if isinstance(hops[-1], dict) else {}
        rtts = [probe["rtt_ms"] for probe in last.get("probes") or [] if isinstance(probe.get("rtt_ms"), int | float)]
        entry = by_print.setdefault(fingerprint, (addresses, []))
        entry[1].extend(rtts)
    return [(statistics.median(rtts), addresses) for addresses, rtts in by_print.values() if rtts]


def path_modes_report(source: Agent, destination: Agent, ceilings: RunCeilings | None) -> dict[str, Any]:
    """RTT modes now (the newest sweep no throughput run disturbed), how often sweeps saw
    ECMP, ping dip candidates and modes that separate in time."""
    now = timezone.now()
    since = now - MODES_LOOKBACK
    sweeps = list(
        SweepModes.objects.filter(source=source, destination=destination, started_at__gte=since).order_by("started_at")
    )
    decided = [sweep for sweep in sweeps if sweep.verdict != RttModeVerdict.INSUFFICIENT]
    chosen = path_current_modes([source.pk], [destination.pk], since, now).get((source.pk, destination.pk))
    standing = chosen.sweep.key if chosen is not None and chosen.sweep is not None else None
    latest = next((sweep for sweep in reversed(decided) if str(sweep.run_id) == standing), None)
    traces = _trace_paths_by_rtt(source, destination, since)
    modes: list[dict[str, Any]] = []
    for index, mode in enumerate((latest.analysis.get("modes") or []) if latest else []):
        path = min(traces, key=lambda trace: abs(trace[0] - mode["rtt_ms"]), default=None)
        near = path is not None and abs(path[0] - mode["rtt_ms"]) <= max(1.0, 0.1 * mode["rtt_ms"])
        ceiling = None
        if ceilings is not None and latest is not None and latest.verdict == RttModeVerdict.ECMP:
            per_mode = ceilings.per_mode[index] if index < len(ceilings.per_mode) else None
            ceiling = per_mode.to_dict() if per_mode else None
        modes.append({**mode, "trace_path": path[1] if near and path else None, "ceiling": ceiling})
    pings = (
        PingSample.objects.filter(
            agent_id=source.pk, peer_id=destination.pk, time__gte=since, rtt_ms__isnull=False, duplicate=False
        )
        .order_by("-time")
        .values_list("rtt_ms", flat=True)[:20000]
    )
    dip = pooled_dip_candidate([float(value) for value in pings if value is not None])
    # Only when flows show one mode: levels that then differ follow each other in time.
    bases = [(sweep.started_at, sweep.base_rtt_ms) for sweep in decided if sweep.base_rtt_ms is not None]
    in_time = time_separated_modes(bases if not latest or latest.verdict != RttModeVerdict.ECMP else [])
    return {
        "verdict": latest.verdict if latest else RttModeVerdict.INSUFFICIENT,
        "sweep_run_id": latest.run_id if latest else None,
        "sweep_started_at": latest.started_at if latest else None,
        "reason": latest.analysis.get("reason", "") if latest else "no flow sweep in the last 24 h",
        # Why this sweep's modes stand now (a newer one-mode sweep may not overturn them).
        "choice": chosen.reason if chosen is not None else "",
        "held_by_sweeps": chosen.held_by if chosen is not None else 0,
        "modes": modes,
        "sweeps": len(decided),
        "ecmp_sweeps": sum(1 for sweep in decided if sweep.verdict == RttModeVerdict.ECMP),
        "ping_dip": {"candidate": dip.candidate, "p_value": dip.p_value, "samples": dip.samples, "reason": dip.reason},
        "time_modes": in_time.to_dict(),
    }


def _run_entry(row: RunAnalysis) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "started_at": row.started_at,
        "streams": row.streams,
        "rate_bps": row.rate_bps,
        "ceiling_bps": row.ceiling_bps,
        "fraction_of_ceiling": row.fraction_of_ceiling,
        "limit": row.limit,
        "diagnosis": row.diagnosis,
        "evidence": row.evidence,
        "ceilings": row.ceilings,
        "inputs": row.inputs,
        "interval_stats": row.interval_stats,
        "iperf3_version": row.iperf3_version,
    }


def path_report(
    source: Agent, destination: Agent, *, goal_bps: float | None, daily_volume_bytes: int, runs_limit: int
) -> dict[str, Any]:
    runs = list(RunAnalysis.objects.filter(source=source, destination=destination).order_by("-started_at")[:runs_limit])
    latest = runs[0] if runs else None
    now_ceilings = ceilings_now(source, destination, latest) if latest else None
    ceilings = now_ceilings[0] if now_ceilings else None
    modes = path_modes_report(source, destination, ceilings)
    advice: list[dict[str, Any]] = []
    goal = goal_bps
    if now_ceilings is not None and latest is not None:
        ceilings, inputs, _run = now_ceilings
        goal = goal or inputs.facts.link_rate_bps or float(settings.ANALYSIS_GOAL_BPS)
        # Size for the slowest RTT mode, so the longer ECMP member is covered too.
        mode_rtts = [mode["rtt_ms"] for mode in modes["modes"]] or [ceilings.at_min_rtt.rtt_ms or 0.0]
        diagnosis = RunDiagnosis(
            label=Diagnosis(latest.diagnosis),
            rate_bps=latest.rate_bps,
            ceiling_bps=latest.ceiling_bps,
            winning_term=ceilings.at_min_rtt.limit,
            fraction_of_ceiling=latest.fraction_of_ceiling,
            evidence=(),
        )
        advice = [
            item.to_dict()
            for item in advise(
                diagnosis,
                ceilings,
                inputs.facts,
                sender_name=source.name,
                receiver_name=destination.name,
                goal_bps=goal,
                rtt_ms=max(mode_rtts) or None,
            )
        ]
    findings = (
        Finding.objects.filter(source=source, destination=destination)
        .select_related("source", "destination")
        .order_by("-started_at")[:50]
    )
    return {
        "ceilings_now": (
            {**now_ceilings[0].to_dict(), "inputs": _inputs_json(now_ceilings[1]), "options_of_run": now_ceilings[2].id}
            if now_ceilings
            else None
        ),
        "runs": [_run_entry(row) for row in runs],
        "modes": modes,
        "findings": [finding_entry(finding) for finding in findings],
        "goal_bps": goal,
        "advice": advice,
        "capacity_plan": capacity_plan(
            daily_volume_bytes, latest.rate_bps if latest else None, latest.streams if latest else 1
        ).to_dict(),
    }


def finding_entry(finding: Finding) -> dict[str, Any]:
    return {
        "id": finding.pk,
        "source": {"id": finding.source_id, "name": finding.source.name},
        "destination": {"id": finding.destination_id, "name": finding.destination.name},
        "metric": finding.metric,
        "rules": finding.rules,
        "kind": finding.kind,
        "state": finding.state,
        "started_at": finding.started_at,
        "detected_at": finding.detected_at,
        "cleared_at": finding.cleared_at,
        "direction": finding.direction,
        "baseline": finding.baseline,
        "current": finding.current,
        "magnitude": finding.magnitude,
        "unit": finding.unit,
        "evidence": finding.evidence,
        "annotation": finding.annotation,
    }


LATEST_PER_PATH_SQL = """
SELECT DISTINCT ON (source_id, destination_id) source_id, destination_id, {columns}
FROM {table}
WHERE source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s) AND started_at >= %(since)s
ORDER BY source_id, destination_id, started_at DESC
"""

GRID_LOSS_SQL = """
SELECT agent_id, peer_id,
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL)
FROM measurements_pingsample
WHERE agent_id = ANY(%(ids)s) AND peer_id = ANY(%(ids)s) AND time >= %(since)s
GROUP BY agent_id, peer_id
"""


def _latest_per_path(
    table: str, columns: str, ids: list[uuid.UUID], since: datetime
) -> dict[tuple[Any, Any], tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(LATEST_PER_PATH_SQL.format(table=table, columns=columns), {"ids": ids, "since": since})
        return {(row[0], row[1]): row[2:] for row in cursor.fetchall()}


def mesh_grid(mesh: Any) -> dict[str, Any]:
    """For every src -> dst of a mesh: throughput against its ceiling, loss in the last hour,
    RTT mode count and open findings. A fixed number of queries, whatever the mesh size."""
    agents = {agent.pk: agent for agent in Agent.objects.filter(revoked_at__isnull=True)}
    pairs = [(src, dst) for src, dst, _ in mesh_pairs(mesh, agents) if dst is not None]
    ids = sorted({agent.pk for pair in pairs for agent in pair})
    now = timezone.now()
    # The grid shows what is current: a run older than a month or a sweep older than a day is no
    # longer what the path does.
    runs = _latest_per_path(
        RunAnalysis._meta.db_table, "rate_bps, ceiling_bps, diagnosis, started_at", ids, now - timedelta(days=31)
    )
    standing = path_current_modes(ids, ids, now - MODES_LOOKBACK, now)
    with connection.cursor() as cursor:
        cursor.execute(GRID_LOSS_SQL, {"ids": ids, "since": timezone.now() - timedelta(hours=1)})
        loss = {(row[0], row[1]): row[2:] for row in cursor.fetchall()}
    open_counts: dict[tuple[Any, Any], int] = defaultdict(int)
    for source_id, destination_id in Finding.objects.filter(
        state=FindingState.OPEN, kind=FindingKind.ALARM, source_id__in=ids, destination_id__in=ids
    ).values_list("source_id", "destination_id"):
        open_counts[(source_id, destination_id)] += 1
    cells = []
    for src, dst in pairs:
        key = (src.pk, dst.pk)
        rate, ceiling, diagnosis, measured_at = runs.get(key, (None, None, None, None))
        chosen = standing.get(key)
        sweep = chosen.sweep if chosen is not None else None
        mode_count, verdict = (len(sweep.modes), sweep.verdict.value) if sweep is not None else (None, None)
        sent, lost = loss.get(key, (0, 0))
        cells.append(
            {
                "source": {"id": src.pk, "name": src.name},
                "destination": {"id": dst.pk, "name": dst.name},
                "rate_bps": rate,
                "ceiling_bps": ceiling,
                "fraction_of_ceiling": rate / ceiling if rate is not None and ceiling else None,
                "diagnosis": diagnosis,
                "measured_at": measured_at,
                "loss_fraction": lost / sent if sent else None,
                "mode_count": mode_count,
                "rtt_mode_verdict": verdict,
                "open_findings": open_counts.get(key, 0),
            }
        )
    members = sorted({agent for pair in pairs for agent in pair}, key=lambda agent: agent.name)
    return {"mesh": mesh.name, "agents": [{"id": a.pk, "name": a.name} for a in members], "cells": cells}


def purge_expired(now: datetime | None = None) -> int:
    """Drops analyses of runs past the raw-data retention, and findings cleared before it:
    what they describe is gone from the hypertables too."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.RAW_RETENTION_DAYS)
    deleted = RunAnalysis.objects.filter(started_at__lt=cutoff).delete()[0]
    deleted += SweepModes.objects.filter(started_at__lt=cutoff).delete()[0]
    deleted += Finding.objects.filter(state=FindingState.CLEARED, cleared_at__lt=cutoff).delete()[0]
    return deleted
