"""What holds right now, per rule: one Condition per subject (a path's metric, an agent, a
path's test) whose rule condition is true at this evaluation. Reads only."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from alerts import matchers
from alerts.choices import Comparison, RuleKind, ThresholdMetric
from alerts.models import Rule
from analysis.choices import FindingKind, FindingState
from analysis.models import Finding, RunAnalysis, SweepModes
from analysis.services.finding_text import finding_summary, new_hops
from analysis.services.own_load import busy_spans, overlaps_busy
from core.units import rate_text
from inventory.models import Agent
from measurements.choices import RunStatus, TestType
from measurements.models import Run
from meshes.models import Mesh, MeshMember
from meshes.services.paths import mesh_paths

# How far back threshold and no-data rules look for a path's last n runs.
LOOKBACK = timedelta(days=2)
# Ping runs read per path for a threshold on n runs: room for those passed over because one of
# Fathom's own throughput tests loaded a host at the time.
OWN_LOAD_READ = 3
# No data: a path's test is overdue after this many of its intervals without a result.
OVERDUE_INTERVALS = 3


# What identifies an alert's subject (ids, so a renamed agent keeps its alerts).
SUBJECT_LABELS = ("source_id", "destination_id", "agent_id", "metric", "test")


@dataclass(frozen=True)
class Condition:
    rule: Rule
    labels: dict[str, Any]
    summary: str
    agent_ids: tuple[str, ...]
    value: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    finding: Finding | None = None

    @property
    def fingerprint(self) -> str:
        subject = {k: v for k, v in self.labels.items() if k in SUBJECT_LABELS}
        # An IPv6 path is a subject of its own; IPv4's keep the fingerprints they had before IPv6.
        if self.labels.get("family", "ipv4") != "ipv4":
            subject["family"] = self.labels["family"]
        raw = json.dumps([self.rule.pk, subject], sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:32]


@dataclass
class World:
    """What every rule reads, loaded once per evaluation."""

    now: datetime
    agents: dict[str, Agent]
    meshes_of: dict[str, set[str]]  # agent id -> names of enabled meshes it is in
    everyone_meshes: set[str]  # enabled meshes of every agent

    def path_meshes(self, source_id: str, destination_id: str) -> list[str]:
        both = (self.meshes_of.get(source_id, set()) & self.meshes_of.get(destination_id, set())) | self.everyone_meshes
        return sorted(both)

    def path_labels(self, source_id: str, destination_id: str, family: int = 4, **extra: Any) -> dict[str, Any]:
        src, dst = self.agents[source_id].name, self.agents[destination_id].name
        return {
            "mesh": self.path_meshes(source_id, destination_id),
            "agent": [src, dst],
            "source": src,
            "destination": dst,
            "family": f"ipv{family}",
            # IPv4 paths read as they did before IPv6; an IPv6 path says so.
            "path": f"{src}->{dst}" + (f" (IPv{family})" if family != 4 else ""),
            "source_id": source_id,
            "destination_id": destination_id,
            **extra,
        }


def load_world(now: datetime) -> World:
    agents = {str(a.pk): a for a in Agent.objects.filter(revoked_at__isnull=True)}
    meshes_of: dict[str, set[str]] = defaultdict(set)
    for agent_id, mesh_name in MeshMember.objects.filter(mesh__enabled=True).values_list("agent_id", "mesh__name"):
        meshes_of[str(agent_id)].add(mesh_name)
    everyone = set(Mesh.objects.filter(enabled=True, all_agents=True).values_list("name", flat=True))
    return World(now, agents, meshes_of, everyone)


def _labels_for_rule(rule: Rule, labels: dict[str, Any]) -> dict[str, Any]:
    return {**labels, "severity": rule.severity, "rule": rule.name, "kind": rule.kind}


def _in_scope(rule: Rule, labels: dict[str, Any]) -> bool:
    return matchers.matches(rule.scope, labels)


def finding_figures(finding: Finding) -> dict[str, str]:
    """Before, now and the change, in the units a NOC reads."""
    b, c, m = finding.baseline, finding.current, finding.magnitude
    if finding.metric == "throughput":
        return {"before": rate_text(b), "now": rate_text(c), "change": f"{m:+.0%}"}
    if finding.metric in ("rtt", "one_way_delay"):
        return {"before": f"{b:.1f} ms", "now": f"{c:.1f} ms", "change": f"{m:+.1f} ms"}
    if finding.metric in ("loss", "one_way_loss"):
        return {"before": f"{b:.2%}", "now": f"{c:.2%}", "change": f"{m:+.2f} pp"}
    return {"before": f"{b:g}", "now": f"{c:g}", "change": f"{m:+g} {finding.unit}".strip()}


def finding_conditions(rules: Sequence[Rule], world: World) -> Iterable[Condition]:
    """Open alarm findings; annotated ones (a tuning or iperf3 change explains them) never page."""
    if not rules:
        return
    findings = Finding.objects.filter(state=FindingState.OPEN, kind=FindingKind.ALARM)
    for finding in findings:
        src, dst = str(finding.source_id), str(finding.destination_id)
        if src not in world.agents or dst not in world.agents:
            continue
        labels = world.path_labels(src, dst, finding.family, metric=finding.metric, direction=finding.direction)
        if finding.metric == "route":
            labels["hop"] = new_hops(finding)
        for rule in rules:
            if rule.metric and rule.metric != finding.metric:
                continue
            full = _labels_for_rule(rule, labels)
            if not _in_scope(rule, full):
                continue
            evidence = {
                **finding_figures(finding),
                "rules": ", ".join(finding.rules) or "-",
                "changed_at": f"{finding.started_at:%Y-%m-%d %H:%M:%S} UTC",
                "detected_at": f"{finding.detected_at:%Y-%m-%d %H:%M:%S} UTC",
                "detail": finding.evidence,
            }
            summary = finding_summary(finding, labels["path"], (labels["source"], labels["destination"]))
            yield Condition(rule, full, summary, (src, dst), finding.magnitude, evidence, finding)


def agent_down_conditions(rules: Sequence[Rule], world: World) -> Iterable[Condition]:
    """An agent seen before and silent for longer than AGENT_OFFLINE_AFTER_S (3 polls)."""
    limit = timedelta(seconds=settings.AGENT_OFFLINE_AFTER_S)
    for agent_id, agent in world.agents.items():
        if agent.last_seen_at is None or world.now - agent.last_seen_at <= limit:
            continue
        labels = {
            "agent": [agent.name],
            "agent_id": agent_id,
            "mesh": sorted(world.meshes_of.get(agent_id, set()) | world.everyone_meshes),
        }
        silent_s = (world.now - agent.last_seen_at).total_seconds()
        for rule in rules:
            full = _labels_for_rule(rule, {**labels, "metric": "agent"})
            if _in_scope(rule, full):
                yield Condition(
                    rule,
                    full,
                    f"Agent {agent.name} down: no contact for {silent_s / 60:.0f} min",
                    (agent_id,),
                    silent_s,
                    {"last_seen_at": agent.last_seen_at.isoformat(), "silent_s": round(silent_s)},
                )


def _recent_runs(now: datetime, test_types: Sequence[str], limit: int) -> dict[tuple[str, str, str], list[Run]]:
    """The newest `limit` runs of each (source, destination, test) within the lookback."""
    per_path: dict[tuple[str, str, str], list[Run]] = defaultdict(list)
    runs = (
        Run.objects.filter(started_at__gte=now - LOOKBACK, test_type__in=test_types, destination_id__isnull=False)
        .only(
            "id",
            "started_at",
            "ended_at",
            "source_id",
            "destination_id",
            "family",
            "test_type",
            "test_id",
            "status",
            "error",
            "summary",
        )
        .order_by("-started_at")
    )
    for run in runs.iterator(chunk_size=2000):
        key = (str(run.source_id), str(run.destination_id), run.test_id)
        if len(per_path[key]) < limit:
            per_path[key].append(run)
    return per_path


def no_data_conditions(rules: Sequence[Rule], world: World) -> Iterable[Condition]:
    """A planned path test with k of its last n runs failed or missed, or overdue by three of
    its intervals. Only tests the plan holds now: a paused mesh, a disabled test or an agent
    taken out of a mesh stops measuring on purpose, which is no "no data"."""
    if not rules:
        return
    planned = {(str(path.source.pk), path.test_id): path.test.interval_s for path in mesh_paths()}
    depth = max(max(rule.n for rule in rules), 6)
    for (src, dst, test_id), runs in _recent_runs(world.now, TestType.values, depth).items():
        interval_s = planned.get((src, test_id))
        if interval_s is None or src not in world.agents or dst not in world.agents:
            continue
        overdue_s = (world.now - runs[0].started_at).total_seconds()
        labels = world.path_labels(src, dst, runs[0].family, metric=runs[0].test_type, test=test_id)
        for rule in rules:
            full = _labels_for_rule(rule, labels)
            if not _in_scope(rule, full):
                continue
            failed = [r for r in runs[: rule.n] if r.status != RunStatus.OK]
            reasons = sorted({(r.error or r.status)[:200] for r in failed})
            if interval_s and overdue_s > OVERDUE_INTERVALS * interval_s:
                summary = f"No {runs[0].test_type} result on {labels['path']} for {overdue_s / 60:.0f} min"
                yield Condition(rule, full, summary, (src, dst), overdue_s, {"interval_s": interval_s, "test": test_id})
            elif len(runs) >= rule.n and len(failed) >= rule.k:
                summary = f"{len(failed)} of the last {rule.n} {runs[0].test_type} runs failed on {labels['path']}"
                yield Condition(
                    rule, full, summary, (src, dst), float(len(failed)), {"reasons": reasons, "test": test_id}
                )


COMPARE: dict[str, Callable[[float, float], bool]] = {
    Comparison.LT: lambda a, b: a < b,
    Comparison.LE: lambda a, b: a <= b,
    Comparison.GT: lambda a, b: a > b,
    Comparison.GE: lambda a, b: a >= b,
}
THRESHOLD_UNITS = {
    ThresholdMetric.THROUGHPUT_FRACTION: "of ceiling",
    ThresholdMetric.LOSS: "loss",
    ThresholdMetric.RTT_P50: "ms",
    ThresholdMetric.MODE_COUNT: "modes",
}


def _threshold_series(metric: str, now: datetime, depth: int) -> dict[tuple[str, str, int], list[float | None]]:
    """Per path (source, destination, family), newest first, the metric of its last `depth`
    runs (None when unreadable)."""
    series: dict[tuple[str, str, int], list[float | None]] = defaultdict(list)
    since = now - LOOKBACK
    if metric == ThresholdMetric.THROUGHPUT_FRACTION:
        rows = RunAnalysis.objects.filter(started_at__gte=since).order_by("-started_at")
        fields = ("source_id", "destination_id", "family", "rate_bps", "ceiling_bps", "evidence", "started_at")
        for row in rows.only(*fields).iterator():
            key = (str(row.source_id), str(row.destination_id), row.family)
            if len(series[key]) < depth:
                series[key].append(row.fraction_of_ceiling)
    elif metric == ThresholdMetric.MODE_COUNT:
        sweeps = SweepModes.objects.filter(started_at__gte=since).order_by("-started_at")
        for sweep in sweeps.only("source_id", "destination_id", "family", "mode_count", "started_at").iterator():
            key = (str(sweep.source_id), str(sweep.destination_id), sweep.family)
            if len(series[key]) < depth:
                series[key].append(float(sweep.mode_count))
    else:
        field_name = "loss_fraction" if metric == ThresholdMetric.LOSS else "rtt_median_ms"
        # A ping run during one of Fathom's own throughput tests on either host saw the queue
        # that test built, not the path: it is passed over, as the analysis passes it over.
        recent = _recent_runs(now, [TestType.PING], OWN_LOAD_READ * depth)
        oldest = min((run.started_at for runs in recent.values() for run in runs), default=now)
        busy = busy_spans(oldest, now)
        for (src, dst, _), runs in recent.items():
            for run in runs:
                key = (src, dst, run.family)
                if len(series[key]) >= depth or run.status != RunStatus.OK:
                    continue
                if overlaps_busy(busy, (run.source_id, run.destination_id), run.started_at, run.ended_at):
                    continue
                value = run.summary.get(field_name)
                series[key].append(float(value) if isinstance(value, int | float) else None)
    return series


def threshold_conditions(rules: Sequence[Rule], world: World) -> Iterable[Condition]:
    """k of the last n runs past the rule's value."""
    by_metric: dict[str, list[Rule]] = defaultdict(list)
    for rule in rules:
        if rule.metric in THRESHOLD_UNITS and rule.comparison in COMPARE and rule.value is not None:
            by_metric[rule.metric].append(rule)
    for metric, metric_rules in by_metric.items():
        depth = max(rule.n for rule in metric_rules)
        for (src, dst, family), values in _threshold_series(metric, world.now, depth).items():
            if src not in world.agents or dst not in world.agents:
                continue
            labels = world.path_labels(src, dst, family, metric=metric)
            for rule in metric_rules:
                assert rule.value is not None
                window = values[: rule.n]
                violating = [v for v in window if v is not None and COMPARE[rule.comparison](v, rule.value)]
                full = _labels_for_rule(rule, labels)
                if len(window) < rule.n or len(violating) < rule.k or not _in_scope(rule, full):
                    continue
                op = Comparison(rule.comparison).label
                summary = (
                    f"{ThresholdMetric(metric).label} {op} {rule.value:g} in {len(violating)} of the last "
                    f"{rule.n} runs on {labels['path']} (latest {window[0] if window[0] is not None else 'n/a'})"
                )
                latest = window[0]
                yield Condition(
                    rule,
                    full,
                    summary[:500],
                    (src, dst),
                    latest,
                    {"values": window, "threshold": rule.value, "comparison": rule.comparison},
                )


def evaluate_conditions(rules: Sequence[Rule], world: World) -> list[Condition]:
    kinds: dict[str, list[Rule]] = defaultdict(list)
    for rule in rules:
        if rule.enabled:
            kinds[rule.kind].append(rule)
    found: list[Condition] = []
    found += finding_conditions(kinds[RuleKind.FINDING], world)
    found += agent_down_conditions(kinds[RuleKind.AGENT_DOWN], world)
    found += no_data_conditions(kinds[RuleKind.NO_DATA], world)
    found += threshold_conditions(kinds[RuleKind.THRESHOLD], world)
    return found
