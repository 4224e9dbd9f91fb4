"""The directed paths a mesh's tests measure: who measures towards whom (or which target)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import FloatField, Min, Q
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from inventory.addresses import address_family
from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import EXCLUSIVE_TEST_TYPES, RunStatus
from measurements.models import Run
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember, MeshTest


def slot_key(test_id: Any, source_id: Any, destination_id: Any, family: int = 4) -> str:
    """One periodic exclusive test on one directed path, as the planner names it (an IPv6
    path's key ends in its family; IPv4's keep the form they had before IPv6)."""
    return f"{test_id}:{source_id}:{destination_id}" + (f":{family}" if family != 4 else "")


def mesh_test_id(mesh_name: str, test_name: str, far_end: str, family: int = 4) -> str:
    """The plan's id of a mesh test on one path, as results report it back: a dual-stack
    pair's IPv6 path has its own (":ipv6" after the far end)."""
    return f"{mesh_name}/{test_name}:{far_end}" + (":ipv6" if family == 6 else "")


@dataclass(frozen=True)
class Peer:
    id: str | None
    name: str
    address: str


@dataclass(frozen=True)
class Path:
    """One directed path of a mesh test: a source agent and an agent or external target."""

    test: MeshTest
    source: Agent
    destination: Agent | None
    target: str  # the destination's address in the path's family, or a list mesh's external target
    family: int = 4

    @property
    def peer(self) -> Peer:
        if self.destination is None:
            return Peer(None, self.target, self.target)
        return Peer(str(self.destination.pk), self.destination.name, self.target)

    @property
    def test_id(self) -> str:
        if self.destination is None:
            return mesh_test_id(self.test.mesh.name, self.test.name, self.target)
        return mesh_test_id(self.test.mesh.name, self.test.name, str(self.destination.pk), self.family)

    @property
    def slot_key(self) -> str:
        assert self.destination is not None
        return slot_key(self.test.pk, self.source.pk, self.destination.pk, self.family)


def active_agents() -> list[Agent]:
    return list(Agent.objects.filter(revoked_at__isnull=True).order_by("name"))


# A directed path of a mesh: source, destination agent (None for an external target), the
# address probed, and its family.
PathEnds = tuple[Agent, Agent | None, str, int]


def mesh_pairs(
    mesh: Mesh, agents: dict[Any, Agent], source: Agent | None = None, destination: Agent | None = None
) -> Iterator[PathEnds]:
    """The directed paths of a mesh among active agents, optionally only those from one
    source or to one destination agent (an agent's plan must not cost the whole mesh)."""
    if mesh.all_agents:
        members: list[tuple[Agent, str]] = [(agent, MemberSide.A) for agent in agents.values()]
    else:
        members = [(agents[m.agent_id], m.side) for m in mesh.members.all() if m.agent_id in agents]
    return member_pairs(mesh.kind, mesh.unidirectional, mesh.targets, members, source, destination)


def member_pairs(
    kind: str,
    unidirectional: bool,
    targets: list[str],
    members: list[tuple[Agent, str]],
    source: Agent | None = None,
    destination: Agent | None = None,
) -> Iterator[PathEnds]:
    """The directed paths of a group of (agent, side) members: every ordered pair of a mesh,
    A to B (and back) of a disjoint mesh, each member to each target of a list; optionally
    only those from one source, or to one destination agent. A pair of agents is a path in
    each family both have an address in (a dual-stack pair is two paths)."""

    def wanted(agent: Agent) -> bool:
        return source is None or agent.pk == source.pk

    def towards(agent: Agent) -> bool:
        return destination is None or agent.pk == destination.pk

    if kind == MeshKind.MESH:
        for src, _ in members:
            if wanted(src):
                for dst, _ in members:
                    if src.pk != dst.pk and towards(dst):
                        yield from family_paths(src, dst)
    elif kind == MeshKind.DISJOINT:
        a_side = [agent for agent, side in members if side == MemberSide.A]
        b_side = [agent for agent, side in members if side == MemberSide.B]
        for a in a_side:
            for b in b_side:
                if wanted(a) and towards(b):
                    yield from family_paths(a, b)
                if not unidirectional and wanted(b) and towards(a):
                    yield from family_paths(b, a)
    elif destination is None:  # list: every member to every external target
        for src, _ in members:
            if wanted(src):
                for target in targets:
                    yield src, None, str(target), address_family(str(target))


