"""What else changed when a finding's change began, from data Fathom already has: the path's
other findings (a route change with the routers it added, an RTT step, a loss onset, ECMP
members), the reverse direction's, a change on either host (tuning, kernel, interfaces,
iperf3 or agent version), and other paths that share an agent or a traced router with this
one and changed in the same moment. A route change in the same minute explains an RTT step
better than any advice, and a drop on every path of one agent points at that agent.

The moment runs from MOMENT_SLACK before the change's start to MOMENT_SLACK after it; for
throughput it opens at the run before the first changed one (the change happened somewhere
between the two; at most a day back). Reads only, in a bounded number of queries.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q

from analysis.choices import ChangeRelation, FindingMetric
from analysis.models import Finding, RunAnalysis
from analysis.services.finding_text import finding_summary, new_hops
from analysis.services.inputs import as_dict
from inventory.models import Agent, HostFactsSnapshot
from measurements.models import TracePath

MOMENT_SLACK = timedelta(minutes=15)
THROUGHPUT_LOOKBACK = timedelta(days=1)
CANDIDATE_FINDINGS = 200  # findings read in the moment, oldest first
ROUTER_PATHS = 30  # other paths whose newest trace is read for shared routers
LISTED = 12
# Host facts whose change moves a result: scalars shown old -> new, sysctls by key.
HOST_KEYS = ("agent_version", "iperf3_version", "kernel", "interfaces")
TEXT_MAX = 40


ORDER = tuple(ChangeRelation)


@dataclass(frozen=True)
class Coincidence:
    relation: ChangeRelation
    at: datetime
    sentence: str
    finding_id: int | None = None
    source_id: uuid.UUID | None = None
    destination_id: uuid.UUID | None = None
    family: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation.value,
            "at": self.at,
            "sentence": self.sentence,
            "finding_id": self.finding_id,
            "source_id": self.source_id,
            "destination_id": self.destination_id,
            "family": self.family,
        }


def change_moment(finding: Finding) -> tuple[datetime, datetime]:
    start = finding.started_at - MOMENT_SLACK
    if finding.metric == FindingMetric.THROUGHPUT:
        before = (
            RunAnalysis.objects.filter(
                source_id=finding.source_id,
                destination_id=finding.destination_id,
                family=finding.family,
                started_at__lt=finding.started_at,
                started_at__gte=finding.started_at - THROUGHPUT_LOOKBACK,
            )
            .order_by("-started_at")
            .values_list("started_at", flat=True)
            .first()
        )
        start = min(start, before or finding.started_at - THROUGHPUT_LOOKBACK)
    return start, finding.started_at + MOMENT_SLACK


def what_else_changed(finding: Finding) -> list[Coincidence]:
    """The other changes of the finding's moment, closest relation first, then by time."""
    start, end = change_moment(finding)
    ends = {finding.source_id, finding.destination_id}
    found = [*host_changes(finding, start, end)]
    others = list(
        Finding.objects.filter(started_at__gte=start, started_at__lte=end)
        .exclude(pk=finding.pk)
        .select_related("source", "destination")
        .order_by("started_at")[:CANDIDATE_FINDINGS]
    )
    for other in others:
        shared = {other.source_id, other.destination_id} & ends
        if not shared:
            continue
        if _path(other) == _path(finding):
            relation, note = ChangeRelation.SAME_PATH, ""
        elif _path(other) == (finding.destination_id, finding.source_id, finding.family):
            relation, note = ChangeRelation.REVERSE, ""
        elif shared == ends:  # the same two hosts over the other family
            relation, note = ChangeRelation.SHARED_AGENT, f"the same hosts over IPv{other.family}"
        else:
            agent = other.source if other.source_id in shared else other.destination
            relation, note = ChangeRelation.SHARED_AGENT, f"shares agent {agent.name}"
        found.append(_coincidence(other, relation, note))
    found += _shared_router_changes(finding, [o for o in others if not {o.source_id, o.destination_id} & ends], end)
    found.sort(key=lambda item: (ORDER.index(item.relation), item.at))
    return found[:LISTED]


def _coincidence(other: Finding, relation: ChangeRelation, note: str) -> Coincidence:
    ends = (other.source.name, other.destination.name)
    sentence = finding_summary(other, f"{ends[0]} → {ends[1]}", ends)
    if other.metric == FindingMetric.ROUTE and (hops := new_hops(other)):
        sentence += f", through {_listed(hops)}"
    if note:
        sentence += f" ({note})"
    return Coincidence(
        relation, other.started_at, sentence, other.pk, other.source_id, other.destination_id, other.family
    )


