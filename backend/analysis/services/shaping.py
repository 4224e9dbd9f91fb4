"""The analysis API's response bodies, built from what the services read.

Plain dicts in the shapes of analysis.api.serializers; the JSON payloads inside them (ceilings,
evidence, time modes) are those of contract/analysis.v1.schema.json.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analysis.choices import RttModeVerdict
from analysis.models import Finding, RunAnalysis
from analysis.payloads import checked
from analysis.services.grid import MeshGrid
from analysis.services.path_list import PathList
from analysis.services.path_spark import PathSparks
from analysis.services.paths import CeilingsNow, PathReport
from analysis.services.sweep_modes import PathModesNow
from inventory.models import Agent


def agent_ref(agent: Agent) -> dict[str, Any]:
    return {"id": agent.pk, "name": agent.name}


def finding(row: Finding) -> dict[str, Any]:
    return {
        "id": row.pk,
        "source": {"id": row.source_id, "name": row.source.name},
        "destination": {"id": row.destination_id, "name": row.destination.name},
        "family": row.family,
        "metric": row.metric,
        "rules": row.rules,
        "kind": row.kind,
        "state": row.state,
        "started_at": row.started_at,
        "detected_at": row.detected_at,
        "cleared_at": row.cleared_at,
        "direction": row.direction,
        "baseline": row.baseline,
        "current": row.current,
        "magnitude": row.magnitude,
        "unit": row.unit,
        "evidence": row.evidence,
        "annotation": row.annotation,
    }


def run_analysis(row: RunAnalysis) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "started_at": row.started_at,
        "streams": row.streams,
        "rate_bps": row.rate_bps,
        "ceiling_bps": row.ceiling_bps,
        "fraction_of_ceiling": row.fraction_of_ceiling,
        "limit": row.limit,
        "diagnosis": row.diagnosis,
        "evidence": row.evidence,
        "ceilings": row.ceilings,
        "inputs": row.inputs,
        "interval_stats": row.interval_stats,
        "iperf3_version": row.iperf3_version,
    }


def path_modes(now: PathModesNow) -> dict[str, Any]:
    latest, chosen, dip = now.sweep, now.chosen, now.ping_dip
    return {
        "verdict": latest.verdict if latest else RttModeVerdict.INSUFFICIENT,
        "sweep_run_id": latest.run_id if latest else None,
        "sweep_started_at": latest.started_at if latest else None,
        "reason": latest.analysis.get("reason", "") if latest else "no flow sweep in the last 24 h",
        # Why this sweep's modes stand now (a newer one-mode sweep may not overturn them).
        "choice": chosen.reason if chosen is not None else "",
        "held_by_sweeps": chosen.held_by if chosen is not None else 0,
        "modes": [
            {
                **mode.mode,
                "trace_path": mode.trace_path,
                "ceiling": checked("CeilingSet", mode.ceiling.to_dict()) if mode.ceiling is not None else None,
            }
            for mode in now.modes
        ],
        "sweeps": now.sweeps,
        "ecmp_sweeps": now.ecmp_sweeps,
        "ping_dip": {"candidate": dip.candidate, "p_value": dip.p_value, "samples": dip.samples, "reason": dip.reason},
        "time_modes": checked("TimeModes", now.time_modes.to_dict()),
    }


def ceilings_now(now: CeilingsNow) -> dict[str, Any]:
    body = {**now.ceilings.to_dict(), "inputs": now.inputs.to_dict(), "options_of_run": str(now.run.id)}
    return checked("CeilingsNow", body)


def path_analysis(source: Agent, destination: Agent, report: PathReport, family: int = 4) -> dict[str, Any]:
    return {
        "source": agent_ref(source),
        "destination": agent_ref(destination),
        "family": family,
        "ceilings_now": ceilings_now(report.ceilings_now) if report.ceilings_now is not None else None,
        "runs": [run_analysis(row) for row in report.runs],
        "path_label": report.path_label.to_dict() if report.path_label is not None else None,
        "modes": path_modes(report.modes),
        "findings": [finding(row) for row in report.findings],
        "goal_bps": report.goal_bps,
        "advice": [item.to_dict() for item in report.advice],
        "capacity_plan": report.capacity_plan.to_dict(),
        "streams_probe": report.streams_probe.to_dict() if report.streams_probe is not None else None,
    }


def agent_refs(agents: Iterable[Agent]) -> dict[Any, dict[str, Any]]:
    """Agent refs by id with the id as text, shared by every row that names the agent: a
    UUID would go through the JSON encoder's Python fallback once per row."""
    return {agent.id: {"id": str(agent.id), "name": agent.name} for agent in agents}


