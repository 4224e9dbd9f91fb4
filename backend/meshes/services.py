"""Meshes turned into work: each agent's plan, and the central planning of exclusive slots.

A mesh yields directed paths (source agent -> destination agent, or -> an external target for
list meshes). Background tests (ping, flow sweep, trace) go to the source agent as periodic
tests it schedules itself. Exclusive tests (throughput) are planned here, ahead of time, in
slots that never overlap for any agent as sender or receiver across all meshes (pScheduler's
exclusive class without its negotiation and non-starters); each agent's plan lists its slots.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import FloatField, Min, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import EXCLUSIVE_TEST_TYPES, RunStatus, TestType
from measurements.kinds.base import BatchError, timestamp
from measurements.models import Run
from measurements.retention import raw_retention_cutoff
from meshes import slots
from meshes.choices import MemberSide, MeshKind, SlotState
from meshes.iperf3_auth import Iperf3Auth, Iperf3User, client_auth, server_user
from meshes.models import IssuedPlan, Mesh, MeshMember, MeshTest, PlannerState, Slot
from meshes.specs import (
    DEFAULT_TESTS,
    PSCHEDULER_RUN_MARGIN_S,
    THROUGHPUT_MARGIN_S,
    normalize_spec,
    reserved_seconds,
)

PLAN_SCHEMA_VERSION = 1
UPLOAD_INTERVAL_S = 10
HOST_FACTS_INTERVAL_S = 300
# Slots already started this long ago are still listed, so an agent that fetches its plan
# just after a start learns of the slot and reports it missed rather than never.
SLOT_LATE_START_S = 30


def slot_key(test_id: Any, source_id: Any, destination_id: Any) -> str:
    """One periodic exclusive test on one directed path, as the planner names it."""
    return f"{test_id}:{source_id}:{destination_id}"


def mesh_test_id(mesh_name: str, test_name: str, far_end: str) -> str:
    """The plan's id of a mesh test on one path, as results report it back."""
    return f"{mesh_name}/{test_name}:{far_end}"


@dataclass(frozen=True)
class Peer:
    id: str | None
    name: str
    address: str


@dataclass(frozen=True)
class PlannedTest:
    id: str
    type: str
    interval_s: int
    peer: Peer
    spec: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlannedSlot:
    id: str
    test_id: str
    type: str
    start_at: str
    peer: Peer
    spec: dict[str, Any]
    iperf3_auth: Iperf3Auth | None = None


@dataclass(frozen=True)
class Iperf3Window:
    """A slot in which a perfSONAR node's iperf3 client meets this agent: the agent opens a
    one-off iperf3 server on `port` for it (pScheduler cannot present Fathom's credentials)."""

    slot_id: str
    start_at: str
    end_at: str
    port: int
    peer_name: str
    peer_address: str


@dataclass(frozen=True)
class Plan:
    agent_id: str
    version: str
    generated_at: datetime
    valid_until: datetime
    tests: list[PlannedTest]
    slots: list[PlannedSlot]
    iperf3_users: list[Iperf3User] = field(default_factory=list)
    iperf3_windows: list[Iperf3Window] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "agent_id": self.agent_id,
            "version": self.version,
            "generated_at": self.generated_at.isoformat(),
            "valid_until": self.valid_until.isoformat(),
            "upload_interval_s": UPLOAD_INTERVAL_S,
            "host_facts_interval_s": HOST_FACTS_INTERVAL_S,
            "tests": [asdict(test) for test in self.tests],
            "slots": [asdict(slot) for slot in self.slots],
            "iperf3_users": [asdict(user) for user in self.iperf3_users],
            "iperf3_windows": [asdict(window) for window in self.iperf3_windows],
        }


@dataclass(frozen=True)
class Path:
    """One directed path of a mesh test: a source agent and an agent or external target."""

    test: MeshTest
    source: Agent
    destination: Agent | None
    target: str  # the destination's address, or the external target of a list mesh

    @property
    def peer(self) -> Peer:
        if self.destination is None:
            return Peer(None, self.target, self.target)
        return Peer(str(self.destination.pk), self.destination.name, self.destination.address)

    @property
    def test_id(self) -> str:
        far_end = str(self.destination.pk) if self.destination else self.target
        return mesh_test_id(self.test.mesh.name, self.test.name, far_end)

    @property
    def slot_key(self) -> str:
        assert self.destination is not None
        return slot_key(self.test.pk, self.source.pk, self.destination.pk)


