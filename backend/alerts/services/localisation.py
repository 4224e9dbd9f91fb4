"""The paths an incident's findings degraded, the paths that measured normally since, and the
agents and routers on each, for alerts.localise. Reads only.

A path counts as healthy for a metric when its rule for that metric has had the data to decide
since the incident's findings began, and it has no open finding of that metric: three analysed
throughput runs (the fast rule's confirmation), or pings over the windows the RTT CUSUM needs
and an analysis pass after them. A path that has only started to measure since says nothing
either way: in the first lab soak, a cut path one run into its own drop cleared the agent it
shared with another cut path, and one cut became two incidents. PathFacts reads each of these
once per evaluation tick.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q

from alerts.localise import Suspect, cleared, suspects
from alerts.models import Alert
from analysis.changes.rtt import windows_to_decide
from analysis.changes.throughput import FAST_CONFIRM_N
from analysis.choices import FindingKind, FindingState
from analysis.models import AnalysisPass, Finding, RunAnalysis
from inventory.models import Agent
from measurements.choices import TestType
from measurements.models import PathLatestRun, TracePath

Pair = tuple[str, str]  # source and destination agent ids

# The data that says a path is healthy for a finding's metric.
TEST_OF_METRIC = {
    "rtt": TestType.PING,
    "loss": TestType.PING,
    "throughput": TestType.THROUGHPUT,
    # One latency session measures both directions of its pair (one_way_windows reads either).
    "one_way_delay": TestType.LATENCY,
    "one_way_loss": TestType.LATENCY,
}
# A trace older than this no longer says which routers a path crosses.
TRACE_AGE = timedelta(days=2)


@dataclass(frozen=True)
class Localisation:
    metric: str
    degraded: int
    healthy_checked: int  # paths that measured normally since, sharing an element with a degraded one
    suspects: list[Suspect]
    clearing: tuple[str, ...] = ()  # those paths by name: what rules the other elements out

    def sentence(self) -> str:
        if not self.suspects:
            return ""
        if not self.healthy_checked:
            shared = ", ".join(suspect.element for suspect in self.suspects)
            return (
                f"The {self.degraded} degraded paths share {shared}; no path sharing anything with them has "
                "measured normally since, so nothing rules another cause out yet"
            )
        first = self.suspects[0]
        if not first.explains:
            return first.sentence()
        shown = ", ".join(self.clearing[:3]) + (f" and {len(self.clearing) - 3} more" if len(self.clearing) > 3 else "")
        explaining = sum(1 for suspect in self.suspects if suspect.explains)
        paths = "both degraded paths" if self.degraded == 2 else f"all {self.degraded} degraded paths"
        return (
            f"{self.where()} {'is' if explaining == 1 else 'are'} on {paths} and on no path that measured normally; "
            f"{shown} measured normally since, through their other agents and routers"
        )

    def where(self) -> str:
        """The elements that explain every degraded path (the routers of one link's ECMP
        members all do), joined: "hop 198.18.200.1 and hop 198.18.200.2"."""
        explaining = [suspect.element for suspect in self.suspects if suspect.explains]
        return (
            " and ".join(explaining) if len(explaining) <= 2 else f"{', '.join(explaining[:-1])} and {explaining[-1]}"
        )


class PathFacts:
    """What one evaluation tick reads about paths, each read once however many alerts ask:
    the newest run of every path per test, the open findings, and each path's elements. A
    core outage fires hundreds of findings in one tick, and grouping compares them pairwise."""

    def __init__(self, agents: Mapping[str, Agent], now: datetime) -> None:
        self.agents, self.now = agents, now
        self.ids = {agent.name: agent_id for agent_id, agent in agents.items()}
        self._latest: dict[str, dict[Pair, datetime]] = {}
        self._open: dict[str, set[Pair]] | None = None
        self._elements: dict[Pair, frozenset[str]] = {}
        self._through: dict[frozenset[str], set[Pair]] = {}
        self._findings: dict[int, Finding] = {}
        self._decided: dict[tuple[str, datetime], set[Pair]] = {}
        self._judged_at: datetime | None = None

    def latest(self, test: str) -> dict[Pair, datetime]:
        """Each path's newest run of the test (paths between known agents); for latency, of
        either direction's sessions, which measure both."""
        if test not in self._latest:
            rows = PathLatestRun.objects.filter(test_type=test).values_list("source_id", "destination_id", "started_at")
            found: dict[Pair, datetime] = {}
            for s, d, at in rows:
                if str(s) in self.agents and str(d) in self.agents:
                    pairs = [(str(s), str(d))] + ([(str(d), str(s))] if test == TestType.LATENCY else [])
                    for pair in pairs:
                        found[pair] = max(at, found.get(pair, at))
            self._latest[test] = found
        return self._latest[test]

    def open_findings(self, metric: str) -> set[Pair]:
        if self._open is None:
            self._open = {}
            rows = Finding.objects.filter(state=FindingState.OPEN, kind=FindingKind.ALARM).values_list(
                "metric", "source_id", "destination_id"
            )
            for finding_metric, source, destination in rows:
                self._open.setdefault(finding_metric, set()).add((str(source), str(destination)))
        return self._open.get(metric, set())

    def decided(self, test: str, since: datetime) -> set[Pair]:
        """Paths whose rules for the test's metrics have had the data to decide since `since`."""
        key = (test, since)
        if key not in self._decided:
            if test == TestType.THROUGHPUT:
                self._decided[key] = self._runs_analysed_since(since)
            else:
                # The window `since` falls in, then the windows the CUSUM needs, all judged.
                window = timedelta(seconds=settings.ANALYSIS_RTT_WINDOW_S)
                enough = since + window * (windows_to_decide() + 1)
                judged = self.judged_at()
                self._decided[key] = (
                    {pair for pair, at in self.latest(test).items() if at > enough}
                    if judged is not None and judged > enough
                    else set()
                )
        return self._decided[key]

    def _runs_analysed_since(self, since: datetime) -> set[Pair]:
        candidates = [pair for pair, at in self.latest(TestType.THROUGHPUT).items() if at > since]
        if not candidates:
            return set()
        rows = (
            RunAnalysis.objects.filter(
                source_id__in={source for source, _ in candidates},
                destination_id__in={destination for _, destination in candidates},
                started_at__gt=since,
            )
            .values("source_id", "destination_id")
            .annotate(runs=Count("id"))
            .filter(runs__gte=FAST_CONFIRM_N)
            .values_list("source_id", "destination_id")
        )
        return {(str(source), str(destination)) for source, destination in rows} & set(candidates)

    def judged_at(self) -> datetime | None:
        """When the last analysis pass judged the data (None before the first)."""
        if self._judged_at is None:
            self._judged_at = AnalysisPass.objects.values_list("judged_at", flat=True).first()
        return self._judged_at

    def healthy(self, metric: str, since: datetime) -> set[Pair]:
        """Paths whose rule for the metric could have decided since `since`, with no open
        finding of it."""
        test = TEST_OF_METRIC.get(metric)
        if test is None:
            return set()
        return self.decided(test, since) - self.open_findings(metric)

    def agent_cleared(self, agent_id: str, metric: str, since: datetime) -> bool:
        """Whether a path of this agent measured the metric normally since `since`."""
        return any(agent_id in pair for pair in self.healthy(metric, since))

    def finding(self, finding_id: int) -> Finding | None:
        if finding_id not in self._findings:
            found = Finding.objects.filter(pk=finding_id).first()
            if found is None:
                return None
            self._findings[finding_id] = found
        return self._findings[finding_id]

    def elements(self, pairs: Iterable[Pair]) -> dict[Pair, frozenset[str]]:
        """Per path: "agent NAME" for both ends and "hop ADDRESS" for every router its newest
        trace's flows answered from (the ends' own addresses left out)."""
        wanted = {pair for pair in pairs if pair[0] in self.agents and pair[1] in self.agents}
        missing = wanted - set(self._elements)
        if missing:
            self._elements.update(_path_elements(missing, self.agents, self.now))
        return {pair: self._elements[pair] for pair in wanted}

    def through(self, routers: Iterable[str]) -> set[Pair]:
        """The paths whose traces of the last TRACE_AGE answered from any of these routers."""
        key = frozenset(routers)
        if key not in self._through:
            self._through[key] = _pairs_through(key, self.now)
        return self._through[key]

    def name(self, pair: Pair) -> str:
        return f"{self.agents[pair[0]].name}->{self.agents[pair[1]].name}"


