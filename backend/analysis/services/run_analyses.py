"""Runs analysed and stored: each OK throughput run's ceilings and diagnosis, each flow
sweep's modes, the incremental task over recent runs, and retention.

Every entry point is idempotent: analysing a run again overwrites its row with the same
values, and detecting regressions again over the same data matches the stored findings
instead of adding new ones.
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Min, Q
from django.utils import timezone

from analysis.choices import FindingMetric, FindingState
from analysis.models import ANALYSIS_VERSION, AnalysisPass, Finding, RunAnalysis, StandingModes, SweepModes
from analysis.payloads import checked
from analysis.run_judgement import judge_run
from analysis.runs import RunInputs, options_key
from analysis.services.findings import ALL_METRICS, detect_findings
from analysis.services.inputs import as_dict, data_direction, interval_rows, is_streams_probe, is_udp, surroundings
from analysis.services.ramps import request_policer_ramp
from analysis.services.stream_probes import request_streams_probe
from analysis.services.sweep_modes import analyze_sweep, overlapped_paths, refresh_standing_modes
from inventory.models import Agent
from measurements.choices import RunStatus, TestType
from measurements.models import Run

logger = logging.getLogger(__name__)

# The incremental task looks this far back for runs without analysis.
INCREMENTAL_LOOKBACK = timedelta(days=2)


def new_data_window() -> timedelta:
    """Paths with results received this recently get their regression rules re-run: two of
    the task's intervals (at least 2 min), so a late or skipped run misses no path."""
    return max(timedelta(minutes=2), 2 * timedelta(seconds=settings.ANALYSIS_EVERY_S))


def analyze_throughput_run(run: Run, agents: dict[uuid.UUID, Agent] | None = None) -> RunAnalysis | None:
    """Ceilings and diagnosis of one OK TCP throughput run, stored (overwritten) by run id.

    UDP runs are skipped: TCP's ceilings do not apply and their paced rate would read as a
    throughput regression. So are streams probes: N streams beside the path's single-stream
    runs would read as a jump and vote in its label (services/stream_probes.py reads them).
    """
    if run.test_type != TestType.THROUGHPUT or run.status != RunStatus.OK or is_udp(run) or is_streams_probe(run):
        return None
    if agents is None:
        agents = Agent.objects.in_bulk([run.source_id, *([run.destination_id] if run.destination_id else [])])
    direction = data_direction(run, agents)
    if direction is None:
        return None
    sender, receiver = direction
    summary = as_dict(run.summary)
    around = surroundings(sender, receiver, run.started_at, run.family)
    judged = judge_run(summary, as_dict(run.params), interval_rows(run), around.sender, around.receiver, around.context)
    inputs = RunInputs(judged.facts, around.sources)
    ceilings, stats, diagnosis = judged.ceilings, judged.stats, judged.diagnosis
    version = summary.get("iperf3_version")
    analysis, _ = RunAnalysis.objects.update_or_create(
        run_id=run.id,
        defaults={
            "started_at": run.started_at,
            "source": sender,
            "destination": receiver,
            "family": run.family,
            "streams": inputs.facts.streams,
            "options_key": options_key(inputs.facts),
            "rate_bps": diagnosis.rate_bps,
            "ceiling_bps": diagnosis.ceiling_bps,
            "limit": ceilings.at_min_rtt.limit.value,
            "diagnosis": diagnosis.label.value,
            "ceilings": checked("RunCeilings", ceilings.to_dict()),
            "inputs": checked("RunInputs", inputs.to_dict()),
            "interval_stats": checked("IntervalStats", stats.to_dict()),
            "evidence": checked("RunEvidence", diagnosis.to_dict()),
            "iperf3_version": version if isinstance(version, str) else "",
            "analysis_version": ANALYSIS_VERSION,
            "computed_at": timezone.now(),
        },
    )
    return analysis


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
        destination_id__isnull=False,
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
    # The grid's standing modes of the paths these sweeps and runs may change.
    swept = {(run.source_id, run.destination_id, run.family) for run in sweeps if run.destination_id is not None}
    _guarded(
        "standing modes",
        lambda: refresh_standing_modes(swept | overlapped_paths(throughput), now or timezone.now()),
    )
    # Each path re-runs only the rules its new data can change.
    checks: dict[PathKey, set[FindingMetric]] = defaultdict(set)
    for run in runs:
        if run.destination_id:
            path = (run.source_id, run.destination_id, run.family)
            if not only_missing:  # a recompute of the range: every rule
                checks[path] |= ALL_METRICS
            elif run.test_type == TestType.FLOWSWEEP:
                checks[path] |= METRICS_OF_TEST[TestType.FLOWSWEEP]
                # RTT is judged within the members of the reverse path's sweep where the forward has none.
                checks[(run.destination_id, run.source_id, run.family)].add(FindingMetric.RTT)
    for result in analysed:  # stored in the data's direction (a reverse run is the far end's)
        checks[(result.source_id, result.destination_id, result.family)].add(FindingMetric.THROUGHPUT)
    now = now or timezone.now()
    since = now - new_data_window()
    judged_until = windows_judged_until(since, now) if only_missing else since
    for path, metrics in recently_received_metrics(since, now, judged_until).items():
        checks[path] |= metrics
    opened = 0
    for (source_id, destination_id, family), metrics in sorted(checks.items()):
        if metrics and source_id in agents and destination_id in agents:
            source, destination = agents[source_id], agents[destination_id]
            work = partial(detect_findings, source, destination, now=now, metrics=frozenset(metrics), family=family)
            opened += _guarded(f"path {source} -> {destination} (IPv{family})", work) or 0
    # New runs, not a recompute of history: a policed path may get its ramp, and a single stream
    # far below its ceilings a probe of several (the ramp first: it takes the nearer slot).
    if only_missing:
        paths = sorted({(result.source_id, result.destination_id, result.family) for result in analysed})
        for sender_id, receiver_id, family in paths:
            sender, receiver = agents[sender_id], agents[receiver_id]
            ramp = partial(request_policer_ramp, sender, receiver, now, family)
            _guarded(f"policer ramp {sender} -> {receiver} (IPv{family})", ramp)
            probe = partial(request_streams_probe, sender, receiver, now, family)
            _guarded(f"streams probe {sender} -> {receiver} (IPv{family})", probe)
    return Progress(len(throughput), len(sweeps), len(checks), opened)


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


