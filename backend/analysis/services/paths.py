"""One path in depth: its ceilings with today's tuning, its analysed runs and their consensus
label, RTT modes, findings, advice sized for a goal rate, and a capacity plan.

Reads only; the response dict is built in analysis.services.shaping.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from analysis.advice import Advice, advise, shared_ceiling
from analysis.capacity import CapacityPlan, capacity_plan
from analysis.ceilings import Limit
from analysis.choices import Diagnosis
from analysis.diagnosis import RunDiagnosis
from analysis.intervals import interval_stats
from analysis.models import Finding, RunAnalysis
from analysis.path_label import PathLabel, path_label
from analysis.policer import PolicerEstimate, UdpRun, policer_estimate
from analysis.run_judgement import number
from analysis.runs import RunCeilings, RunInputs, run_ceilings
from analysis.services.inputs import as_dict, data_direction, interval_rows, is_udp, ok_throughput_runs, run_inputs
from analysis.services.ramp_runs import is_ramp, latest_ramp
from analysis.services.stream_probes import StreamsProbe, latest_streams_probe
from analysis.services.sweep_modes import PathModesNow, path_modes_now
from inventory.models import Agent
from measurements.models import Run

# The path's label is the consensus of this many recent runs run as the newest one was.
CONSENSUS_RUNS = 11
# Paced UDP runs this recent say what a policer passes (a policer is configuration: it
# changes rarely, but it does change).
UDP_LOOKBACK = timedelta(days=7)
UDP_RUNS = 20


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
    path_label: PathLabel | None  # the consensus of the recent runs with the newest run's options
    modes: PathModesNow
    findings: list[Finding]  # newest first, with source and destination loaded
    goal_bps: float | None
    advice: list[Advice]
    capacity_plan: CapacityPlan
    streams_probe: StreamsProbe | None  # one stream against several, the newest probe


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


@dataclass(frozen=True)
class Consensus:
    """The path's label and the rate its agreeing runs had (their median)."""

    label: PathLabel
    rate_bps: float | None


def _tuning(inputs: object) -> tuple[object, object]:
    """Both hosts' tuning as a run's stored inputs recorded it."""
    stored = as_dict(inputs)
    return stored.get("sender"), stored.get("receiver")


def consensus(latest: RunAnalysis) -> Consensus | None:
    """The most common diagnosis of the path's last CONSENSUS_RUNS runs that ran as the newest
    one did: its options (stream count, -w, congestion control) and both hosts' tuning. Runs
    from before a retune are another path as far as their ceilings go, so they do not vote."""
    rows = (
        RunAnalysis.objects.filter(
            source_id=latest.source_id,
            destination_id=latest.destination_id,
            family=latest.family,
            options_key=latest.options_key,
        )
        .order_by("-started_at")
        .values_list("diagnosis", "rate_bps", "inputs")[:CONSENSUS_RUNS]
    )
    tuning = _tuning(latest.inputs)
    same = list(itertools.takewhile(lambda row: _tuning(row[2]) == tuning, rows))
    label = path_label([Diagnosis(diagnosis) for diagnosis, _, _ in same])
    if label is None:
        return None
    rates = [rate for diagnosis, rate, _ in same if diagnosis == label.diagnosis and rate]
    return Consensus(label, statistics.median(rates) if rates else None)


def udp_runs(source: Agent, destination: Agent, now: datetime, family: int = 4) -> list[UdpRun]:
    """The path's recent paced UDP runs in the data's direction (iperf3 -R counted)."""
    runs = ok_throughput_runs(source, destination, now - UDP_LOOKBACK, now, family)[: 5 * UDP_RUNS]
    agents = {source.pk: source, destination.pk: destination}
    found: list[UdpRun] = []
    for run in runs:
        # A ramp's steps are read as a ramp (ramp_runs.py), not as one run at their average.
        direction = data_direction(run, agents) if is_udp(run) and not is_ramp(run) else None
        if direction is None or direction[0].pk != source.pk:
            continue
        summary = as_dict(run.summary)
        offered = number(summary, "sender_bits_per_s") or number(as_dict(run.params), "bitrate_bps")
        delivered, lost = number(summary, "receiver_bits_per_s"), number(summary, "lost_percent")
        if offered and delivered is not None and lost is not None and 0 <= lost <= 100:
            found.append(UdpRun(offered, delivered, lost / 100))
        if len(found) == UDP_RUNS:
            break
    return found


