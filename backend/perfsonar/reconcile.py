"""Keeping perfSONAR nodes' pScheduler tasks in step with what the meshes want
(perfsonar/wanted.py): missing tasks created, repeating ones renewed (a successor starting
where the old one ends) when a quarter of PERFSONAR_TASK_TTL_S is left, as pSConfig's agent
does, and tasks no longer wanted deleted from their node. Every task's URL is recorded, so
none is left orphaned (docs/perfsonar.md)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from meshes.choices import SlotState
from meshes.models import Slot
from perfsonar.choices import TaskState
from perfsonar.client import PSchedulerClient, PSchedulerError
from perfsonar.durations import format_duration
from perfsonar.models import Node, Task
from perfsonar.nodes import client_for, delete_task, note_error, url_on_node
from perfsonar.tokens import authorization_header
from perfsonar.wanted import DesiredTask, desired_background, slot_task, slots_for_nodes

ARCHIVE_PATH = "/api/v1/perfsonar/archive/"
# A task the node refused is tried again after this long (limits may be raised meanwhile).
REFUSED_RETRY = timedelta(minutes=15)
# The node's error line while a task's POST is unanswered (cleared once the sync settles it).
NO_ANSWER = "a task's POST got no answer"
# The reason a task's row carries while its POST is in flight (and after, if the worker died).
IN_FLIGHT = "its POST was sent and not yet answered"


@dataclass
class SyncReport:
    created: int = 0
    renewed: int = 0
    deleted: int = 0
    refused: int = 0
    unanswered: int = 0
    adopted: int = 0
    expired: int = 0
    polled_runs: int = 0
    errors: list[str] = field(default_factory=list)
    # The sync reached its deadline (sync_lock.SYNC_DEADLINE_S) with calls left: the next one
    # takes them up.
    cut_short: bool = False

    def past(self, deadline: float | None) -> bool:
        """Whether the sync's deadline has passed (noted once); None: no deadline."""
        if deadline is not None and time.monotonic() >= deadline:
            if not self.cut_short:
                self.errors.append("the sync reached its deadline: the next one takes up what is left")
            self.cut_short = True
        return self.cut_short


# --- making tasks ------------------------------------------------------------------------


def archive_spec(node: Node, with_secret: bool) -> dict[str, Any]:
    headers = {
        "Authorization": authorization_header(node) if with_secret else "Bearer (the node's archive token)",
        "x-ps-observer": node.agent.address,
    }
    return {
        "schema": 2,
        "archiver": "http",
        "runs": "all",
        "ttl": "PT6H",
        "data": {
            "schema": 3,
            "_url": settings.PUBLIC_URL + ARCHIVE_PATH,
            "op": "put",
            "_headers": headers,
            "verify-ssl": bool(settings.PERFSONAR_ARCHIVE_VERIFY_TLS),
            "retry-policy": [{"attempts": 5, "wait": "PT1M"}, {"attempts": 5, "wait": "PT10M"}],
        },
    }


def task_json(
    desired: DesiredTask, task_id: uuid.UUID, start: datetime, until: datetime, secret: bool
) -> dict[str, Any]:
    far_end = desired.destination.name if desired.destination else desired.target
    schedule: dict[str, Any] = {"start": start.isoformat()}
    if desired.repeat_s:
        schedule.update({"repeat": format_duration(desired.repeat_s), "until": until.isoformat()})
        if desired.slip_s:
            schedule.update({"slip": format_duration(desired.slip_s), "sliprand": True})
    body: dict[str, Any] = {
        "schema": 1,
        "test": desired.test,
        "schedule": schedule,
        "archives": [archive_spec(desired.node, secret)],
        "reference": {
            "fathom": {
                "task": str(task_id),
                "mesh": desired.mesh_test.mesh.name,
                "test": desired.mesh_test.name,
                "path": f"{desired.source.name} -> {far_end}",
            }
        },
    }
    if desired.tools:
        body["tools"] = desired.tools
    return body


def create_task(client: PSchedulerClient, desired: DesiredTask, start: datetime, until: datetime) -> Task | None:
    """Creates the task on its node, its row first: a mesh deleted while the node answers
    leaves the row (its mesh test and slot set to null) with the task's URL, so the next sync
    deletes the task from the node. Saving the row after the POST failed on the gone mesh
    test and left the task on the node, unknown to Fathom. None: the mesh test or slot was
    gone before the row was saved, and nothing was created.

    The row is saved unanswered and becomes active with the node's answer: until then the
    task has no URL, and a worker that dies mid-POST leaves it as a POST with no answer (a
    timeout, a dropped connection) does, for the next sync to look up by its reference
    (settle_unanswered), never as an active task without a URL."""
    task_id = uuid.uuid4()
    task = Task(
        id=task_id,
        node=desired.node,
        key=desired.key,
        mesh_test=desired.mesh_test,
        slot=desired.slot,
        test_type=desired.test_type,
        source=desired.source,
        destination=desired.destination,
        target=desired.target,
        test_id=desired.test_id,
        body=task_json(desired, task_id, start, until, secret=False),
        starts_at=start,
        until=until,
        state=TaskState.UNANSWERED,
        reason=IN_FLIGHT,
    )
    try:
        with transaction.atomic():
            task.save()
    except IntegrityError:
        return None
    try:
        task.url = client.create_task(task_json(desired, task_id, start, until, secret=True))
        task.state, task.reason = TaskState.ACTIVE, ""
    except PSchedulerError as error:
        task.state = TaskState.UNANSWERED if error.unanswered else TaskState.REFUSED
        task.reason = str(error)[:2000]
    Task.objects.filter(pk=task_id).update(url=task.url, state=task.state, reason=task.reason)
    return task


