"""One path in depth: its ceilings with today's tuning, its analysed runs, RTT modes, findings,
advice sized for a goal rate, and a capacity plan.

Reads only; the response dict is built in analysis.api.shaping.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings
from django.utils import timezone

from analysis.choices import Diagnosis
from analysis.diagnosis import Advice, CapacityPlan, RunDiagnosis, advise, capacity_plan
from analysis.intervals import interval_stats
from analysis.models import Finding, RunAnalysis
from analysis.runs import RunCeilings, RunInputs, run_ceilings
from analysis.services.inputs import interval_rows, run_inputs
from analysis.services.modes import PathModesNow, path_modes_now
from inventory.models import Agent
from measurements.models import Run


@dataclass(frozen=True)
class CeilingsNow:
    """The path's ceilings with today's tuning, RTT modes and loss."""

    ceilings: RunCeilings
    inputs: RunInputs
    run: Run  # the newest analysed run, whose options (streams, -w) they are for


@dataclass(frozen=True)
class PathReport:
    ceilings_now: CeilingsNow | None
    runs: list[RunAnalysis]  # newest first
    modes: PathModesNow
    findings: list[Finding]  # newest first, with source and destination loaded
    goal_bps: float | None
    advice: list[Advice]
    capacity_plan: CapacityPlan


def ceilings_now(source: Agent, destination: Agent, latest: RunAnalysis) -> CeilingsNow | None:
    """The path's ceilings with today's tuning, RTT modes and loss, for the options of its
    newest analysed throughput run (stream count, -w)."""
    run = Run.objects.filter(id=latest.run_id, started_at=latest.started_at).first()
    if run is None:
        return None
    inputs = run_inputs(run, source, destination, timezone.now(), interval_stats(interval_rows(run), None))
    # Today's ceilings rest on the path's RTT, not on one old flow's.
    facts = inputs.facts
    path_facts = replace(facts, run_min_rtt_ms=facts.path_min_rtt_ms or facts.run_min_rtt_ms, run_mean_rtt_ms=None)
    return CeilingsNow(run_ceilings(path_facts), RunInputs(path_facts, inputs.sources), run)


def path_report(
    source: Agent, destination: Agent, *, goal_bps: float | None, daily_volume_bytes: int, runs_limit: int
) -> PathReport:
    runs = list(RunAnalysis.objects.filter(source=source, destination=destination).order_by("-started_at")[:runs_limit])
    latest = runs[0] if runs else None
    now = ceilings_now(source, destination, latest) if latest else None
    modes = path_modes_now(source, destination, now.ceilings if now is not None else None)
    advice: list[Advice] = []
    goal = goal_bps
    if now is not None and latest is not None:
        ceilings, inputs = now.ceilings, now.inputs
        goal = goal or inputs.facts.link_rate_bps or float(settings.ANALYSIS_GOAL_BPS)
        # Size for the slowest RTT mode, so the longer ECMP member is covered too.
        mode_rtts = [mode.mode["rtt_ms"] for mode in modes.modes] or [ceilings.at_min_rtt.rtt_ms or 0.0]
        diagnosis = RunDiagnosis(
            label=Diagnosis(latest.diagnosis),
            rate_bps=latest.rate_bps,
            ceiling_bps=latest.ceiling_bps,
            winning_term=ceilings.at_min_rtt.limit,
            fraction_of_ceiling=latest.fraction_of_ceiling,
            evidence=(),
        )
        advice = advise(
            diagnosis,
            ceilings,
            inputs.facts,
            sender_name=source.name,
            receiver_name=destination.name,
            goal_bps=goal,
            rtt_ms=max(mode_rtts) or None,
        )
    findings = list(
        Finding.objects.filter(source=source, destination=destination)
        .select_related("source", "destination")
        .order_by("-started_at")[:50]
    )
    return PathReport(
        ceilings_now=now,
        runs=runs,
        modes=modes,
        findings=findings,
        goal_bps=goal,
        advice=advice,
        capacity_plan=capacity_plan(
            daily_volume_bytes, latest.rate_bps if latest else None, latest.streams if latest else 1
        ),
    )
