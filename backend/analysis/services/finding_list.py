"""Findings across paths for the Findings page: filtered by path, mesh, metric, state, kind
and a time window, newest detection first."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from analysis.models import Finding
from inventory.models import Agent
from meshes.models import Mesh
from meshes.services.paths import mesh_pairs


@dataclass(frozen=True)
class FindingFilter:
    source: uuid.UUID | None = None
    destination: uuid.UUID | None = None
    family: int | None = None
    metric: str | None = None
    state: str | None = None
    kind: str | None = None
    mesh: Mesh | None = None
    # The window a finding must overlap: from its start to its clearing (or now, while open).
    since: datetime | None = None
    until: datetime | None = None


def list_findings(chosen: FindingFilter, limit: int) -> list[Finding]:
    findings = Finding.objects.select_related("source", "destination").order_by("-detected_at", "-pk")
    for key in ("source", "destination"):
        value = getattr(chosen, key)
        if value is not None:
            findings = findings.filter(**{f"{key}_id": value})
    for key in ("family", "metric", "state", "kind"):
        value = getattr(chosen, key)
        if value is not None:
            findings = findings.filter(**{key: value})
    if chosen.since is not None:
        findings = findings.filter(Q(cleared_at__isnull=True) | Q(cleared_at__gte=chosen.since))
    if chosen.until is not None:
        findings = findings.filter(started_at__lt=chosen.until)
    if chosen.mesh is None:
        return list(findings[:limit])
    # A mesh's paths are its directed pairs among active agents (a disjoint mesh tests A -> B
    # and back, not A -> A'): narrow by member ids in SQL, then keep only the mesh's pairs.
    agents = {agent.pk: agent for agent in Agent.objects.filter(revoked_at__isnull=True)}
    pairs = {(src.pk, dst.pk, family) for src, dst, _, family in mesh_pairs(chosen.mesh, agents) if dst is not None}
    ids = {agent_id for src, dst, _ in pairs for agent_id in (src, dst)}
    rows: list[Finding] = []
    for finding in findings.filter(source_id__in=ids, destination_id__in=ids).iterator(chunk_size=500):
        if (finding.source_id, finding.destination_id, finding.family) in pairs:
            rows.append(finding)
            if len(rows) >= limit:
                break
    return rows
