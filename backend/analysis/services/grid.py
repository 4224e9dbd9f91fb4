"""A mesh as a grid: for every src -> dst, the path's current state (analysis.services.path_state:
throughput against its ceiling, loss and RTT median in the last hour, one-way loss src -> dst in
the last hour, the newest run of any kind and how old the path's newest data is against the
mesh's stale_after_s, open alarms) and the RTT modes that stand now, in a fixed number of
queries whatever the mesh size.

Reads only; the response dict is built in analysis.services.shaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.utils import timezone

from analysis.services.path_state import PathState, path_states
from analysis.services.sweep_modes import standing_mode_counts
from inventory.models import Agent
from meshes.models import Mesh
from meshes.services.paths import mesh_pairs
from meshes.thresholds import GridThresholds, effective_thresholds


class GridCell(NamedTuple):  # a tuple: 9,900 are made per request
    source: Agent
    destination: Agent
    family: int  # a dual-stack pair has a cell per family
    state: PathState
    mode_count: int | None  # of the sweep whose modes stand now
    rtt_mode_verdict: str | None
    stale: bool  # data older than the mesh's stale_after_s ("no data" is not stale)


@dataclass(frozen=True)
class MeshGrid:
    mesh: Mesh
    agents: list[Agent]  # every agent of a cell, by name
    cells: list[GridCell]
    thresholds: GridThresholds  # as they apply: the operator's over the defaults
    generated_at: datetime


def mesh_grid(mesh: Mesh) -> MeshGrid:
    """For every src -> dst of a mesh: its current state and RTT mode count, with the mesh's
    thresholds. A fixed number of queries, whatever the mesh size."""
    agents = {agent.pk: agent for agent in Agent.objects.filter(revoked_at__isnull=True)}
    pairs = [(src, dst, family) for src, dst, _, family in mesh_pairs(mesh, agents) if dst is not None]
    # By id, not by instance: a model's __hash__ costs more than the rest of a 9,900-cell grid.
    members = {agent.id: agent for src, dst, _ in pairs for agent in (src, dst)}
    ids = sorted(members)
    now = timezone.now()
    thresholds = effective_thresholds(mesh.thresholds, [test.interval_s for test in mesh.tests.all() if test.enabled])
    states = path_states(now, ids)
    modes = standing_mode_counts(ids, now, sorted({family for _, _, family in pairs}))
    stale_after_s = thresholds.stale_after_s
    text_ids = {agent_id: str(agent_id) for agent_id in ids}
    cells = []
    for src, dst, family in pairs:
        key = (text_ids[src.id], text_ids[dst.id], family)
        state = states.get(key)
        mode_count, verdict = modes.get(key, (None, None))
        age_s = state.data_age_s
        stale = age_s is not None and stale_after_s is not None and age_s > stale_after_s
        cells.append(GridCell(src, dst, family, state, mode_count, verdict, stale))
    return MeshGrid(mesh, sorted(members.values(), key=lambda agent: agent.name), cells, thresholds, now)