PathKey = tuple[uuid.UUID, uuid.UUID, int]  # source, destination, family

# The metrics whose rules read each test type's data (a flow sweep's modes also place each
# ping on its ECMP member).
METRICS_OF_TEST: dict[str, frozenset[FindingMetric]] = {
    TestType.PING: frozenset({FindingMetric.RTT, FindingMetric.LOSS}),
    TestType.THROUGHPUT: frozenset({FindingMetric.THROUGHPUT}),
    TestType.FLOWSWEEP: frozenset({FindingMetric.ECMP, FindingMetric.RTT}),
    TestType.TRACE: frozenset({FindingMetric.ROUTE}),
    # A session measures both directions: its path's and the reverse path's (recently_received_metrics).
    TestType.LATENCY: frozenset({FindingMetric.ONE_WAY_DELAY, FindingMetric.ONE_WAY_LOSS}),
}
# Test types read in the RTT rules' windows: new data changes what they find only once a window closes.
WINDOWED_TESTS = frozenset({TestType.PING, TestType.LATENCY})


# A ping stamped received this long before the last pass's moment may have committed after
# that pass read its path (an upload's transaction takes milliseconds, seconds under load):
# it counts as unseen. Longer margins re-judge more paths that straddled the boundary.
COMMIT_MARGIN = timedelta(seconds=5)


def windows_judged_until(since: datetime, now: datetime) -> datetime:
    """Until when closed RTT windows have been judged: the last completed pass's moment, or
    the start of the new-data window when that pass is unknown or outside it."""
    last = AnalysisPass.objects.filter(pk=1).values_list("judged_at", flat=True).first()
    return last if last is not None and since <= last <= now else since


def recently_received_metrics(
    since: datetime, now: datetime, judged_until: datetime | None = None
) -> dict[PathKey, set[FindingMetric]]:
    """Paths with results received since a moment, each with the metrics whose rules those
    results may change.

    The RTT and loss rules read complete windows only, so pings re-run them only when a
    window closed after `judged_until` (default: `since`), or when a ping not yet seen began
    before the newest window boundary (late data into a closed window). Pings that all fall
    in the window still filling would find what the rules found before. The one-way rules
    read latency intervals in the same windows, alike, for the session's path and its reverse.
    """
    judged_until = judged_until or since
    width = settings.ANALYSIS_RTT_WINDOW_S
    boundary = datetime.fromtimestamp(now.timestamp() // width * width, tz=now.tzinfo)
    rows = (
        Run.objects.filter(
            started_at__gte=since - timedelta(hours=1), received_at__gte=since, destination_id__isnull=False
        )
        .order_by()
        .values_list("source_id", "destination_id", "family", "test_type")
        .annotate(first_unseen=Min("started_at", filter=Q(received_at__gte=judged_until - COMMIT_MARGIN)))
    )
    found: dict[PathKey, set[FindingMetric]] = defaultdict(set)
    for source_id, destination_id, family, test_type, first_unseen in rows:
        if test_type in WINDOWED_TESTS:
            late = first_unseen is not None and first_unseen < boundary
            if not (boundary > judged_until or late):
                continue
        found[(source_id, destination_id, family)] |= METRICS_OF_TEST.get(test_type, ALL_METRICS)
        if test_type == TestType.LATENCY:  # its backward direction is the reverse path's
            found[(destination_id, source_id, family)] |= METRICS_OF_TEST[test_type]
    return found


def analyze_recent(now: datetime | None = None) -> Progress:
    """The incremental task: runs of the last two days without a current analysis."""
    now = now or timezone.now()
    progress = analyze_range(
        now - INCREMENTAL_LOOKBACK, now + timedelta(minutes=5), only_missing=True, now=now, settled=True
    )
    # Standing modes whose window has moved past a sweep that counted.
    expired = StandingModes.objects.filter(valid_until__lte=now).values_list("source_id", "destination_id", "family")
    _guarded("expired standing modes", lambda: refresh_standing_modes(list(expired), now))
    AnalysisPass.objects.update_or_create(pk=1, defaults={"judged_at": now})
    return progress


def purge_expired(now: datetime | None = None) -> int:
    """Drops analyses of runs past their own retention, and findings cleared before it. It is
    longer than the raw data's: an analysis is small and keeps what its run showed."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.ANALYSIS_RETENTION_DAYS)
    deleted = RunAnalysis.objects.filter(started_at__lt=cutoff).delete()[0]
    deleted += SweepModes.objects.filter(started_at__lt=cutoff).delete()[0]
    deleted += Finding.objects.filter(state=FindingState.CLEARED, cleared_at__lt=cutoff).delete()[0]
    return deleted
