"""Celery wrappers around analysis services."""

from celery import shared_task

from analysis.services import run_analyses, snapshots
from core import metrics


@shared_task
def analyze_recent() -> dict[str, int]:
    """New throughput runs and flow sweeps get ceilings, diagnoses and modes; paths with new
    data get their regression rules re-run. Idempotent: a repeat finds nothing to do."""
    with metrics.timed(metrics.ANALYSIS_PASS_SECONDS, metrics.ANALYSIS_PASS_END):
        progress = run_analyses.analyze_recent()
    return {
        "throughput_runs": progress.throughput_runs,
        "sweeps": progress.sweeps,
        "paths": progress.paths,
        "findings_opened": progress.findings_opened,
    }


@shared_task
def purge_expired_analysis() -> int:
    return run_analyses.purge_expired()


@shared_task
def refresh_snapshots() -> int:
    """Every enabled mesh's grid, computed for the minute to come (analysis.services.snapshots)."""
    return snapshots.refresh_snapshots()