def miss_slot(task: Task, reason: str) -> None:
    if task.slot_id is not None:
        planned = Slot.objects.filter(pk=task.slot_id, state=SlotState.PLANNED)
        planned.update(state=SlotState.MISSED, reason=reason[:500])


def settle_unanswered(
    clients: dict[Any, PSchedulerClient | PSchedulerError],
    report: SyncReport,
    now: datetime,
    deadline: float | None = None,
) -> None:
    """Looks up each task whose POST got no answer, by its reference: one the node made is
    adopted with its URL (the sync then keeps or deletes it like any other), one it did not
    make is refused with the POST's reason. A node that cannot be asked keeps its tasks
    unanswered, and no twin of them is posted meanwhile, until the task's end: whatever the
    node made has run its course by then. One failed lookup per node and sync is enough."""
    cannot_ask: set[Any] = set()
    for task in Task.objects.filter(state=TaskState.UNANSWERED).select_related("node"):
        client = clients.get(task.node_id)
        if not isinstance(client, PSchedulerClient) or task.node_id in cannot_ask:
            continue
        if report.past(deadline):
            return
        try:
            found = url_on_node(client, task.pk)
        except PSchedulerError as error:
            cannot_ask.add(task.node_id)
            report.errors.append(f"the unanswered task {task.pk} could not be looked up: {error}")
            if task.until <= now:
                reason = f"{task.reason}; it ended before the node could say whether it made it"
                Task.objects.filter(pk=task.pk).update(state=TaskState.DELETED, deleted_at=now, reason=reason[:2000])
            continue
        # Settled either way: the node's "no answer" line gives way to the outcome.
        Node.objects.filter(pk=task.node_id, last_error__startswith=NO_ANSWER).update(last_error="", last_error_at=None)
        if found:
            reason = f"created by a POST that got no answer ({task.reason})"
            Task.objects.filter(pk=task.pk).update(url=found, state=TaskState.ACTIVE, reason=reason[:2000])
            report.adopted += 1
        else:
            reason = f"{task.reason}; the node has no such task"
            Task.objects.filter(pk=task.pk).update(state=TaskState.REFUSED, reason=reason[:2000])
            note_error(task.node, f"task refused: {reason}", now)
            miss_slot(task, f"the perfSONAR node did not create the task: {reason}")


# --- reconciling -----------------------------------------------------------------------


def node_clients() -> dict[Any, PSchedulerClient | PSchedulerError]:
    found: dict[Any, PSchedulerClient | PSchedulerError] = {}
    for node in Node.objects.select_related("agent"):
        try:
            found[node.pk] = client_for(node)
        except PSchedulerError as error:
            found[node.pk] = error
    return found


def reconcile(now: datetime | None = None, deadline: float | None = None) -> SyncReport:
    """Creates, renews and deletes tasks on nodes until they match what the meshes want,
    starting no call to a node after `deadline` (monotonic; None: none)."""
    now = now or timezone.now()
    report = SyncReport()
    ttl = timedelta(seconds=settings.PERFSONAR_TASK_TTL_S)
    wanted = {task.key: task for task in desired_background()}
    wanted.update((task.key, task) for task in map(slot_task, slots_for_nodes(now)))
    clients = node_clients()
    settle_unanswered(clients, report, now, deadline)
    active = list(Task.objects.filter(state=TaskState.ACTIVE).select_related("node__agent", "slot"))

    by_key: dict[str, list[Task]] = {}
    for task in active:
        client = clients.get(task.node_id)
        gone = task.node.agent.revoked_at is not None
        if task.slot_id is not None or task.key.startswith("slot:"):
            keep = task.slot_id is not None and not gone
        else:
            keep = task.key in wanted and not gone
        if task.until <= now and keep:
            by_key.setdefault(task.key, []).append(task)
            continue  # ran its course: kept until its runs are polled (poll() retires it)
        if keep:
            by_key.setdefault(task.key, []).append(task)
            continue
        if isinstance(client, PSchedulerClient) and not report.past(deadline):
            failures = delete_task(client, task, reason="no longer in a mesh")
            if failures:
                report.errors.extend(failures)
                note_error(task.node, failures[0], now)
            else:
                report.deleted += 1

    recently_refused = set(
        Task.objects.filter(
            Q(state=TaskState.REFUSED, created_at__gt=now - REFUSED_RETRY) | Q(state=TaskState.UNANSWERED)
        ).values_list("key", flat=True)
    )
    for key, desired in wanted.items():
        current = by_key.get(key, [])
        if key in recently_refused:
            continue
        if desired.slot is not None:
            if current:
                continue
            start, until = desired.starts_at, desired.ends_at
            assert start is not None and until is not None
        else:
            last_until = max((task.until for task in current), default=None)
            if last_until is not None and last_until - now > ttl / 4:
                continue
            lead = now + timedelta(seconds=settings.PERFSONAR_FIRST_RUN_LEAD_S)
            start = last_until if last_until is not None and last_until > lead else lead
            until = start + ttl
        client = clients.get(desired.node.pk)
        if not isinstance(client, PSchedulerClient):
            report.errors.append(str(client))
            continue
        if report.past(deadline):
            break
        made = create_task(client, desired, start, until)
        if made is None:
            continue  # its mesh went while this sync ran
        if made.state == TaskState.REFUSED:
            report.refused += 1
            report.errors.append(made.reason)
            note_error(desired.node, f"task refused: {made.reason}", now)
            miss_slot(made, f"the perfSONAR node refused the task: {made.reason}")
        elif made.state == TaskState.UNANSWERED:
            report.unanswered += 1
            report.errors.append(made.reason)
            note_error(desired.node, f"{NO_ANSWER} (looked up on the next sync): {made.reason}", now)
        elif current:
            report.renewed += 1
        else:
            report.created += 1
    return report
