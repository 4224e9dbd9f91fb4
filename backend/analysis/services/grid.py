"""A mesh as a grid: for every src -> dst, throughput against its ceiling, loss and RTT median
in the last hour, the RTT modes that stand now, the newest run of any kind (its status, and
how old the path's newest data is against the mesh's stale_after_s) and open alarms, in a
fixed number of queries whatever the mesh size.

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
from measurements.models import PathLatestRun
from meshes.models import Mesh
from meshes.services import mesh_pairs
from meshes.thresholds import GridThresholds, effective_thresholds

PINGS_WINDOW = timedelta(hours=1)
RUNS_LOOKBACK = timedelta(days=31)

LATEST_PER_PATH_SQL = """
SELECT DISTINCT ON (source_id, destination_id) source_id, destination_id, {columns}
FROM {table}
WHERE source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s) AND started_at >= %(since)s
ORDER BY source_id, destination_id, started_at DESC
"""

# One scan of the last hour of pings gives both loss and the RTT median.
GRID_PINGS_SQL = """
SELECT source_id, destination_id,
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate AND rtt_ms IS NOT NULL)
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
    rtt_median_ms: float | None  # pings of the last hour
    mode_count: int | None  # of the sweep whose modes stand now
    rtt_mode_verdict: str | None
    open_findings: int  # open alarms
    # The newest run of any kind: the path's newest data, whatever its age.
    last_run_status: str | None
    last_run_test_type: str | None
    last_run_at: datetime | None
    data_age_s: float | None
    stale: bool  # data older than the mesh's stale_after_s ("no data" is not stale)

    @property
    def fraction_of_ceiling(self) -> float | None:
        return self.rate_bps / self.ceiling_bps if self.rate_bps is not None and self.ceiling_bps else None


@dataclass(frozen=True)
class MeshGrid:
    mesh: Mesh
    agents: list[Agent]  # every agent of a cell, by name
    cells: list[GridCell]
    thresholds: GridThresholds  # as they apply: the operator's over the defaults
    generated_at: datetime


def _newest_runs(ids: list[uuid.UUID]) -> dict[tuple[Any, Any], tuple[str, str, datetime]]:
    """(status, test type, start) of each path's newest run of any kind, from the small
    per-path table ingest keeps, so a path silent for a year still shows its age."""
    rows = (
        PathLatestRun.objects.filter(source_id__in=ids, destination_id__in=ids)
        .order_by("source_id", "destination_id", "-started_at")
        .distinct("source_id", "destination_id")
        .values_list("source_id", "destination_id", "status", "test_type", "started_at")
    )
    return {(row[0], row[1]): row[2:] for row in rows}


def mesh_grid(mesh: Mesh) -> MeshGrid:
    """For every src -> dst of a mesh: throughput against its ceiling, loss and RTT median in
    the last hour, RTT mode count, the newest run and open findings, with the mesh's
    thresholds. A fixed number of queries, whatever the mesh size."""
    agents = {agent.pk: agent for agent in Agent.objects.filter(revoked_at__isnull=True)}
    pairs = [(src, dst) for src, dst, _ in mesh_pairs(mesh, agents) if dst is not None]
    # By id, not by instance: a model's __hash__ costs more than the rest of a 9,900-cell grid.
    members = {agent.id: agent for pair in pairs for agent in pair}
    ids = sorted(members)
    now = timezone.now()
    thresholds = effective_thresholds(mesh.thresholds, [test.interval_s for test in mesh.tests.all() if test.enabled])
    # The grid shows what is current: a run older than a month or a sweep older than a day is no
    # longer what the path does.
    runs = _latest_per_path(
        RunAnalysis._meta.db_table, "rate_bps, ceiling_bps, diagnosis, started_at", ids, now - RUNS_LOOKBACK
    )
    standing = path_current_modes(ids, ids, now - MODES_LOOKBACK, now)
    with connection.cursor() as cursor:
        cursor.execute(GRID_PINGS_SQL, {"ids": ids, "since": now - PINGS_WINDOW})
        pings = {(row[0], row[1]): row[2:] for row in cursor.fetchall()}
    newest = _newest_runs(ids)
    open_counts: dict[tuple[Any, Any], int] = defaultdict(int)
    for source_id, destination_id in Finding.objects.filter(
        state=FindingState.OPEN, kind=FindingKind.ALARM, source_id__in=ids, destination_id__in=ids
    ).values_list("source_id", "destination_id"):
        open_counts[(source_id, destination_id)] += 1
    cells = []
    for src, dst in pairs:
        key = (src.id, dst.id)
        rate, ceiling, diagnosis, measured_at = runs.get(key, (None, None, None, None))
        chosen = standing.get(key)
        sweep = chosen.sweep if chosen is not None else None
        mode_count, verdict = (len(sweep.modes), sweep.verdict.value) if sweep is not None else (None, None)
        sent, lost, rtt_median_ms = pings.get(key, (0, 0, None))
        status, test_type, last_run_at = newest.get(key, (None, None, None))
        age_s = (now - last_run_at).total_seconds() if last_run_at is not None else None
        cells.append(
            GridCell(
                source=src,
                destination=dst,
                rate_bps=rate,
                ceiling_bps=ceiling,
                diagnosis=diagnosis,
                measured_at=measured_at,
                loss_fraction=lost / sent if sent else None,
                rtt_median_ms=rtt_median_ms,
                mode_count=mode_count,
                rtt_mode_verdict=verdict,
                open_findings=open_counts.get(key, 0),
                last_run_status=status,
                last_run_test_type=test_type,
                last_run_at=last_run_at,
                data_age_s=age_s,
                stale=age_s is not None and thresholds.stale_after_s is not None and age_s > thresholds.stale_after_s,
            )
        )
    return MeshGrid(mesh, sorted(members.values(), key=lambda agent: agent.name), cells, thresholds, now)