def _path_elements(pairs: set[Pair], agents: Mapping[str, Agent], now: datetime) -> dict[Pair, frozenset[str]]:
    hops: dict[Pair, set[str]] = {pair: set() for pair in pairs}
    sources = sorted({source for source, _ in pairs})
    destinations = sorted({destination for _, destination in pairs})
    rows = (
        TracePath.objects.filter(
            source_id__in=sources, destination_id__in=destinations, time__gte=now - TRACE_AGE, time__lte=now
        )
        .order_by("source_id", "destination_id", "flow", "-time")
        .distinct("source_id", "destination_id", "flow")
        .values_list("source_id", "destination_id", "hops")
    )
    for source, destination, flow_hops in rows:
        pair = (str(source), str(destination))
        if pair in hops:
            for hop in flow_hops if isinstance(flow_hops, list) else []:
                hops[pair] |= {str(p["address"]) for p in hop.get("probes", []) if p.get("address")}
    found: dict[Pair, frozenset[str]] = {}
    for pair in pairs:
        ends = {*agents[pair[0]].addresses, *agents[pair[1]].addresses}
        found[pair] = frozenset(
            {f"agent {agents[pair[0]].name}", f"agent {agents[pair[1]].name}"}
            | {f"hop {address}" for address in hops[pair] - ends - {"*"}}
        )
    return found


