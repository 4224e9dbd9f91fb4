"""Every path with any run, each with its current state (analysis.services.path_state): the
Paths list's rows, optionally only a mesh's pairs. A fixed number of queries whatever the
number of paths; no series here (analysis.services.path_spark serves a page's sparklines).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.utils import timezone

from analysis.services.path_state import PathState, path_states
from inventory.models import Agent
from meshes.models import Mesh
from meshes.services.paths import mesh_pairs


class PathRow(NamedTuple):  # a tuple: 9,900 are made per request
    source: Agent
    destination: Agent
    family: int
    state: PathState


@dataclass(frozen=True)
class PathList:
    agents: list[Agent]  # every agent a row names
    rows: list[PathRow]  # by source name, then destination name
    generated_at: datetime


def path_list(mesh: Mesh | None = None, family: int | None = None) -> PathList:
    """Every path with a run of any kind (revoked agents' too: their history stays), or only
    those among a mesh's pairs of active agents, or only those of one family."""
    now = timezone.now()
    agents = {str(agent.id): agent for agent in Agent.objects.all()}
    states = path_states(now)
    paths = states.with_runs()
    if mesh is not None:
        active = {agent.pk: agent for agent in agents.values() if agent.revoked_at is None}
        wanted = {
            (str(src.id), str(dst.id), path_family)
            for src, dst, _, path_family in mesh_pairs(mesh, active)
            if dst is not None
        }
        paths = [path for path in paths if path in wanted]
    if family is not None:
        paths = [path for path in paths if path[2] == family]
    rows = [PathRow(agents[src], agents[dst], fam, states.get((src, dst, fam))) for src, dst, fam in paths]
    rows.sort(key=lambda row: (row.source.name, row.destination.name, row.family))
    named = {row.source.id: row.source for row in rows} | {row.destination.id: row.destination for row in rows}
    return PathList(list(named.values()), rows, now)