def active_agents() -> list[Agent]:
    return list(Agent.objects.filter(revoked_at__isnull=True).order_by("name"))


def mesh_pairs(
    mesh: Mesh, agents: dict[Any, Agent], source: Agent | None = None
) -> Iterator[tuple[Agent, Agent | None, str]]:
    """The directed (source, destination, target) pairs of a mesh among active agents,
    optionally only those from one source (an agent's plan must not cost the whole mesh)."""
    if mesh.all_agents:
        members: list[tuple[Agent, str]] = [(agent, MemberSide.A) for agent in agents.values()]
    else:
        members = [(agents[m.agent_id], m.side) for m in mesh.members.all() if m.agent_id in agents]
    return member_pairs(mesh.kind, mesh.unidirectional, mesh.targets, members, source)


def member_pairs(
    kind: str, unidirectional: bool, targets: list[str], members: list[tuple[Agent, str]], source: Agent | None = None
) -> Iterator[tuple[Agent, Agent | None, str]]:
    """The directed (source, destination, target) pairs of a group of (agent, side) members:
    every ordered pair of a mesh, A to B (and back) of a disjoint mesh, each member to each
    target of a list; optionally only those from one source."""

    def wanted(agent: Agent) -> bool:
        return source is None or agent.pk == source.pk

    if kind == MeshKind.MESH:
        for src, _ in members:
            if wanted(src):
                for dst, _ in members:
                    if src.pk != dst.pk:
                        yield src, dst, dst.address
    elif kind == MeshKind.DISJOINT:
        a_side = [agent for agent, side in members if side == MemberSide.A]
        b_side = [agent for agent, side in members if side == MemberSide.B]
        for a in a_side:
            for b in b_side:
                if wanted(a):
                    yield a, b, b.address
                if not unidirectional and wanted(b):
                    yield b, a, a.address
    else:  # list: every member to every external target
        for src, _ in members:
            if wanted(src):
                for target in targets:
                    yield src, None, str(target)


def mesh_paths(source: Agent | None = None, exclusive: bool | None = None) -> list[Path]:
    """Every enabled test's paths, optionally only one source's, or only (non-)exclusive tests.

    One source's paths (its plan, checking its results: every poll and upload) read only the
    meshes it is in and their members, not the whole fleet.
    """
    query = MeshTest.objects.filter(enabled=True, mesh__enabled=True).select_related("mesh")
    if exclusive is not None:
        type_filter = Q(test_type__in=EXCLUSIVE_TEST_TYPES)
        query = query.filter(type_filter if exclusive else ~type_filter)
    if source is not None:
        its_meshes = MeshMember.objects.filter(agent=source).values("mesh_id")
        query = query.filter(Q(mesh__all_agents=True) | Q(mesh_id__in=its_meshes))
    tests = list(query.prefetch_related("mesh__members").order_by("mesh__name", "name"))
    if source is None or any(test.mesh.all_agents for test in tests):
        agents = {agent.pk: agent for agent in active_agents()}
    else:
        members = {member.agent_id for test in tests for member in test.mesh.members.all()}
        agents = {agent.pk: agent for agent in Agent.objects.filter(pk__in=members, revoked_at__isnull=True)}
    paths: list[Path] = []
    for test in tests:
        paths.extend(Path(test, src, dst, target) for src, dst, target in mesh_pairs(test.mesh, agents, source))
    return paths


def path_min_rtt_ms(paths: Iterable[tuple[Any, Any]], since: datetime) -> dict[tuple[Any, Any], float]:
    """The smallest ping RTT per (source, destination) since a time: what omit is derived from."""
    pairs = list(paths)
    if not pairs:
        return {}
    sources = {source for source, _ in pairs}
    rows = (
        Run.objects.filter(test_type="ping", status=RunStatus.OK, started_at__gte=since, source_id__in=sources)
        .values("source_id", "destination_id")
        .annotate(rtt=Min(Cast(KeyTextTransform("rtt_min_ms", "summary"), FloatField())))
    )
    return {(row["source_id"], row["destination_id"]): float(row["rtt"]) for row in rows if row["rtt"] is not None}