def mesh_grid(grid: MeshGrid) -> dict[str, Any]:
    """Already in the serializer's output shape (MeshGridView renders it as it is)."""
    refs = agent_refs(grid.agents)  # 9,900 cells share 100
    return {
        "mesh": grid.mesh.name,
        "agents": list(refs.values()),
        "cells": [
            {
                "source": refs[cell.source.id],
                "destination": refs[cell.destination.id],
                "family": cell.family,
                "rate_bps": cell.state.rate_bps,
                "ceiling_bps": cell.state.ceiling_bps,
                "fraction_of_ceiling": cell.state.fraction_of_ceiling,
                "diagnosis": cell.state.diagnosis,
                "measured_at": cell.state.measured_at,
                "loss_fraction": cell.state.loss_fraction,
                "forward_loss_fraction": cell.state.forward_loss_fraction,
                "rtt_median_ms": cell.state.rtt_median_ms,
                "mode_count": cell.mode_count,
                "rtt_mode_verdict": cell.rtt_mode_verdict,
                "open_findings": cell.state.open_findings,
                "last_run_status": cell.state.last_run_status,
                "last_run_test_type": cell.state.last_run_test_type,
                "last_run_at": cell.state.last_run_at,
                "data_age_s": cell.state.data_age_s,
                "stale": cell.stale,
            }
            for cell in grid.cells
        ],
        "thresholds": grid.thresholds.to_dict(),
        "generated_at": grid.generated_at,
    }


def path_list(paths: PathList) -> dict[str, Any]:
    """Already in PathListSerializer's output shape, in its field order (PathListView renders it
    as it is; tests/api/test_path_list.py holds them equal)."""
    refs = agent_refs(paths.agents)
    return {
        "generated_at": paths.generated_at,
        "paths": [
            {
                "source": refs[row.source.id],
                "destination": refs[row.destination.id],
                "family": row.family,
                "test_types": row.state.test_types.split(",") if row.state.test_types else [],
                "last_run_at": row.state.last_run_at,
                "last_run_status": row.state.last_run_status,
                "last_run_test_type": row.state.last_run_test_type,
                "data_age_s": row.state.data_age_s,
                "rtt_median_ms": row.state.rtt_median_ms,
                "loss_fraction": row.state.loss_fraction,
                "forward_loss_fraction": row.state.forward_loss_fraction,
                "backward_loss_fraction": row.state.backward_loss_fraction,
                "rate_bps": row.state.rate_bps,
                "ceiling_bps": row.state.ceiling_bps,
                "fraction_of_ceiling": row.state.fraction_of_ceiling,
                "diagnosis": row.state.diagnosis,
                "limit": row.state.limit,
                "measured_at": row.state.measured_at,
                "open_findings": row.state.open_findings,
            }
            for row in paths.rows
        ],
    }


def path_sparks(sparks: PathSparks) -> dict[str, Any]:
    return {
        "generated_at": sparks.generated_at,
        "start": sparks.start,
        "step_s": sparks.step_s,
        "sparks": [
            {
                "source": spark.source,
                "destination": spark.destination,
                "family": spark.family,
                "rtt_p50_ms": spark.rtt_p50_ms,
                "runs": [
                    {"started_at": started_at, "rate_bps": rate_bps, "ceiling_bps": ceiling_bps}
                    for started_at, rate_bps, ceiling_bps in spark.runs
                ],
            }
            for spark in sparks.sparks
        ],
    }