# Routers looked up at once: a path of 30 hops and a few ECMP members is well under it.
MAX_ROUTERS = 64


def _pairs_through(routers: frozenset[str], now: datetime) -> set[Pair]:
    wanted = sorted(routers)[:MAX_ROUTERS]
    if not wanted:
        return set()
    crosses = Q()
    for address in wanted:
        crosses |= Q(hops__contains=[{"probes": [{"address": address}]}])
    rows = (
        TracePath.objects.filter(crosses, time__gte=now - TRACE_AGE, time__lte=now, destination_id__isnull=False)
        .values_list("source_id", "destination_id")
        .distinct()
    )
    return {(str(source), str(destination)) for source, destination in rows}


def localise(alerts: Sequence[Alert], facts: PathFacts) -> Localisation | None:
    """What the incident's degraded paths of its most common metric share, or None when fewer
    than two paths of one metric degraded."""
    metrics = [str(alert.labels.get("metric")) for alert in alerts if alert.finding_id]
    metric = max(set(metrics), key=metrics.count, default="")
    if metric not in TEST_OF_METRIC:
        return None
    findings = {
        (str(row.source_id), str(row.destination_id)): row
        for alert in alerts
        if alert.finding_id and alert.labels.get("metric") == metric
        if (row := facts.finding(alert.finding_id)) is not None
    }
    degraded = facts.elements(findings)
    if len(degraded) < 2:
        return None
    since = max(finding.detected_at for finding in findings.values())
    # Only the healthy paths that share something with the degraded ones can clear anything:
    # those of their agents and those through their routers (not every path of the mesh).
    healthy = facts.healthy(metric, since) - set(findings)
    ends = {agent for pair in degraded for agent in pair}
    routers = {element[4:] for elements in degraded.values() for element in elements if element.startswith("hop ")}
    nearby = {pair for pair in healthy if pair[0] in ends or pair[1] in ends} | (facts.through(routers) & healthy)
    elements = facts.elements(nearby)
    degraded_elements = {facts.name(pair): degraded[pair] for pair in degraded}
    healthy_elements = {facts.name(pair): elements[pair] for pair in nearby if pair in elements}
    found = suspects(degraded_elements, healthy_elements)
    # The healthy paths that clear something the degraded ones cross: the evidence that what
    # is named is the shared element rather than any other on those paths.
    crossed = frozenset().union(*degraded_elements.values())
    clearing = tuple(sorted(name for name, elements_ in healthy_elements.items() if elements_ & crossed))
    return Localisation(metric, len(degraded_elements), len(clearing), found, clearing)


def shared_router(pairs: tuple[Pair, Pair], metric: str, since: datetime, facts: PathFacts) -> str | None:
    """A router both paths' traces cross that no path crossing it has measured the metric
    normally on since `since`, or None: what joins the findings of two paths with no agent in
    common into one incident (a core router every path crosses is cleared by the healthy ones)."""
    elements = facts.elements(pairs)
    if len(elements) < 2 or metric not in TEST_OF_METRIC:
        return None
    first, second = (elements[pair] for pair in pairs)
    common = sorted(element for element in first & second if element.startswith("hop "))
    if not common:
        return None
    healthy = (facts.healthy(metric, since) - set(pairs)) & facts.through(e[4:] for e in common)
    healthy_elements = facts.elements(healthy)
    return next((element for element in common if not cleared(element, healthy_elements.values())), None)
