"""Celery tasks of the perfsonar app: keep nodes' tasks in step, poll missed runs, check nodes."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from perfsonar.choices import MAY_BE_ON_NODE
from perfsonar.intake import poll
from perfsonar.models import Node, Task
from perfsonar.nodes import check_node
from perfsonar.reconcile import reconcile
from perfsonar.retention import forget_finished_tasks
from perfsonar.sync_lock import sync_lock

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
            return {"skipped": "another sync is running"}
        made = reconcile()
        polled = poll()
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
    }
    if made.created or made.deleted or made.refused or made.unanswered or made.adopted or polled.polled_runs:
        log.info("perfSONAR sync: %s", summary)
    return summary


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