def background_tests(agent: Agent) -> list[PlannedTest]:
    """The agent's periodic tests. A flow sweep needs Fathom's echo responder at the far end,
    so none runs towards a perfSONAR node."""
    return [
        PlannedTest(
            id=path.test_id,
            type=path.test.test_type,
            interval_s=path.test.interval_s,
            peer=path.peer,
            spec=normalize_spec(path.test.test_type, path.test.spec),
        )
        for path in mesh_paths(source=agent, exclusive=False)
        if not (path.test.test_type == TestType.FLOWSWEEP and _is_node(path.destination))
    ]


def _is_node(agent: Agent | None) -> bool:
    return agent is not None and agent.kind == AgentKind.PERFSONAR


def planned_slots(agent: Agent, now: datetime, until: datetime) -> list[PlannedSlot]:
    # A slot towards a perfSONAR node is led by the node (perfsonar app), not by the agent.
    rows = (
        Slot.objects.filter(
            source=agent,
            state=SlotState.PLANNED,
            mesh_test__isnull=False,
            start_at__gte=now - timedelta(seconds=SLOT_LATE_START_S),
            start_at__lte=until,
        )
        .exclude(destination__kind=AgentKind.PERFSONAR)
        .select_related("destination", "mesh_test__mesh")
        .order_by("start_at")
    )
    return [
        PlannedSlot(
            id=str(slot.id),
            test_id=mesh_test_id(slot.mesh_test.mesh.name, slot.mesh_test.name, str(slot.destination_id)),
            type=slot.test_type,
            start_at=slot.start_at.astimezone(UTC).isoformat(),
            peer=Peer(str(slot.destination.pk), slot.destination.name, slot.destination.address),
            spec=slot.spec,
            iperf3_auth=client_auth(slot.id, slot.destination.host_facts),
        )
        for slot in rows
        if slot.mesh_test is not None
    ]


def iperf3_users(agent: Agent, now: datetime, until: datetime) -> list[Iperf3User]:
    """Who may use this agent's iperf3 server: the clients of the slots it serves, each with
    its slot's credential, from a late start until the plan expires."""
    slot_ids = (
        Slot.objects.filter(
            destination=agent,
            state=SlotState.PLANNED,
            mesh_test__isnull=False,
            test_type__in=EXCLUSIVE_TEST_TYPES,
            start_at__gte=now - timedelta(seconds=SLOT_LATE_START_S),
            start_at__lte=until,
        )
        .exclude(source__kind=AgentKind.PERFSONAR)
        .order_by("start_at")
        .values_list("id", flat=True)
    )
    return [server_user(slot_id) for slot_id in slot_ids]


def iperf3_windows(agent: Agent, now: datetime, until: datetime) -> list[Iperf3Window]:
    """The slots this agent shares with a perfSONAR node, either way: each opens the agent's
    one-off iperf3 server for the node's single-ended test."""
    with_node = (Q(source=agent) & Q(destination__kind=AgentKind.PERFSONAR)) | (
        Q(destination=agent) & Q(source__kind=AgentKind.PERFSONAR)
    )
    rows = (
        Slot.objects.filter(
            with_node,
            state=SlotState.PLANNED,
            mesh_test__isnull=False,
            test_type__in=EXCLUSIVE_TEST_TYPES,
            end_at__gte=now,
            start_at__lte=until,
        )
        .select_related("source", "destination")
        .order_by("start_at")
    )
    windows = []
    for slot in rows:
        node = slot.destination if slot.source_id == agent.pk else slot.source
        windows.append(
            Iperf3Window(
                slot_id=str(slot.pk),
                start_at=slot.start_at.astimezone(UTC).isoformat(),
                end_at=slot.end_at.astimezone(UTC).isoformat(),
                port=int(settings.PERFSONAR_IPERF3_PORT),
                peer_name=node.name,
                peer_address=node.address,
            )
        )
    return windows


