"""A mesh as a grid: for every src -> dst, throughput against its ceiling, loss in the last
hour, the RTT modes that stand now and open alarms, in a fixed number of queries whatever
the mesh size.

Reads only; the response dict is built in analysis.api.shaping.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from analysis.choices import FindingKind, FindingState
from analysis.models import Finding, RunAnalysis
from analysis.services.modes import MODES_LOOKBACK, path_current_modes
from inventory.models import Agent
from meshes.models import Mesh
from meshes.services import mesh_pairs

LATEST_PER_PATH_SQL = """
SELECT DISTINCT ON (source_id, destination_id) source_id, destination_id, {columns}
FROM {table}
WHERE source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s) AND started_at >= %(since)s
ORDER BY source_id, destination_id, started_at DESC
"""

GRID_LOSS_SQL = """
SELECT source_id, destination_id,
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL)
FROM measurements_pingsample
WHERE source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s) AND time >= %(since)s
GROUP BY source_id, destination_id
"""


def _latest_per_path(
    table: str, columns: str, ids: list[uuid.UUID], since: datetime
) -> dict[tuple[Any, Any], tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(LATEST_PER_PATH_SQL.format(table=table, columns=columns), {"ids": ids, "since": since})
        return {(row[0], row[1]): row[2:] for row in cursor.fetchall()}


@dataclass(frozen=True)
class GridCell:
    source: Agent
    destination: Agent
    rate_bps: float | None  # of the newest analysed run of the last month
    ceiling_bps: float | None
    diagnosis: str | None
    measured_at: datetime | None
    loss_fraction: float | None  # pings of the last hour
    mode_count: int | None  # of the sweep whose modes stand now
    rtt_mode_verdict: str | None
    open_findings: int  # open alarms

    @property
    def fraction_of_ceiling(self) -> float | None:
        return self.rate_bps / self.ceiling_bps if self.rate_bps is not None and self.ceiling_bps else None


@dataclass(frozen=True)
class MeshGrid:
    mesh: Mesh
    agents: list[Agent]  # every agent of a cell, by name
    cells: list[GridCell]


def mesh_grid(mesh: Mesh) -> MeshGrid:
    """For every src -> dst of a mesh: throughput against its ceiling, loss in the last hour,
    RTT mode count and open findings. A fixed number of queries, whatever the mesh size."""
    agents = {agent.pk: agent for agent in Agent.objects.filter(revoked_at__isnull=True)}
    pairs = [(src, dst) for src, dst, _ in mesh_pairs(mesh, agents) if dst is not None]
    ids = sorted({agent.pk for pair in pairs for agent in pair})
    now = timezone.now()
    # The grid shows what is current: a run older than a month or a sweep older than a day is no
    # longer what the path does.
    runs = _latest_per_path(
        RunAnalysis._meta.db_table, "rate_bps, ceiling_bps, diagnosis, started_at", ids, now - timedelta(days=31)
    )
    standing = path_current_modes(ids, ids, now - MODES_LOOKBACK, now)
    with connection.cursor() as cursor:
        cursor.execute(GRID_LOSS_SQL, {"ids": ids, "since": timezone.now() - timedelta(hours=1)})
        loss = {(row[0], row[1]): row[2:] for row in cursor.fetchall()}
    open_counts: dict[tuple[Any, Any], int] = defaultdict(int)
    for source_id, destination_id in Finding.objects.filter(
        state=FindingState.OPEN, kind=FindingKind.ALARM, source_id__in=ids, destination_id__in=ids
    ).values_list("source_id", "destination_id"):
        open_counts[(source_id, destination_id)] += 1
    cells = []
    for src, dst in pairs:
        key = (src.pk, dst.pk)
        rate, ceiling, diagnosis, measured_at = runs.get(key, (None, None, None, None))
        chosen = standing.get(key)
        sweep = chosen.sweep if chosen is not None else None
        mode_count, verdict = (len(sweep.modes), sweep.verdict.value) if sweep is not None else (None, None)
        sent, lost = loss.get(key, (0, 0))
        cells.append(
            GridCell(
                source=src,
                destination=dst,
                rate_bps=rate,
                ceiling_bps=ceiling,
                diagnosis=diagnosis,
                measured_at=measured_at,
                loss_fraction=lost / sent if sent else None,
                mode_count=mode_count,
                rtt_mode_verdict=verdict,
                open_findings=open_counts.get(key, 0),
            )
        )
    members = sorted({agent for pair in pairs for agent in pair}, key=lambda agent: agent.name)
    return MeshGrid(mesh, members, cells)