def family_paths(source: Agent, destination: Agent) -> Iterator[PathEnds]:
    """The paths from one agent to another: one per family both have an address in, the
    source's primary family first. Agents that share no family measure towards the
    destination's primary address, as single-address agents always have (the source's
    host may reach it without having registered an address of its family)."""
    shared = [(family, address) for family in source.families if (address := destination.address_for(family))]
    if not shared:
        yield source, destination, destination.address, address_family(destination.address)
    for family, address in shared:
        yield source, destination, address, family


def mesh_paths(
    source: Agent | None = None,
    exclusive: bool | None = None,
    destination: Agent | None = None,
    test_type: str | None = None,
    involving: Agent | None = None,
) -> list[Path]:
    """Every enabled test's paths, optionally only one source's or one destination agent's,
    or those of one agent either way (`involving`: its paths from it, then those towards
    it, with one read of its meshes), only (non-)exclusive tests, or only tests of one type.

    One agent's paths (its plan, checking its results: every poll and upload) read only the
    meshes it is in and their members, not the whole fleet.
    """
    if involving is not None and (source is not None or destination is not None):
        raise ValueError("involving is one agent's paths both ways: not with source or destination")
    query = MeshTest.objects.filter(enabled=True, mesh__enabled=True).select_related("mesh")
    if exclusive is not None:
        type_filter = Q(test_type__in=EXCLUSIVE_TEST_TYPES)
        query = query.filter(type_filter if exclusive else ~type_filter)
    if test_type is not None:
        query = query.filter(test_type=test_type)
    for agent in (source, destination, involving):
        if agent is not None:
            its_meshes = MeshMember.objects.filter(agent=agent).values("mesh_id")
            query = query.filter(Q(mesh__all_agents=True) | Q(mesh_id__in=its_meshes))
    tests = list(query.prefetch_related("mesh__members").order_by("mesh__name", "name"))
    if (source is None and destination is None and involving is None) or any(test.mesh.all_agents for test in tests):
        agents = {agent.pk: agent for agent in active_agents()}
    else:
        members = {member.agent_id for test in tests for member in test.mesh.members.all()}
        agents = {agent.pk: agent for agent in Agent.objects.filter(pk__in=members, revoked_at__isnull=True)}
    ends = [(involving, None), (None, involving)] if involving is not None else [(source, destination)]
    paths: list[Path] = []
    for from_agent, to_agent in ends:
        for test in tests:
            pairs = mesh_pairs(test.mesh, agents, from_agent, to_agent)
            paths.extend(Path(test, src, dst, target, family) for src, dst, target, family in pairs)
    return paths


def path_min_rtt_ms(paths: Iterable[tuple[Any, Any, int]], since: datetime) -> dict[tuple[Any, Any, int], float]:
    """The smallest ping RTT per (source, destination, family) since a time: what omit is
    derived from."""
    pairs = list(paths)
    if not pairs:
        return {}
    sources = {source for source, _, _ in pairs}
    rows = (
        Run.objects.filter(test_type="ping", status=RunStatus.OK, started_at__gte=since, source_id__in=sources)
        .values("source_id", "destination_id", "family")
        .annotate(rtt=Min(Cast(KeyTextTransform("rtt_min_ms", "summary"), FloatField())))
    )
    return {
        (row["source_id"], row["destination_id"], row["family"]): float(row["rtt"])
        for row in rows
        if row["rtt"] is not None
    }


def is_node(agent: Agent | None) -> bool:
    return agent is not None and agent.kind == AgentKind.PERFSONAR