def plan_version(
    tests: list[PlannedTest],
    planned: list[PlannedSlot],
    users: list[Iperf3User],
    windows: list[Iperf3Window] | None = None,
) -> str:
    """Stable while tests, slots, iperf3 users and windows are unchanged, so an unchanged
    plan is a 304."""
    content: dict[str, Any] = {
        "tests": [asdict(test) for test in tests],
        "slots": [asdict(slot) for slot in planned],
        "iperf3_users": [asdict(user) for user in users],
    }
    if windows:  # only when there are any: plans without nodes keep their versions
        content["iperf3_windows"] = [asdict(window) for window in windows]
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def build_plan(agent: Agent, now: datetime | None = None) -> Plan:
    now = now or timezone.now()
    valid_until = now + timedelta(seconds=settings.PLAN_VALID_FOR_S)
    tests = background_tests(agent)
    planned = planned_slots(agent, now, valid_until)
    users = iperf3_users(agent, now, valid_until)
    windows = iperf3_windows(agent, now, valid_until)
    return Plan(
        agent_id=str(agent.pk),
        version=plan_version(tests, planned, users, windows),
        generated_at=now,
        valid_until=valid_until,
        tests=tests,
        slots=planned,
        iperf3_users=users,
        iperf3_windows=windows,
    )


# --- exclusive slots -------------------------------------------------------------------


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def _moment(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, tz=UTC)


@dataclass(frozen=True)
class SlotPlanning:
    placed: int
    unschedulable: int
    planned_from: datetime
    planned_until: datetime


def plan_exclusive_slots(now: datetime | None = None, seed: int | None = None) -> SlotPlanning:
    """Extends the exclusive plan to now + the horizon, keeping every slot already planned.

    Runs in one transaction under an advisory lock, so the beat task and a mesh edit never
    plan the same period twice or place two slots on one agent's time.
    """
    now = (now or timezone.now()).replace(microsecond=0)
    # Every agent must have fetched a new slot before it starts: one started late would
    # overrun its reservation.
    start = now + timedelta(seconds=settings.SLOT_PLANNING_LEAD_S)
    until = now + timedelta(seconds=settings.SLOT_HORIZON_S)
    rng = random.Random(seed)  # noqa: S311 - start jitter, not secrets
    with transaction.atomic():
        lock_planner()
        paths = [path for path in mesh_paths(exclusive=True) if path.destination is not None]
        rtts = path_min_rtt_ms(
            ((p.source.pk, p.destination.pk) for p in paths if p.destination), now - timedelta(days=1)
        )
        requests, by_key = [], {}
        for path in paths:
            assert path.destination is not None
            request, spec = exclusive_request(
                path.slot_key,
                path.source.pk,
                path.destination.pk,
                path.test,
                rtts.get((path.source.pk, path.destination.pk)),
                with_node=_is_node(path.source) or _is_node(path.destination),
            )
            requests.append(request)
            by_key[path.slot_key] = (path, spec)
        planned = placements_of(Slot.objects.filter(end_at__gt=now).exclude(state=SlotState.UNSCHEDULABLE))
        result = slots.plan_slots(requests, _epoch(start), _epoch(until), rng, planned=planned)
        new_rows = [_slot_row(by_key[p.key], p.period_start, p.start, p.end) for p in result.placements]
        failed_rows = [
            _slot_row(by_key[u.key], u.period_start, u.period_start, u.period_start) for u in result.unplaceable
        ]
        names = {str(path.source.pk): path.source.name for path in paths}
        names.update({str(path.destination.pk): path.destination.name for path in paths if path.destination})
        for row, unplaceable in zip(failed_rows, result.unplaceable, strict=True):
            row.state, row.reason = SlotState.UNSCHEDULABLE, with_names(unplaceable.reason, names)
        # A period that once found no time and now does: the placement replaces the record.
        for row in new_rows:
            Slot.objects.filter(
                mesh_test=row.mesh_test,
                source=row.source,
                destination=row.destination,
                period_start=row.period_start,
                state=SlotState.UNSCHEDULABLE,
            ).delete()
        Slot.objects.bulk_create(new_rows + failed_rows, batch_size=2000, ignore_conflicts=True)
        PlannerState.objects.update_or_create(pk=1, defaults={"planned_until": until})
    return SlotPlanning(len(new_rows), len(failed_rows), now, until)


def exclusive_request(
    key: str, source_id: Any, destination_id: Any, test: MeshTest, rtt_ms: float | None, with_node: bool = False
) -> tuple[slots.SlotRequest, dict[str, Any]]:
    """One exclusive test on one directed path as the planner asks for it, and the spec its runs
    get (with the path's RTT, from which the agent derives the slow start to omit). The test
    need not be saved: a mesh's preview plans tests that do not exist yet."""
    spec = normalize_spec(test.test_type, test.spec)
    spec["path_rtt_ms"] = rtt_ms or 0
    if reserved_seconds(spec, rtt_ms) > test.interval_s:
        # A long path's derived slow-start omit would outgrow the interval: omit what fits.
        spec["omit_s"] = max(0, test.interval_s - spec["duration_s"] - THROUGHPUT_MARGIN_S)
    request = slots.SlotRequest(
        key=key,
        source=str(source_id),
        destination=str(destination_id),
        interval_s=test.interval_s,
        # pScheduler's extra run time, within the interval (validation keeps the test itself shorter).
        duration_s=min(test.interval_s, reserved_seconds(spec, rtt_ms) + (PSCHEDULER_RUN_MARGIN_S if with_node else 0)),
        slip_s=min(test.slip_s, test.interval_s),
    )
    return request, spec


