"""Keeping perfSONAR nodes' pScheduler tasks in step with the meshes, and taking in runs.

Fathom decides what every node runs, as it does for its agents, and every task is led by a
node (docs/perfsonar.md):
- ping and trace from a node: one repeating rtt or trace task per path on the node, lasting
  PERFSONAR_TASK_TTL_S and renewed (a successor starting where it ends) when a quarter of it
  is left, as pSConfig's agent does;
- throughput with a node at either end: the central planner reserves the slot as for any
  pair (a node's exclusive time is modelled like an agent's), and the node gets one one-shot
  task starting exactly at the slot. Between two nodes it is pScheduler's two-ended test;
  with a Fathom agent it is a single-ended test against the one-off iperf3 server the agent
  opens for that slot (reverse when the agent sends), so the agent's exclusive time is the
  slot and nothing else.
A task the meshes no longer want is deleted from its node; every task's URL is recorded.

Runs come back by push (the http archiver, perfsonar/api/views.py) or, when a push has not
arrived PERFSONAR_POLL_AFTER_S after a run ended, by polling the node. Either way one run is
one result (its id is derived from the run's URL), stored through measurements' ingest, so
ceilings, modes, findings, charts and alerts see perfSONAR paths as any other.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import TestType
from measurements.ingest import InvalidBatch, ingest_batch
from measurements.models import Run
from meshes.choices import SlotState
from meshes.models import MeshTest, Slot
from meshes.services import Path, mesh_paths, mesh_test_id
from meshes.specs import normalize_spec
from perfsonar.choices import TaskState
from perfsonar.client import PSchedulerClient, PSchedulerError
from perfsonar.durations import format_duration
from perfsonar.mapping import MappingError, Placement, PsRun, result_id, run_from_record, to_result
from perfsonar.mapping.kinds import KIND_OF_TEST
from perfsonar.models import Node, Task
from perfsonar.nodes import client_for, delete_task, note_error
from perfsonar.tokens import authorization_header

log = logging.getLogger(__name__)

ARCHIVE_PATH = "/api/v1/perfsonar/archive/"
# pScheduler runs that are over (run_state.sql); anything else may still change.
TERMINAL_STATES = frozenset({"finished", "overdue", "missed", "failed", "preempted", "nonstart", "canceled"})
# A task the node refused is tried again after this long (limits may be raised meanwhile).
REFUSED_RETRY = timedelta(minutes=15)
# The longest a run lasts (throughput: 300 s, 60 s omitted, pScheduler's setup).
POLL_OVERLAP = timedelta(minutes=10)
# pScheduler keeps finished runs 2 days: past that nothing is left to poll.
NODE_KEEPS_RUNS = timedelta(days=2)


@dataclass(frozen=True)
class DesiredTask:
    key: str
    node: Node
    mesh_test: MeshTest
    slot: Slot | None
    test_type: str
    source: Agent
    destination: Agent | None
    target: str
    test_id: str
    test: dict[str, Any]  # pScheduler's {type, spec}
    tools: list[str]
    repeat_s: int  # 0: one run
    slip_s: int
    starts_at: datetime | None  # one-shot tasks: exactly this
    ends_at: datetime | None


@dataclass
class SyncReport:
    created: int = 0
    renewed: int = 0
    deleted: int = 0
    refused: int = 0
    expired: int = 0
    polled_runs: int = 0
    errors: list[str] = field(default_factory=list)


def is_node(agent: Agent | None) -> bool:
    return agent is not None and agent.kind == AgentKind.PERFSONAR


def _seconds(value: float) -> str:
    return format_duration(float(value))


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


# --- what the meshes want --------------------------------------------------------------


def rtt_test(target: str, options: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schema": 1,
        "dest": target,
        "count": int(options["count"]),
        "interval": _seconds(options["interval_s"]),
        "length": int(options["size_bytes"]),
    }
    if options.get("ttl"):
        spec["ttl"] = int(options["ttl"])
    return {"type": "rtt", "spec": spec}


def trace_test(target: str, options: dict[str, Any]) -> dict[str, Any]:
    # pScheduler traces one path per run: Fathom's per-flow enumeration (flows, source ports)
    # has no equivalent, so a node's trace shows the route its default flow takes.
    return {
        "type": "trace",
        "spec": {
            "schema": 1,
            "dest": target,
            "queries": int(options["queries"]),
            "wait": _seconds(options["wait_s"]),
            "hops": int(options["max_hops"]),
            "probe-type": "udp",
            "dest-port": int(options["dst_port"]),
        },
    }


def throughput_test(slot: Slot, source: Agent, destination: Agent) -> dict[str, Any]:
    options = slot.spec
    spec: dict[str, Any] = {"schema": 1, "duration": _seconds(options["duration_s"])}
    if options.get("omit_s"):
        spec["omit"] = _seconds(options["omit_s"])
    if int(options.get("parallel") or 1) > 1:
        spec["parallel"] = int(options["parallel"])
    if options.get("window_bytes"):
        spec["window-size"] = int(options["window_bytes"])
    if options.get("udp"):
        spec["udp"] = True
        spec["bandwidth"] = int(options["bitrate_bps"])
    elif options.get("bitrate_bps"):
        spec["bandwidth"] = int(options["bitrate_bps"])
    if options.get("congestion"):
        spec["congestion"] = options["congestion"]
    if options.get("mss"):
        spec["mss"] = int(options["mss"])
    fathom_reverse = bool(options.get("reverse"))
    if is_node(source) and is_node(destination):
        spec.update({"source": source.address, "dest": destination.address})
        if fathom_reverse:
            spec["reverse"] = True
    else:
        # Led by the node; its iperf3 client meets the agent's one-off server. When the agent
        # sends, pScheduler reverses the node's client.
        agent = destination if is_node(source) else source
        spec.update(
            {
                "schema": 2,
                "dest": agent.address,
                "single-ended": True,
                "single-ended-port": int(settings.PERFSONAR_IPERF3_PORT),
            }
        )
        if (agent.pk == source.pk) != fathom_reverse:
            spec["reverse"] = True
    return {"type": "throughput", "spec": spec}


def _background(path: Path) -> DesiredTask | None:
    source, test = path.source, path.test
    if not is_node(source) or test.test_type not in (TestType.PING, TestType.TRACE):
        return None
    options = normalize_spec(test.test_type, test.spec)
    ps_test = rtt_test(path.target, options) if test.test_type == TestType.PING else trace_test(path.target, options)
    far_end = str(path.destination.pk) if path.destination is not None else path.target
    key = f"bg:{test.pk}:{source.pk}:{far_end}:{_digest([ps_test, test.interval_s, test.slip_s])}"
    return DesiredTask(
        key=key,
        node=source.perfsonar_node,
        mesh_test=test,
        slot=None,
        test_type=test.test_type,
        source=source,
        destination=path.destination,
        target=path.target,
        test_id=mesh_test_id(test.mesh.name, test.name, far_end),
        test=ps_test,
        tools=[],
        repeat_s=test.interval_s,
        slip_s=min(test.slip_s, test.interval_s),
        starts_at=None,
        ends_at=None,
    )


def _slot_task(slot: Slot) -> DesiredTask:
    source, destination = slot.source, slot.destination
    lead = source if is_node(source) else destination
    test = slot.mesh_test
    assert test is not None
    return DesiredTask(
        key=f"slot:{slot.pk}",
        node=lead.perfsonar_node,
        mesh_test=test,
        slot=slot,
        test_type=slot.test_type,
        source=source,
        destination=destination,
        target=destination.address,
        test_id=mesh_test_id(test.mesh.name, test.name, str(destination.pk)),
        test=throughput_test(slot, source, destination),
        tools=["iperf3"],
        repeat_s=0,
        slip_s=0,
        starts_at=slot.start_at,
        ends_at=slot.end_at,
    )


def desired_background() -> list[DesiredTask]:
    paths = mesh_paths(exclusive=False)
    nodes = {agent.pk for agent in Agent.objects.filter(kind=AgentKind.PERFSONAR, revoked_at__isnull=True)}
    wanted = []
    for path in paths:
        if path.source.pk in nodes and (task := _background(path)) is not None:
            wanted.append(task)
    return wanted


def slots_for_nodes(now: datetime) -> list[Slot]:
    """Planned throughput slots with a node at one end, starting soon enough to be given to
    the node and late enough for pScheduler to place them."""
    with_node = Q(source__kind=AgentKind.PERFSONAR) | Q(destination__kind=AgentKind.PERFSONAR)
    return list(
        Slot.objects.filter(
            with_node,
            state=SlotState.PLANNED,
            mesh_test__isnull=False,
            start_at__gte=now + timedelta(seconds=settings.PERFSONAR_SLOT_TASK_MIN_LEAD_S),
            start_at__lte=now + timedelta(seconds=settings.PERFSONAR_SLOT_TASK_AHEAD_S),
        ).select_related("source__perfsonar_node", "destination__perfsonar_node", "mesh_test__mesh")
    )


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
        schedule.update({"repeat": _seconds(desired.repeat_s), "until": until.isoformat()})
        if desired.slip_s:
            schedule.update({"slip": _seconds(desired.slip_s), "sliprand": True})
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


def create_task(client: PSchedulerClient, desired: DesiredTask, start: datetime, until: datetime) -> Task:
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
    )
    try:
        task.url = client.create_task(task_json(desired, task_id, start, until, secret=True))
    except PSchedulerError as error:
        task.state = TaskState.REFUSED
        task.reason = str(error)[:2000]
    task.save()
    return task


# --- reconciling -----------------------------------------------------------------------


def _clients() -> dict[Any, PSchedulerClient | PSchedulerError]:
    found: dict[Any, PSchedulerClient | PSchedulerError] = {}
    for node in Node.objects.select_related("agent"):
        try:
            found[node.pk] = client_for(node)
        except PSchedulerError as error:
            found[node.pk] = error
    return found


def reconcile(now: datetime | None = None) -> SyncReport:
    """Creates, renews and deletes tasks on nodes until they match what the meshes want."""
    now = now or timezone.now()
    report = SyncReport()
    ttl = timedelta(seconds=settings.PERFSONAR_TASK_TTL_S)
    wanted = {task.key: task for task in desired_background()}
    wanted.update((task.key, task) for task in map(_slot_task, slots_for_nodes(now)))
    active = list(Task.objects.filter(state=TaskState.ACTIVE).select_related("node__agent", "slot"))
    clients = _clients()

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
        if isinstance(client, PSchedulerClient):
            failures = delete_task(client, task, reason="no longer in a mesh")
            if failures:
                report.errors.extend(failures)
                note_error(task.node, failures[0], now)
            else:
                report.deleted += 1

    recently_refused = set(
        Task.objects.filter(state=TaskState.REFUSED, created_at__gt=now - REFUSED_RETRY).values_list("key", flat=True)
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
        task = create_task(client, desired, start, until)
        if task.state == TaskState.REFUSED:
            report.refused += 1
            report.errors.append(task.reason)
            note_error(desired.node, f"task refused: {task.reason}", now)
            if desired.slot is not None:
                Slot.objects.filter(pk=desired.slot.pk, state=SlotState.PLANNED).update(
                    state=SlotState.MISSED, reason=f"the perfSONAR node refused the task: {task.reason}"[:500]
                )
        elif current:
            report.renewed += 1
        else:
            report.created += 1
    return report


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
    )


class RunRefused(Exception):
    """A run that cannot be stored (it does not map, or ingest refuses it): why."""


def store_run(task: Task, run: PsRun, now: datetime | None = None) -> str:
    """Stores one run of `task` as a Fathom result: "created" or "duplicate"."""
    return store_placed_run(task.source, placement(task), run, now)


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


def subscribed_placement(node: Node, run: PsRun) -> tuple[Agent, Placement] | None:
    """Where a run of a task the node made itself belongs: a node that subscribes to a mesh
    exported as a pSConfig template tags its tasks with the mesh and test (reference.fathom)
    and measures between the template's addresses. Only a path of that mesh test, led by the
    node that pushed it, is taken."""
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
    return node.agent, Placement(
        test_type=test.test_type,
        test_id=mesh_test_id(test.mesh.name, test.name, far_end),
        peer_id=str(path.destination.pk) if path.destination is not None else None,
        target=path.target,
        slot_id=None,
        reversed=bool(run.spec.get("reverse")),
        options=options,
    )


def _names_of(path: Path) -> set[str]:
    if path.destination is None:
        return {path.target}
    return {path.target, path.destination.address, path.destination.name}


def poll(now: datetime | None = None) -> SyncReport:
    """Fetches the runs whose push never arrived (a firewall between node and Fathom, an
    archiver that gave up) from the nodes, and retires tasks that ran their course."""
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
    clients = _clients()
    for task in tasks:
        client = clients.get(task.node_id)
        if not isinstance(client, PSchedulerClient):
            continue
        try:
            report.polled_runs += _poll_task(client, task, horizon, now)
        except PSchedulerError as error:
            report.errors.append(f"{task.url}: {error}")
            note_error(task.node, f"poll failed: {error}", now)
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
        record = client.run(url)
        if record.get("state") not in TERMINAL_STATES:
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
