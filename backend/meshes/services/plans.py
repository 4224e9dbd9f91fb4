"""Each agent's plan: its background tests, its exclusive slots, who may use its iperf3 server
and TWAMP reflector, and when perfSONAR nodes' tests meet it; versioned so an unchanged plan
is a 304.

A latency test is planned like a ping: each directed path of its mesh (both ways in a mesh or
a two-way disjoint mesh) is a session its source runs towards the destination, whose plan
lists the source among its TWAMP peers. One session measures both directions, so a path
between two agents of a mesh is measured by two sessions, one from each end, as it is pinged
from each end; a one-way disjoint mesh measures each pair once. Towards a list mesh's
external target the session goes to the device's own TWAMP-light reflector (peer id null,
the target's address, the spec's port): no agent's plan admits anyone for it. A path from
an agent to a perfSONAR node is the node's to measure (perfsonar/wanted.py): the agent runs no
session towards it and admits the node to its reflector.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import EXCLUSIVE_TEST_TYPES, TestType
from meshes.choices import SlotState
from meshes.iperf3_auth import Iperf3Auth, Iperf3User, client_auth, server_user
from meshes.models import Slot
from meshes.services.paths import Path, Peer, is_node, mesh_paths, mesh_test_id
from meshes.specs import normalize_spec

PLAN_SCHEMA_VERSION = 1


UPLOAD_INTERVAL_S = 10


HOST_FACTS_INTERVAL_S = 300


# Slots already started this long ago are still listed, so an agent that fetches its plan
# just after a start learns of the slot and reports it missed rather than never.
SLOT_LATE_START_S = 30

# Loaded windows are listed from the start of the current hour for two hours, at most this
# many: the list (and so the plan's version, and the issued-plan rows each version adds)
# changes hourly and when slots are planned, not each time a window ends, and a mesh of
# hundreds of agents keeps its plans small.
LOADED_WINDOWS_STEP_S = 3600
LOADED_WINDOWS_AHEAD_S = 7200
LOADED_WINDOWS_MAX = 500


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
class LoadedWindow:
    """The reserved time of an exclusive slot and the agents its test loads (source and
    destination): the agent keeps its background runs between either of them and another
    agent out of it, as own_load.py keeps the pings that still overlap out of the analysis."""

    start_at: str
    end_at: str
    agent_ids: list[str]


@dataclass(frozen=True)
class TwampPeer:
    """An agent (or perfSONAR node) whose latency test sends to this agent's TWAMP-light
    reflector, on `port`."""

    address: str
    port: int


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
    loaded_windows: list[LoadedWindow] = field(default_factory=list)
    twamp_peers: list[TwampPeer] = field(default_factory=list)

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
            "loaded_windows": [asdict(window) for window in self.loaded_windows],
            "twamp_peers": [asdict(peer) for peer in self.twamp_peers],
        }


# Tests that need a Fathom agent's own responder when the far end is an agent: a flow sweep its
# echo responder, a latency test its TWAMP-light reflector (a perfSONAR node's twampd answers
# only sessions set up over TWAMP-Control). An external target answers for itself.
NEEDS_FATHOM_PEER = frozenset({TestType.FLOWSWEEP, TestType.LATENCY})


def background_tests(agent: Agent) -> list[PlannedTest]:
    """The agent's periodic tests; none that needs Fathom's responder towards a perfSONAR node.
    A latency test runs back to back, one result each report_interval_s."""
    tests = []
    for path in mesh_paths(source=agent, exclusive=False):
        if path.test.test_type in NEEDS_FATHOM_PEER and is_node(path.destination):
            continue
        spec = normalize_spec(path.test.test_type, path.test.spec)
        interval_s = spec["report_interval_s"] if path.test.test_type == TestType.LATENCY else path.test.interval_s
        tests.append(
            PlannedTest(id=path.test_id, type=path.test.test_type, interval_s=interval_s, peer=path.peer, spec=spec)
        )
    return tests


def twamp_peers(agent: Agent) -> list[TwampPeer]:
    """Who may send to this agent's TWAMP-light reflector: the source of every latency test
    towards it, agent or perfSONAR node (whose tests the perfsonar app leads), at the port its
    test sends to, and every node this agent's latency tests go to: the node measures that way
    too, by twping towards this agent reporting the way back. (A test towards an external
    target is no agent's to admit.)"""

    def peer(address: str, path: Path) -> TwampPeer:
        return TwampPeer(address, int(normalize_spec(TestType.LATENCY, path.test.spec)["port"]))

    peers: set[TwampPeer] = set()
    for path in mesh_paths(involving=agent, test_type=TestType.LATENCY):
        if path.destination is not None and path.destination.pk == agent.pk:
            peers.add(peer(path.source.address_in(path.family), path))
        elif path.destination is not None and is_node(path.destination):
            peers.add(peer(path.target, path))
    return sorted(peers, key=lambda peer: (peer.address, peer.port))


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
            test_id=mesh_test_id(slot.mesh_test.mesh.name, slot.mesh_test.name, str(slot.destination_id), slot.family),
            type=slot.test_type,
            start_at=slot.start_at.astimezone(UTC).isoformat(),
            peer=Peer(
                str(slot.destination.pk),
                slot.destination.name,
                slot.destination.address_in(slot.family),
            ),
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


def loaded_windows(agent: Agent, tests: list[PlannedTest], now: datetime, until: datetime) -> list[LoadedWindow]:
    """The exclusive slots of the next hour or two that load this agent or a peer of its
    background tests, each with its reserved time (the time own_load.py counts as busy): the
    agent moves a ping or sweep on a path out of its path's windows where the interval allows."""
    peers = {str(agent.pk)} | {test.peer.id for test in tests if test.peer.id}
    since = datetime.fromtimestamp(now.timestamp() // LOADED_WINDOWS_STEP_S * LOADED_WINDOWS_STEP_S, tz=UTC)
    either_end = Q(source_id__in=peers) | Q(destination_id__in=peers)
    rows = (
        # Every slot that may run or has run, as own_load.py counts them: a slot that finished
        # stays listed, so its result arriving does not change the plan.
        Slot.objects.filter(either_end, test_type__in=EXCLUSIVE_TEST_TYPES, end_at__gt=since)
        .exclude(state=SlotState.UNSCHEDULABLE)
        .filter(start_at__lte=min(until, since + timedelta(seconds=LOADED_WINDOWS_AHEAD_S)))
        .order_by("start_at", "id")
        .values_list("start_at", "end_at", "source_id", "destination_id")[:LOADED_WINDOWS_MAX]
    )
    return [
        LoadedWindow(
            start_at=start.astimezone(UTC).isoformat(),
            end_at=end.astimezone(UTC).isoformat(),
            agent_ids=[str(source), str(destination)],
        )
        for start, end, source, destination in rows
    ]


def plan_version(
    tests: list[PlannedTest],
    planned: list[PlannedSlot],
    users: list[Iperf3User],
    windows: list[Iperf3Window] | None = None,
    loaded: list[LoadedWindow] | None = None,
    twamp: list[TwampPeer] | None = None,
) -> str:
    """Stable while tests, slots, iperf3 users, windows and TWAMP peers are unchanged, so an
    unchanged plan is a 304."""
    content: dict[str, Any] = {
        "tests": [asdict(test) for test in tests],
        "slots": [asdict(slot) for slot in planned],
        "iperf3_users": [asdict(user) for user in users],
    }
    if windows:  # only when there are any: plans without nodes keep their versions
        content["iperf3_windows"] = [asdict(window) for window in windows]
    if loaded:  # likewise: a plan with no exclusive test near it keeps its version
        content["loaded_windows"] = [asdict(window) for window in loaded]
    if twamp:  # likewise: a plan without latency tests towards the agent keeps its version
        content["twamp_peers"] = [asdict(peer) for peer in twamp]
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def build_plan(agent: Agent, now: datetime | None = None) -> Plan:
    now = now or timezone.now()
    valid_until = now + timedelta(seconds=settings.PLAN_VALID_FOR_S)
    tests = background_tests(agent)
    planned = planned_slots(agent, now, valid_until)
    users = iperf3_users(agent, now, valid_until)
    windows = iperf3_windows(agent, now, valid_until)
    loaded = loaded_windows(agent, tests, now, valid_until)
    twamp = twamp_peers(agent)
    return Plan(
        agent_id=str(agent.pk),
        version=plan_version(tests, planned, users, windows, loaded, twamp),
        generated_at=now,
        valid_until=valid_until,
        tests=tests,
        slots=planned,
        iperf3_users=users,
        iperf3_windows=windows,
        loaded_windows=loaded,
        twamp_peers=twamp,
    )
