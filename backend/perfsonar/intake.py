"""Taking in a perfSONAR node's runs: pushed by its http archiver (perfsonar/api/views.py)
or, when a push has not arrived PERFSONAR_POLL_AFTER_S after a run ended, polled from the
node. Either way one run is one result (its id derived from the run's task and run UUIDs),
stored through measurements' ingest, so ceilings, modes, findings, charts and alerts see
perfSONAR paths as any other. Runs that did not succeed are stored as failed or missed runs
with pScheduler's reason."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from inventory.models import Agent
from measurements.ingest import InvalidBatch, ingest_batch
from measurements.models import Run
from meshes.models import MeshTest
from meshes.services.paths import Path, mesh_paths, mesh_test_id
from meshes.specs import normalize_spec
from perfsonar.choices import RUN_OVER, TaskState
from perfsonar.client import PSchedulerClient, PSchedulerError
from perfsonar.mapping import MappingError, Placement, PsRun, result_id, run_from_record, to_result
from perfsonar.mapping.kinds import KIND_OF_TEST
from perfsonar.models import Node, Task
from perfsonar.nodes import delete_task, note_error
from perfsonar.reconcile import SyncReport, node_clients
from perfsonar.run_schedule import refusal, too_often

logger = logging.getLogger(__name__)

# The longest a run lasts (throughput: 300 s, 60 s omitted, pScheduler's setup).
POLL_OVERLAP = timedelta(minutes=10)
# pScheduler keeps finished runs 2 days: past that nothing is left to poll.
NODE_KEEPS_RUNS = timedelta(days=2)

# --- taking in runs ----------------------------------------------------------------------


def placement(task: Task) -> Placement:
    options: dict[str, Any] = {}
    if task.slot is not None:
        options = dict(task.slot.spec)
    elif task.mesh_test is not None:
        try:
            options = normalize_spec(task.test_type, task.mesh_test.spec)
        except Exception:  # noqa: BLE001 - a spec edited since: the run's own spec still maps
            options = {}
    return Placement(
        test_type=task.test_type,
        test_id=task.test_id,
        peer_id=str(task.destination_id) if task.destination_id else None,
        target=task.target,
        slot_id=str(task.slot_id) if task.slot_id else None,
        reversed=bool(options.get("reverse")),
        options=options,
        measured_by_peer=task.destination_id is not None and task.destination_id == task.node_id,
    )


class RunRefused(Exception):
    """A run that cannot be stored (it does not map, or ingest refuses it): why."""


def store_run(task: Task, run: PsRun, now: datetime | None = None) -> str:
    """Stores one run of `task` as a Fathom result: "created" or "duplicate". A run its task
    could not have run (run_schedule.py) is refused."""
    reason = refusal(task, run, result_id(run.href))
    if reason:
        raise RunRefused(f"the run {run.href} is not taken: {reason}")
    return store_placed_run(task.source, placement(task), run, now)


def store_subscribed_run(node: Node, run: PsRun, now: datetime | None = None) -> str | None:
    """Stores a run of a task the node made itself from a mesh it subscribes to, as
    store_run does one of Fathom's tasks; None when the run belongs to no such path."""
    subscribed = subscribed_placement(node, run)
    if subscribed is None:
        return None
    source, where, interval_s = subscribed
    reason = too_often(source.pk, where.test_id, run, result_id(run.href), interval_s)
    if reason:
        raise RunRefused(f"the run {run.href} is not taken: {reason}")
    return store_placed_run(source, where, run, now)


def store_placed_run(source: Agent, where: Placement, run: PsRun, now: datetime | None = None) -> str:
    result = to_result(run, where)
    try:
        with transaction.atomic():
            statuses = ingest_batch(source, {"schema_version": 1, "results": [result]}, now=now, vouched=True)
    except InvalidBatch as error:
        detail = "; ".join(f"{e.path}: {e.message}" for e in error.errors[:5])
        raise RunRefused(f"the run {run.href} does not fit Fathom's result contract: {detail}") from error
    return statuses[0].status


def task_of_run(node: Node, run: PsRun) -> Task | None:
    """The Fathom task a pushed run belongs to: named by the task's reference, or by its URL,
    and only on the node that pushed it."""
    reference = run.reference if isinstance(run.reference, dict) else {}
    fathom = reference.get("fathom") if isinstance(reference.get("fathom"), dict) else None
    if fathom is not None and isinstance(fathom.get("task"), str):
        try:
            task_id = uuid.UUID(fathom["task"])
        except ValueError:
            task_id = None
        if task_id is not None:
            task = Task.objects.select_related("source", "slot", "mesh_test").filter(pk=task_id, node=node).first()
            if task is not None:
                return task
    if run.task_href:
        return Task.objects.select_related("source", "slot", "mesh_test").filter(url=run.task_href, node=node).first()
    return None