def placements_of(rows: Iterable[Slot]) -> list[slots.Placement]:
    """Slots as the planner keeps them: busy time of both agents, and periods already planned."""
    return [
        slots.Placement(
            key=slot_key(slot.mesh_test_id, slot.source_id, slot.destination_id),
            source=str(slot.source_id),
            destination=str(slot.destination_id),
            period_start=_epoch(slot.period_start),
            start=_epoch(slot.start_at),
            end=_epoch(slot.end_at),
        )
        for slot in rows
    ]


def with_names(reason: str, names: dict[str, str]) -> str:
    """The planner speaks of agent ids; an operator reads names."""
    for agent_id, name in names.items():
        reason = reason.replace(agent_id, name)
    return reason


def _slot_row(path_and_spec: tuple[Path, dict[str, Any]], period_s: float, start_s: float, end_s: float) -> Slot:
    path, spec = path_and_spec
    assert path.destination is not None
    return Slot(
        mesh_test=path.test,
        source=path.source,
        destination=path.destination,
        test_type=path.test.test_type,
        period_start=_moment(period_s),
        start_at=_moment(start_s),
        end_at=_moment(end_s),
        spec=spec,
    )


def lock_planner() -> None:
    """Serialises everything that plans or drops slots, until the transaction ends (an
    edit that drops slots and the beat task extending the plan must not interleave)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended('meshes:plan-slots', 0))")


def drop_future_slots(mesh: Mesh, now: datetime | None = None) -> None:
    """A changed or deleted mesh's slots yet to start go, to be planned again; slots started
    or reported stay as history. A run of the current period (its period began, its start
    has not come) stays when its path and test still exist: planning starts at now, so that
    period would otherwise have no run at all."""
    now = now or timezone.now()
    lock_planner()
    future = Slot.objects.filter(mesh_test__mesh=mesh, state=SlotState.PLANNED, start_at__gt=now)
    future.filter(period_start__gte=now).delete()
    keep = {path.slot_key for path in mesh_paths(exclusive=True) if path.test.mesh_id == mesh.pk and path.destination}
    for slot in future.filter(period_start__lt=now):
        if slot_key(slot.mesh_test_id, slot.source_id, slot.destination_id) not in keep:
            slot.delete()
    Slot.objects.filter(mesh_test__mesh=mesh, state=SlotState.UNSCHEDULABLE, period_start__gt=now).delete()


def replan_mesh(mesh: Mesh, now: datetime | None = None) -> SlotPlanning:
    """After a mesh changes: its future slots go, and the horizon is planned again around the
    other meshes' slots."""
    drop_future_slots(mesh, now)
    return plan_exclusive_slots(now)


def record_slot_outcomes(agent: Agent, results: Iterable[dict[str, Any]]) -> None:
    """A result that names a slot of this agent settles it, late or not (measurements'
    results_stored signal calls this inside ingest's transaction). Slots are settled in id
    order, so two uploads that name the same slots lock them in the same order."""
    for result in sorted(results, key=lambda result: str(result.get("slot_id") or "")):
        slot_id = result.get("slot_id")
        if not slot_id:
            continue
        # Only the slot's own run settles it, and a measured slot stays measured: a retry
        # that failed later does not erase the run that worked.
        Slot.objects.filter(
            pk=slot_id, source=agent, destination_id=result.get("peer_id"), test_type=result["test_type"]
        ).exclude(state=SlotState.OK).update(
            state=result["status"], run_id=result["id"], reason=result["error"][:500], updated_at=timezone.now()
        )


PathKey = tuple[str, str, str]  # (peer agent id or "", external target or "", test type)

