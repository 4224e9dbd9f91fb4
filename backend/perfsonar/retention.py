"""How long Fathom remembers the pScheduler tasks that are over.

A slot task is made for every exclusive throughput slot a node leads, so a mixed mesh makes
thousands of task records a day. Once deleted from the node or refused by it, a record only
names where a stored run came from, and no run older than the raw retention is stored or
accepted: so finished records are kept that long, then forgotten.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from measurements.retention import raw_retention_cutoff
from perfsonar.choices import TaskState
from perfsonar.models import Task


def forget_finished_tasks(now: datetime | None = None, keep_days: int | None = None) -> int:
    """Deletes the records of tasks deleted (or refused) more than `keep_days` ago, the raw
    retention by default; tasks active or still unanswered on a node are never touched.
    Returns how many were forgotten."""
    cutoff = raw_retention_cutoff(now, keep_days)
    finished = Q(state=TaskState.DELETED, deleted_at__lt=cutoff) | Q(state=TaskState.REFUSED, created_at__lt=cutoff)
    forgotten, _ = Task.objects.filter(finished).delete()
    return forgotten