def subscribed_placement(node: Node, run: PsRun) -> tuple[Agent, Placement, float] | None:
    """Where a run of a task the node made itself belongs: a node that subscribes to a mesh
    exported as a pSConfig template tags its tasks with the mesh and test (reference.fathom)
    and measures between the template's addresses. Only a path of that mesh test, led by the
    node that pushed it, is taken. With the placement, the mesh test's interval."""
    reference = run.reference if isinstance(run.reference, dict) else {}
    fathom = reference.get("fathom") if isinstance(reference.get("fathom"), dict) else None
    if fathom is None or not isinstance(fathom.get("mesh"), str) or not isinstance(fathom.get("test"), str):
        return None
    test_type = KIND_OF_TEST.get(run.test_type)
    test = MeshTest.objects.select_related("mesh").filter(mesh__name=fathom["mesh"], name=fathom["test"]).first()
    if test is None or test_type != test.test_type:
        return None
    source_address = str(run.spec.get("source") or node.agent.address)
    target = str(run.spec.get("dest") or "")
    if source_address not in (node.agent.address, node.agent.name):
        return None  # a node reports the runs it leads, never another host's
    wanted = [path for path in mesh_paths(source=node.agent) if path.test.pk == test.pk and target in _names_of(path)]
    if not wanted:
        return None
    path = wanted[0]
    far_end = str(path.destination.pk) if path.destination is not None else path.target
    options = normalize_spec(test.test_type, test.spec)
    return (
        node.agent,
        Placement(
            test_type=test.test_type,
            test_id=mesh_test_id(test.mesh.name, test.name, far_end),
            peer_id=str(path.destination.pk) if path.destination is not None else None,
            target=path.target,
            slot_id=None,
            reversed=bool(run.spec.get("reverse")),
            options=options,
        ),
        float(test.interval_s),
    )


def _names_of(path: Path) -> set[str]:
    if path.destination is None:
        return {path.target}
    return {path.target, path.destination.address, path.destination.name}


def poll(now: datetime | None = None, deadline: float | None = None) -> SyncReport:
    """Fetches the runs whose push never arrived (a firewall between node and Fathom, an
    archiver that gave up) from the nodes, and retires tasks that ran their course; no task
    is begun after `deadline` (monotonic; None: none)."""
    now = now or timezone.now()
    report = SyncReport()
    settle = timedelta(seconds=settings.PERFSONAR_POLL_AFTER_S)
    horizon = now - settle
    tasks = (
        Task.objects.filter(state=TaskState.ACTIVE, created_at__gt=now - NODE_KEEPS_RUNS, starts_at__lt=horizon)
        .exclude(url="")
        .filter(Q(polled_until__isnull=True) | Q(polled_until__lt=horizon))
        .select_related("node__agent", "source", "slot", "mesh_test")
    )
    clients = node_clients()
    for task in tasks:
        client = clients.get(task.node_id)
        if not isinstance(client, PSchedulerClient):
            continue
        if report.past(deadline):
            break
        try:
            report.polled_runs += _poll_task(client, task, horizon, now)
        except PSchedulerError as error:
            report.errors.append(f"{task.url}: {error}")
            note_error(task.node, f"poll failed: {error}", now)
            continue
        except Exception as error:  # one task's fault must not stop the others' polling
            logger.exception("polling %s failed", task.url)
            report.errors.append(f"{task.url}: {type(error).__name__}")
            note_error(task.node, f"poll failed: an internal error ({type(error).__name__}), logged", now)
            continue
        Node.objects.filter(pk=task.node_id).update(last_poll_at=now)
        ran_its_course = task.polled_until is not None and task.polled_until >= task.until + settle
        # Its runs are over and taken in: deleted from the node too (pScheduler keeps the runs
        # of a deleted task), so nothing Fathom made lingers there.
        if ran_its_course and not delete_task(client, task, reason="ran its course"):
            report.expired += 1
    return report


def _poll_task(client: PSchedulerClient, task: Task, horizon: datetime, now: datetime) -> int:
    # pScheduler lists the runs that lie wholly inside [start, end]: a run still going at one
    # poll is only listed by a later one, so each window reaches back over the longest run.
    first = task.starts_at - timedelta(minutes=1)
    start = max(first, task.polled_until - POLL_OVERLAP) if task.polled_until else first
    end = min(horizon, task.until + timedelta(seconds=settings.PERFSONAR_POLL_AFTER_S))
    if end <= start:
        return 0
    polled_until = end
    stored = 0
    task_json_cache: dict[str, Any] | None = None
    ids: dict[str, uuid.UUID] = {}
    for url in client.run_urls(task.url, start, end):
        try:
            ids[url] = result_id(url)
        except MappingError as error:
            note_error(task.node, f"poll: {error}", now)
    known = set(Run.objects.filter(id__in=ids.values()).values_list("id", flat=True))
    for url in (url for url, run_id in ids.items() if run_id not in known):
        try:
            record = client.run(url)
        except PSchedulerError as error:
            if error.kind != "malformed":
                raise  # the node is unreachable or refusing: this window is polled again later
            # An answer Fathom can never keep (NUL, NaN, nesting): asking again gives the same.
            note_error(task.node, f"poll: run refused: {error}", now)
            continue
        if record.get("state") not in RUN_OVER:
            begun = _start_of(record)
            if begun is not None:
                polled_until = min(polled_until, begun)
            continue
        if task_json_cache is None:
            task_json_cache = client.task(task.url)
        try:
            run = run_from_record(record, task_json_cache)
            if store_run(task, run, now) == "created":
                stored += 1
        except (MappingError, RunRefused) as error:
            note_error(task.node, str(error), now)
        except DatabaseError:
            raise  # the database, not this run: the window is polled again later
        except Exception as error:  # one run Fathom cannot take must not hold the task's others back
            logger.exception("storing %s failed", url)
            note_error(task.node, f"poll: run refused: an internal error ({type(error).__name__}), logged", now)
    Task.objects.filter(pk=task.pk).update(polled_until=polled_until)
    task.polled_until = polled_until
    return stored


def _start_of(record: dict[str, Any]) -> datetime | None:
    value = record.get("start-time")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