# A result may start a little before the plan that asked for it reached the server's clock.
ISSUED_PLAN_CLOCK_SKEW = timedelta(minutes=5)
# Issued plans older than this (since last served) are forgotten; a result measured under
# one is older than anything the agent's spool keeps.
ISSUED_PLAN_RETENTION = timedelta(days=30)


def _path_key(peer_id: str | None, target: str, test_type: str) -> PathKey:
    """A directed path as plans and results name it: the peer agent, or else the target."""
    return (peer_id, "", test_type) if peer_id else ("", target, test_type)


def record_issued_plan(agent: Agent, plan: Plan) -> None:
    """Remembers that this agent holds this plan version (one upsert per plan poll)."""
    now = timezone.now()
    paths = sorted({_path_key(test.peer.id, test.peer.address, test.type) for test in plan.tests})
    IssuedPlan.objects.bulk_create(
        [IssuedPlan(agent=agent, version=plan.version, paths=paths, issued_at=now, last_served_at=now)],
        update_conflicts=True,
        unique_fields=["agent", "version"],
        update_fields=["last_served_at"],
    )


def forget_old_issued_plans(now: datetime | None = None) -> int:
    cutoff = (now or timezone.now()) - ISSUED_PLAN_RETENTION
    deleted, _ = IssuedPlan.objects.filter(last_served_at__lt=cutoff).delete()
    return deleted


# Past slots are forgotten in batches: the first pass on a mesh that ran for long has millions.
SLOT_FORGET_BATCH = 10_000


def forget_past_slots(now: datetime | None = None, keep_days: int | None = None) -> int:
    """Forgets slots that ended longer ago than the raw retention (`keep_days`), whatever came
    of them: a mesh of 100 agents plans tens of thousands a day. Their runs are dropped by
    then, and ingest refuses results that old, so nothing can settle or show them. Returns
    how many were forgotten."""
    cutoff = raw_retention_cutoff(now, keep_days)
    forgotten = 0
    while True:
        batch = list(Slot.objects.filter(end_at__lt=cutoff).values_list("pk", flat=True)[:SLOT_FORGET_BATCH])
        if not batch:
            return forgotten
        _, per_model = Slot.objects.filter(pk__in=batch).delete()
        forgotten += per_model.get(Slot._meta.label, 0)


@dataclass(frozen=True)
class _HeldPlan:
    """A plan version as issued to one agent: its paths, and the span in which a result
    measured under it is believable."""

    paths: frozenset[PathKey]
    since: datetime
    until: datetime

    def covers(self, key: PathKey, started_at: datetime) -> bool:
        return key in self.paths and self.since <= started_at <= self.until


def _held_plans(agent: Agent, results: list[dict[str, Any]]) -> dict[str, _HeldPlan]:
    """The plans the batch's results name, as issued to this agent, by version."""
    versions = {result.get("plan_version") or "" for result in results} - {""}
    if not versions:
        return {}
    valid_for = timedelta(seconds=settings.PLAN_VALID_FOR_S)
    return {
        plan.version: _HeldPlan(
            frozenset((str(peer), str(target), str(kind)) for peer, target, kind in plan.paths),
            plan.issued_at - ISSUED_PLAN_CLOCK_SKEW,
            plan.last_served_at + valid_for,
        )
        for plan in IssuedPlan.objects.filter(agent=agent, version__in=versions)
    }


def unplanned_results(agent: Agent, results: list[dict[str, Any]]) -> list[BatchError]:
    """Results on paths the agent was not asked to measure: in neither its plan now (its
    meshes' enabled tests, from it, of that test type) nor the plan it was measured under,
    nor in a slot planned for it. An agent reports on its own paths only. (Revoked peers are
    refused by ingest before this, whatever plan a result was measured under.)"""
    held = _held_plans(agent, results)
    slot_ids = {result["slot_id"] for result in results if result.get("slot_id")}
    # A slot stays the agent's after its test is edited away: its run is still the agent's.
    slots = {
        str(pk): (str(destination_id), test_type)
        for pk, destination_id, test_type in Slot.objects.filter(pk__in=slot_ids, source=agent).values_list(
            "pk", "destination_id", "test_type"
        )
    }

    def vouched_for(result: dict[str, Any]) -> bool:
        """Measured under a plan issued to this agent with the path in it, or in its slot."""
        peer_id, test_type = result.get("peer_id"), result["test_type"]
        if peer_id and slots.get(result.get("slot_id") or "") == (peer_id, test_type):
            return True
        plan = held.get(result.get("plan_version") or "")
        key = _path_key(peer_id, result["target"], test_type)
        return plan is not None and plan.covers(key, timestamp(result["started_at"]))

    unvouched = [(index, result) for index, result in enumerate(results) if not vouched_for(result)]
    if not unvouched:
        return []  # the usual batch: the agent's mesh need not be read at all
    planned = {
        _path_key(str(path.destination.pk) if path.destination else None, path.target, path.test.test_type)
        for path in mesh_paths(source=agent)
    }
    errors = []
    for index, result in unvouched:
        peer_id, test_type = result.get("peer_id"), result["test_type"]
        if _path_key(peer_id, result["target"], test_type) not in planned:
            field_name, far_end = ("peer_id", peer_id) if peer_id else ("target", result["target"])
            errors.append(
                BatchError(
                    f"results/{index}/{field_name}",
                    f"path {agent.name} -> {far_end}: no {test_type} test on it in this agent's plan",
                )
            )
    return errors