def path_policer(source: Agent, destination: Agent, agreed: Consensus, family: int = 4) -> PolicerEstimate | None:
    """The policer's estimated rate when the path's label is a policer: what its newest paced
    UDP ramp measured, else its paced UDP runs, else TCP's rate as a lower bound."""
    if agreed.label.diagnosis is not Diagnosis.POLICER:
        return None
    now = timezone.now()
    ramp = latest_ramp(source, destination, now, family)
    udp = udp_runs(source, destination, now, family)
    return policer_estimate(agreed.rate_bps, agreed.label.agreeing_runs, udp, ramp=ramp)


def path_report(
    source: Agent,
    destination: Agent,
    *,
    goal_bps: float | None,
    daily_volume_bytes: int,
    runs_limit: int,
    family: int = 4,
) -> PathReport:
    analyses = RunAnalysis.objects.filter(source=source, destination=destination, family=family)
    runs = list(analyses.order_by("-started_at")[:runs_limit])
    latest = runs[0] if runs else None
    now = ceilings_now(source, destination, latest) if latest else None
    modes = path_modes_now(source, destination, now.ceilings if now is not None else None, family)
    agreed = consensus(latest) if latest is not None else None
    advice: list[Advice] = []
    goal = goal_bps
    plan = capacity_plan(daily_volume_bytes, None, 1)
    if agreed is not None and latest is not None:
        # Advice and plan follow the path's label and its agreeing runs' rate, not one run's.
        diagnosis = RunDiagnosis(
            label=agreed.label.diagnosis,
            rate_bps=agreed.rate_bps,
            ceiling_bps=latest.ceiling_bps,
            winning_term=Limit(latest.limit) if latest.limit in set(Limit) else Limit.UNKNOWN,
            fraction_of_ceiling=latest.fraction_of_ceiling,
            evidence=(),
        )
        policer = path_policer(source, destination, agreed, family)
        link_bps = now.ceilings.at_min_rtt.ceilings.link.rate_bps if now is not None else None
        shared = shared_ceiling(diagnosis.label, diagnosis.rate_bps, link_bps, policer)
        if now is not None:
            ceilings, inputs = now.ceilings, now.inputs
            goal = goal or inputs.facts.link_rate_bps or float(settings.ANALYSIS_GOAL_BPS)
            # Size for the slowest RTT mode, so the longer ECMP member is covered too.
            mode_rtts = [mode.mode["rtt_ms"] for mode in modes.modes] or [ceilings.at_min_rtt.rtt_ms or 0.0]
            advice = advise(
                diagnosis,
                ceilings,
                inputs.facts,
                sender_name=source.name,
                receiver_name=destination.name,
                goal_bps=goal,
                rtt_ms=max(mode_rtts) or None,
                policer=policer,
            )
        plan = capacity_plan(daily_volume_bytes, agreed.rate_bps, latest.streams, shared)
    findings = list(
        Finding.objects.filter(source=source, destination=destination, family=family)
        .select_related("source", "destination")
        .order_by("-started_at")[:50]
    )
    return PathReport(
        ceilings_now=now,
        runs=runs,
        path_label=agreed.label if agreed is not None else None,
        modes=modes,
        findings=findings,
        goal_bps=goal,
        advice=advice,
        capacity_plan=plan,
        streams_probe=latest_streams_probe(source, destination, timezone.now(), family),
    )