def _shared_router_changes(finding: Finding, far: list[Finding], when: datetime) -> list[Coincidence]:
    """Changes on paths with neither of this path's agents whose newest trace crosses a router
    this path's newest trace crosses."""
    if not far:
        return []
    own = _path(finding)
    paths = list(dict.fromkeys(_path(other) for other in far))[:ROUTER_PATHS]
    crossed = routers([own, *paths], when)
    mine = crossed.get(own, set())
    if not mine:
        return []
    found: list[Coincidence] = []
    for other in far:
        shared = sorted(mine & crossed.get(_path(other), set()))
        if shared:
            found.append(_coincidence(other, ChangeRelation.SHARED_ROUTER, f"shares router {_listed(shared)}"))
    return found


def _listed(values: list[str], shown: int = 3) -> str:
    return ", ".join(values[:shown]) + (f" and {len(values) - shown} more" if len(values) > shown else "")


# A path as findings and traces key it: source, destination, family.
PathKey = tuple[uuid.UUID, uuid.UUID, int]


def _path(finding: Finding) -> PathKey:
    return finding.source_id, finding.destination_id, finding.family


def routers(paths: list[PathKey], when: datetime) -> dict[PathKey, set[str]]:
    """Per path, the addresses that answered on its newest trace of the day before `when`
    (every flow of that run), the path's own agents left out. Three queries for any number."""
    wanted = Q()
    for source_id, destination_id, family in paths:
        wanted |= Q(source_id=source_id, destination_id=destination_id, family=family)
    newest = (
        TracePath.objects.filter(wanted, time__lte=when, time__gte=when - THROUGHPUT_LOOKBACK)
        .order_by("source_id", "destination_id", "family", "-time")
        .distinct("source_id", "destination_id", "family")
        .values_list("run_id", flat=True)
    )
    rows = TracePath.objects.filter(run_id__in=list(newest)).values_list(
        "source_id", "destination_id", "family", "hops"
    )
    agents = {source for source, _, _ in paths} | {destination for _, destination, _ in paths}
    addresses = {agent.pk: set(agent.addresses) for agent in Agent.objects.filter(pk__in=agents)}
    found: dict[PathKey, set[str]] = {}
    for src, dst, family, hops in rows:
        if dst is None:
            continue
        own = addresses.get(src, set()) | addresses.get(dst, set()) | {"*", ""}
        found.setdefault((src, dst, family), set()).update(
            probe["address"]
            for hop in hops
            if isinstance(hop, dict)
            for probe in hop.get("probes", [])
            if isinstance(probe, dict) and isinstance(probe.get("address"), str) and probe["address"] not in own
        )
    return found


def host_changes(finding: Finding, start: datetime, end: datetime) -> list[Coincidence]:
    """Each change of either host's facts in the moment, as one sentence per snapshot (one
    query when neither host changed, the common case)."""
    during = list(
        HostFactsSnapshot.objects.filter(
            agent_id__in=(finding.source_id, finding.destination_id), collected_at__gt=start, collected_at__lte=end
        )
        .select_related("agent")
        .order_by("agent_id", "collected_at")
    )
    found: list[Coincidence] = []
    for _, group in itertools.groupby(during, key=lambda snapshot: snapshot.agent_id):
        changed = list(group)
        agent = changed[0].agent
        # The snapshot before the moment is what the first change in it is compared with.
        before = HostFactsSnapshot.objects.filter(agent=agent, collected_at__lte=start).order_by("-collected_at")[:1]
        for old, new in itertools.pairwise([*before, *changed[:20]]):
            diffs = facts_diff(as_dict(old.facts), as_dict(new.facts))
            if diffs:
                found.append(Coincidence(ChangeRelation.HOST, new.collected_at, f"{agent.name}: {'; '.join(diffs)}"))
    return found


def facts_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The changed facts that move a result: versions and kernel as old -> new, sysctls by key."""
    diffs = [
        f"{key.replace('_', ' ')} {_short(old.get(key))} → {_short(new.get(key))}"
        if not isinstance(new.get(key), dict | list)
        else f"{key} changed"
        for key in HOST_KEYS
        if old.get(key) != new.get(key)
    ]
    old_sysctls, new_sysctls = as_dict(old.get("sysctls")), as_dict(new.get("sysctls"))
    diffs += [
        f"{key} {_short(old_sysctls.get(key))} → {_short(new_sysctls.get(key))}"
        for key in sorted(set(old_sysctls) | set(new_sysctls))
        if old_sysctls.get(key) != new_sysctls.get(key)
    ]
    return diffs


def _short(value: object) -> str:
    text = "none" if value is None else str(value)
    return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"


def finding_changes(finding_id: int) -> dict[str, Any] | None:
    """The API's answer for one finding (FindingChangesSerializer), None when there is none."""
    finding = Finding.objects.filter(pk=finding_id).first()
    if finding is None:
        return None
    start, end = change_moment(finding)
    items = [item.as_dict() for item in what_else_changed(finding)]
    return {"finding_id": finding.pk, "from": start, "to": end, "items": items}