def expire_overdue_slots(now: datetime | None = None) -> int:
    """Slots whose run should have been reported long ago become missed, with the reason.

    A slot that an upload is settling right now (its row locked) is skipped: the upload
    settles it, or the next pass expires it. Waiting for it instead deadlocked with an
    agent's upload of many late results, each side holding slots the other wanted."""
    now = now or timezone.now()
    grace = timedelta(seconds=settings.SLOT_RESULT_GRACE_S)
    with transaction.atomic():
        overdue = list(
            Slot.objects.filter(state=SlotState.PLANNED, end_at__lt=now - grace)
            .order_by("pk")
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)
        )
        return Slot.objects.filter(pk__in=overdue).update(
            state=SlotState.MISSED,
            reason=f"no result from the agent within {settings.SLOT_RESULT_GRACE_S} s of the slot's end",
            updated_at=now,
        )


@dataclass(frozen=True)
class AgentUtilization:
    agent: Agent
    planned_s: float  # exclusive seconds reserved in the planned horizon
    horizon_s: float
    demand: float  # steady-state share of time the meshes ask for (duration / interval summed)
    slots_planned: int


def exclusive_utilization(now: datetime | None = None) -> tuple[datetime, datetime, list[AgentUtilization]]:
    """Each agent's exclusive time in the planned horizon, and the meshes' steady demand."""
    now = now or timezone.now()
    state = PlannerState.objects.first()
    until = state.planned_until if state and state.planned_until > now else now
    horizon_s = (until - now).total_seconds()
    busy: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    future = Slot.objects.filter(end_at__gt=now, start_at__lt=until).exclude(state=SlotState.UNSCHEDULABLE)
    for slot in future.only("source_id", "destination_id", "start_at", "end_at"):
        seconds = (min(slot.end_at, until) - max(slot.start_at, now)).total_seconds()
        for agent_id in (slot.source_id, slot.destination_id):
            busy[agent_id] = busy.get(agent_id, 0.0) + seconds
            counts[agent_id] = counts.get(agent_id, 0) + 1
    demand: dict[str, float] = {}
    for path in mesh_paths(exclusive=True):
        if path.destination is None:
            continue
        spec = normalize_spec(path.test.test_type, path.test.spec)
        share = min(1.0, reserved_seconds(spec, None) / path.test.interval_s)
        for end in (path.source, path.destination):
            demand[str(end.pk)] = demand.get(str(end.pk), 0.0) + share
    rows = [
        AgentUtilization(
            agent, busy.get(agent.pk, 0.0), horizon_s, demand.get(str(agent.pk), 0.0), counts.get(agent.pk, 0)
        )
        for agent in active_agents()
    ]
    return now, until, rows


def ensure_default_mesh() -> Mesh:
    """The mesh of every active agent with the default tests (migration 0002 makes it too)."""
    mesh, created = Mesh.objects.get_or_create(
        name="default",
        defaults={"description": "Every active agent, perfSONAR's regular tests", "all_agents": True},
    )
    if created:
        create_default_tests(mesh)
    return mesh


def create_default_tests(mesh: Mesh) -> None:
    for default in DEFAULT_TESTS:
        MeshTest.objects.create(
            mesh=mesh,
            name=default.name,
            test_type=default.test_type,
            spec=dict(default.spec),
            interval_s=default.interval_s,
            slip_s=default.slip_s,
        )
