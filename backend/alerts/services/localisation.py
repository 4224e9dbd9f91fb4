"""The paths an incident's findings degraded, the paths that measured normally since, and the
agents and routers on each, for alerts.localise. Reads only.

A path counts as healthy for a metric when it has measured since the incident's findings
were detected (its newest ping or throughput run is newer) and has no open finding of that
metric. A path that has not measured since says nothing either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from alerts.localise import Suspect, cleared, suspects
from alerts.models import Alert
from analysis.choices import FindingKind, FindingState
from analysis.models import Finding
from inventory.models import Agent
from measurements.choices import TestType
from measurements.models import PathLatestRun, TracePath

Pair = tuple[str, str]  # source and destination agent ids

# The data that says a path is healthy for a finding's metric.
TEST_OF_METRIC = {"rtt": TestType.PING, "loss": TestType.PING, "throughput": TestType.THROUGHPUT}
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


def path_elements(pairs: Iterable[Pair], agents: Mapping[str, Agent], now: datetime) -> dict[Pair, frozenset[str]]:
    """Per path: "agent NAME" for both ends and "hop ADDRESS" for every router its newest
    trace's flows answered from (the ends' own addresses left out)."""
    wanted = {pair for pair in pairs if pair[0] in agents and pair[1] in agents}
    hops: dict[Pair, set[str]] = {pair: set() for pair in wanted}
    if wanted:
        sources = sorted({source for source, _ in wanted})
        destinations = sorted({destination for _, destination in wanted})
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
    for pair in wanted:
        ends = {agents[pair[0]].address, agents[pair[1]].address}
        found[pair] = frozenset(
            {f"agent {agents[pair[0]].name}", f"agent {agents[pair[1]].name}"}
            | {f"hop {address}" for address in hops[pair] - ends - {"*"}}
        )
    return found


# Routers looked up at once: a path of 30 hops and a few ECMP members is well under it.
MAX_ROUTERS = 64


def pairs_through(routers: Iterable[str], now: datetime) -> set[Pair]:
    """The paths whose traces of the last TRACE_AGE answered from any of these routers."""
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


def healthy_pairs(metric: str, since: datetime, agents: Mapping[str, Agent]) -> set[Pair]:
    """Paths that measured the metric's test after `since` with no open finding of the metric."""
    test = TEST_OF_METRIC.get(metric)
    if test is None:
        return set()
    measured = {
        (str(source), str(destination))
        for source, destination in PathLatestRun.objects.filter(test_type=test, started_at__gt=since).values_list(
            "source_id", "destination_id"
        )
    }
    degraded = {
        (str(source), str(destination))
        for source, destination in Finding.objects.filter(
            metric=metric, state=FindingState.OPEN, kind=FindingKind.ALARM
        ).values_list("source_id", "destination_id")
    }
    return {pair for pair in measured - degraded if pair[0] in agents and pair[1] in agents}


def _finding_pairs(alerts: Sequence[Alert], metric: str) -> dict[Pair, Finding]:
    ids = [alert.finding_id for alert in alerts if alert.finding_id and alert.labels.get("metric") == metric]
    return {(str(f.source_id), str(f.destination_id)): f for f in Finding.objects.filter(pk__in=ids)}


def localise(alerts: Sequence[Alert], agents: Mapping[str, Agent], now: datetime) -> Localisation | None:
    """What the incident's degraded paths of its most common metric share, or None when fewer
    than two paths of one metric degraded."""
    metrics = [str(alert.labels.get("metric")) for alert in alerts if alert.finding_id]
    metric = max(set(metrics), key=metrics.count, default="")
    findings = _finding_pairs(alerts, metric)
    if len(findings) < 2 or metric not in TEST_OF_METRIC:
        return None
    since = max(finding.detected_at for finding in findings.values())
    degraded = path_elements(findings, agents, now)
    if len(degraded) < 2:
        return None
    # Only the healthy paths that share something with the degraded ones can clear anything:
    # those of their agents and those through their routers (not every path of the mesh).
    healthy = healthy_pairs(metric, since, agents) - set(findings)
    ends = {agent for pair in degraded for agent in pair}
    routers = {element[4:] for elements in degraded.values() for element in elements if element.startswith("hop ")}
    nearby = {pair for pair in healthy if pair[0] in ends or pair[1] in ends} | (pairs_through(routers, now) & healthy)
    elements = path_elements(nearby, agents, now)
    degraded_elements = {_name(pair, agents): degraded[pair] for pair in degraded}
    healthy_elements = {_name(pair, agents): elements[pair] for pair in nearby if pair in elements}
    found = suspects(degraded_elements, healthy_elements)
    # The healthy paths that clear something the degraded ones cross: the evidence that what
    # is named is the shared element rather than any other on those paths.
    crossed = frozenset().union(*degraded_elements.values())
    clearing = tuple(sorted(name for name, elements_ in healthy_elements.items() if elements_ & crossed))
    return Localisation(metric, len(degraded_elements), len(clearing), found, clearing)


def shared_router(
    pairs: tuple[Pair, Pair], metric: str, since: datetime, agents: Mapping[str, Agent], now: datetime
) -> str | None:
    """A router both paths' traces cross that no path crossing it has measured the metric
    normally on since `since`, or None: what joins the findings of two paths with no agent in
    common into one incident (a core router every path crosses is cleared by the healthy ones)."""
    elements = path_elements(pairs, agents, now)
    if len(elements) < 2 or metric not in TEST_OF_METRIC:
        return None
    first, second = (elements[pair] for pair in pairs)
    common = sorted(element for element in first & second if element.startswith("hop "))
    if not common:
        return None
    healthy = (healthy_pairs(metric, since, agents) - set(pairs)) & pairs_through([e[4:] for e in common], now)
    healthy_elements = path_elements(healthy, agents, now)
    return next((element for element in common if not cleared(element, healthy_elements.values())), None)


def agent_cleared(agent_name: str, metric: str, since: datetime, agents: Mapping[str, Agent]) -> bool:
    """Whether a path of this agent measured the metric normally since `since`: then the agent
    is not what two of its paths' alerts share as a cause."""
    healthy = healthy_pairs(metric, since, agents)
    ends = (frozenset({f"agent {agents[source].name}", f"agent {agents[target].name}"}) for source, target in healthy)
    return cleared(f"agent {agent_name}", ends)


def _name(pair: Pair, agents: Mapping[str, Agent]) -> str:
    return f"{agents[pair[0]].name}->{agents[pair[1]].name}"
