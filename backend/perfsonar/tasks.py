"""Celery tasks of the perfsonar app: keep nodes' tasks in step, poll missed runs, check nodes."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import shared_task

from core import metrics
from perfsonar.choices import MAY_BE_ON_NODE
from perfsonar.intake import poll
from perfsonar.models import Node, Task
from perfsonar.nodes import check_node, finish_removal
from perfsonar.reconcile import reconcile
from perfsonar.retention import forget_finished_tasks
from perfsonar.sync_lock import deadline, sync_lock

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def sync_perfsonar() -> dict[str, Any]:
    """Reconcile then poll; one at a time (a mesh edit and the beat may ask together).
    Without a node and a task left to retire it costs two queries, not a walk of the meshes."""
    if (
        not Node.objects.filter(agent__revoked_at__isnull=True).exists()
        and not Task.objects.filter(state__in=MAY_BE_ON_NODE).exists()
    ):
        return {"skipped": "no perfSONAR node"}
    with sync_lock() as held:
        if not held:
            metrics.count(metrics.PERFSONAR_SYNCS, outcome="skipped")
            return {"skipped": "another sync is running"}
        until = deadline()  # one deadline for both halves: the lock outlasts it (sync_lock.py)
        made = reconcile(deadline=until)
        polled = poll(deadline=until)
    summary = {
        "created": made.created,
        "renewed": made.renewed,
        "deleted": made.deleted,
        "refused": made.refused,
        "unanswered": made.unanswered,
        "adopted": made.adopted,
        "polled_runs": polled.polled_runs,
        "expired": polled.expired,
        "errors": (made.errors + polled.errors)[:20],
        "cut_short": made.cut_short or polled.cut_short,
    }
    outcome = "cut_short" if summary["cut_short"] else "errors" if summary["errors"] else "ok"
    metrics.count(metrics.PERFSONAR_SYNCS, outcome=outcome)
    changed = made.created or made.deleted or made.refused or made.unanswered or made.adopted or polled.polled_runs
    if changed or summary["cut_short"]:
        log.info("perfSONAR sync: %s", summary)
    return summary


@shared_task(ignore_result=True)
def finish_perfsonar_node_removal(node_id: str) -> list[str]:
    """Deletes a removed node's tasks from it (nodes.finish_removal), off the web request."""
    node = Node.objects.select_related("agent").filter(pk=uuid.UUID(node_id)).first()
    if node is None or node.removal_finished_at is not None:
        return []
    failures = finish_removal(node)
    if failures:
        log.warning("perfSONAR node %s removed; not deleted from it: %s", node.agent.name, failures[:5])
    return failures


@shared_task(ignore_result=True)
def check_perfsonar_nodes() -> int:
    checked = 0
    for node in Node.objects.select_related("agent").filter(agent__revoked_at__isnull=True):
        check_node(node)
        checked += 1
    return checked


@shared_task(ignore_result=True)
def forget_finished_perfsonar_tasks() -> int:
    return forget_finished_tasks()
