"""A Fathom mesh as a pSConfig template, for perfSONAR nodes to subscribe to and for another
Fathom to import.

The template holds one group (the mesh's members; a list mesh is its members to its targets,
as a one-way disjoint group), one task per test with its schedule (a latency test is a
latencybg task, which runs without one: its packet count sets how often it reports), and
one http archive that puts every run's record to Fathom's receiver. The archive carries no
secret: the receiver knows a node by its own archive token, which each node adds with a
transform when it subscribes (see the template's `_meta.fathom`). Fathom's own details ride in `_meta.fathom`
(perfSONAR ignores `_meta`): each test's exact spec, and tests pScheduler has no equivalent
of, so importing the export gives back the same mesh.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from inventory.choices import AgentKind
from inventory.models import Agent
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshTest
from perfsonar.durations import format_duration
from perfsonar.mapping import kinds
from perfsonar.models import Node
from perfsonar.psconfig import spec_map
from perfsonar.psconfig.import_model import FATHOM_TOOL
from perfsonar.reconcile import ARCHIVE_PATH

ARCHIVE_NAME = "fathom"
PAIR = {"source": "{% address[0] %}", "dest": "{% address[1] %}"}
# Where pScheduler reaches each end: the address's pscheduler-address, else its address.
NODES = {"source-node": "{% pscheduler_address[0] %}", "dest-node": "{% pscheduler_address[1] %}"}
# Keys each pScheduler test takes for its ends (rtt, trace and latencybg have one participant;
# latencybg's far end needs only owampd).
NODE_KEYS = {
    "throughput": ("source-node", "dest-node"),
    "rtt": ("source-node",),
    "trace": ("source-node",),
    "latencybg": ("source-node",),
}
# Tests pScheduler runs without pause, a result every so many packets: their tasks have no
# schedule (pSConfig's own latencybg examples have none), the spec sets the interval.
UNSCHEDULED = frozenset({"latencybg"})
TARGET_PREFIX = "target:"
# latencybg's far end must run owampd, which only perfSONAR nodes do: its task takes the
# mesh's group under this suffix with every other pair excluded.
OWAMP_PAIRS_SUFFIX = "-owamp-pairs"


def token_transform(archive: str = ARCHIVE_NAME) -> dict[str, Any]:
    """The jq transform a node subscribes with, after pSConfig's http-auth-token.json."""
    return {
        "script": [
            f'if .archives."{archive}" then',
            f'    .archives."{archive}".data."_headers"."Authorization" |= "Bearer YOUR_NODE_ARCHIVE_TOKEN"',
            "else",
            "    .",
            "end",
        ]
    }


def archive() -> dict[str, Any]:
    """The http archive of every exported task, as the tasks Fathom creates itself have it,
    minus the node's secret."""
    return {
        "archiver": "http",
        "schema": 2,
        "runs": "all",  # failed runs too: Fathom shows them with pScheduler's reason
        "ttl": "PT6H",
        "data": {
            "schema": 3,
            "_url": settings.PUBLIC_URL + ARCHIVE_PATH,
            "op": "put",
            "_headers": {"x-ps-observer": "{% scheduled_by_address %}"},
            "verify-ssl": bool(settings.PERFSONAR_ARCHIVE_VERIFY_TLS),
            "retry-policy": [{"attempts": 5, "wait": "PT1M"}, {"attempts": 5, "wait": "PT10M"}],
        },
        "_meta": {
            "fathom": (
                "Fathom's receiver accepts a run only with the node's own archive token: "
                "add an Authorization header with the transform in the template's _meta.fathom"
            )
        },
    }


def _pscheduler_address(node: Node | None, address: str) -> str | None:
    """host[:port] of a node's pScheduler API when it differs from the node's address."""
    if node is None:
        return None
    parts = urlsplit(node.api_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    hostport = f"{host}:{parts.port}" if parts.port else host
    return None if host == address else hostport


def _address(agent: Agent) -> dict[str, Any]:
    node: Node | None = getattr(agent, "perfsonar_node", None) if agent.kind == AgentKind.PERFSONAR else None
    entry: dict[str, Any] = {"address": agent.address, "_meta": {"fathom": {"kind": agent.kind}}}
    if agent.kind != AgentKind.PERFSONAR:
        # No pSConfig agent reads templates there (a Fathom agent has no pScheduler).
        entry["no-agent"] = True
    pscheduler_address = _pscheduler_address(node, agent.address)
    if pscheduler_address:
        entry["pscheduler-address"] = pscheduler_address
    return entry


def _test(test: MeshTest) -> dict[str, Any]:
    kind = test.test_type
    pscheduler_test = kinds.TEST_OF_KIND[kind]
    spec = {**PAIR, **{key: NODES[key] for key in NODE_KEYS[pscheduler_test]}}
    spec.update(spec_map.spec_to_pscheduler(kind, test.spec))
    return {"type": pscheduler_test, "spec": spec, "_meta": {"fathom": {"test_type": kind, "spec": test.spec}}}


def _schedule(test: MeshTest) -> dict[str, Any]:
    schedule: dict[str, Any] = {"repeat": format_duration(float(test.interval_s))}
    if test.slip_s:
        schedule.update({"slip": format_duration(float(test.slip_s)), "sliprand": True})
    return schedule


def _scheduled(test: MeshTest) -> bool:
    return kinds.TEST_OF_KIND[test.test_type] not in UNSCHEDULED


def _task(mesh: Mesh, test: MeshTest, group: str) -> dict[str, Any]:
    task: dict[str, Any] = {
        "group": group,
        "test": test.name,
        **({"schedule": test.name} if _scheduled(test) else {}),
        "archives": [ARCHIVE_NAME],
        "tools": [FATHOM_TOOL[test.test_type]],
        "reference": {
            "fathom": {"mesh": mesh.name, "test": test.name},
            "display-task-name": f"{mesh.name} {test.name}",
            "display-task-group": [mesh.name],
        },
        "_meta": {"fathom": {"enabled": test.enabled}},
    }
    if not (test.enabled and mesh.enabled):
        task["disabled"] = True
    return task


def _fathom_only(test: MeshTest) -> dict[str, Any]:
    return {
        "name": test.name,
        "test_type": test.test_type,
        "spec": test.spec,
        "interval_s": test.interval_s,
        "slip_s": test.slip_s,
        "enabled": test.enabled,
    }


def _owamp_pairs(mesh: Mesh, group: dict[str, Any], nodes: set[str]) -> dict[str, Any] | None:
    """The mesh's group with only the pairs powstream can measure, node to node; None when
    every end is a node. A Fathom agent answers TWAMP-light and TWAMP-Control, not OWAMP, and
    runs no pScheduler: a latencybg towards it or from it fails. Fathom measures those pairs
    itself (its own twping tasks on the nodes it has registered)."""
    names = [entry["name"] for key in ("addresses", "a-addresses", "b-addresses") for entry in group.get(key, [])]
    if all(name in nodes for name in names):
        return None
    excludes = []
    for local in dict.fromkeys(names):
        left_out = [name for name in dict.fromkeys(names) if name != local and not (local in nodes and name in nodes)]
        if left_out:
            excludes.append({"local-address": {"name": local}, "target-addresses": [{"name": n} for n in left_out]})
    pairs = {key: value for key, value in group.items() if key != "_meta"}
    pairs["excludes"] = excludes
    pairs["_meta"] = {
        "fathom": {
            "pairs_of": mesh.name,
            "why": "powstream needs owampd at both ends: pairs with a Fathom agent or a target are left out",
        }
    }
    return pairs


def _members(mesh: Mesh) -> list[tuple[Agent, str]]:
    if mesh.all_agents:
        agents = Agent.objects.filter(revoked_at__isnull=True).select_related("perfsonar_node").order_by("name")
        return [(agent, MemberSide.A) for agent in agents]
    members = mesh.members.filter(agent__revoked_at__isnull=True).select_related("agent__perfsonar_node")
    return [(member.agent, member.side) for member in members.order_by("side", "agent__name")]


def export_mesh(mesh: Mesh) -> dict[str, Any]:
    """The mesh as a pSConfig template (valid by pSConfig's published schema)."""
    members = _members(mesh)
    addresses = {agent.name: _address(agent) for agent, _ in members}
    a_side = [{"name": agent.name} for agent, side in members if side == MemberSide.A]
    b_side = [{"name": agent.name} for agent, side in members if side == MemberSide.B]
    tests = list(mesh.tests.order_by("name"))
    hints: dict[str, Any] = {
        "mesh": mesh.name,
        "kind": mesh.kind,
        "description": mesh.description,
        "enabled": mesh.enabled,
        "all_agents": mesh.all_agents,
        "tests": [_fathom_only(test) for test in tests if test.test_type not in kinds.TEST_OF_KIND],
    }
    group: dict[str, Any]
    if mesh.kind == MeshKind.LIST:
        # Each member tests to each target: a one-way disjoint group whose B side are the
        # targets, hosts no pSConfig agent reads the template on.
        for target in mesh.targets:
            addresses[TARGET_PREFIX + target] = {
                "address": target,
                "no-agent": True,
                "_meta": {"fathom": {"role": "target"}},
            }
        targets = [{"name": TARGET_PREFIX + target} for target in mesh.targets]
        group = {"type": "disjoint", "a-addresses": a_side, "b-addresses": targets, "unidirectional": True}
    elif mesh.kind == MeshKind.DISJOINT:
        group = {
            "type": "disjoint",
            "a-addresses": a_side,
            "b-addresses": b_side,
            "unidirectional": mesh.unidirectional,
        }
    else:
        group = {"type": "mesh", "addresses": a_side + b_side}
    group["_meta"] = {"fathom": hints}
    exported = [test for test in tests if test.test_type in kinds.TEST_OF_KIND]
    groups = {mesh.name: group}
    nodes = {agent.name for agent, _ in members if agent.kind == AgentKind.PERFSONAR}
    pairs = _owamp_pairs(mesh, group, nodes)
    task_groups = {test.name: mesh.name for test in exported}
    if pairs is not None and any(not _scheduled(test) for test in exported):
        groups[mesh.name + OWAMP_PAIRS_SUFFIX] = pairs
        task_groups.update({test.name: mesh.name + OWAMP_PAIRS_SUFFIX for test in exported if not _scheduled(test)})
    return {
        "_meta": {
            "display-name": f"Fathom mesh {mesh.name}",
            "fathom": {
                "mesh": mesh.name,
                "exported_from": settings.PUBLIC_URL,
                "archive_authorization": (
                    "Fathom's receiver takes a run only with the measuring node's archive token (operators read "
                    "it at GET /api/v1/perfsonar/nodes/<node>/archive-token/). Subscribe each node with "
                    "`psconfig remote add --configure-archives --transform @fathom-token.json <this URL>`, where "
                    "fathom-token.json is the transform below with the node's token in place of "
                    "YOUR_NODE_ARCHIVE_TOKEN (as pSConfig's transforms/http-auth-token.json)."
                ),
                "archive_transform": token_transform(),
                "fathom_agents": (
                    "Addresses marked no-agent with _meta.fathom.kind fathom are Fathom agents: they run no "
                    "pScheduler, so Fathom measures their pairs itself."
                ),
            },
        },
        "addresses": addresses,
        "groups": groups,
        "tests": {test.name: _test(test) for test in exported},
        "schedules": {test.name: _schedule(test) for test in exported if _scheduled(test)},
        "archives": {ARCHIVE_NAME: archive()},
        "tasks": {test.name: _task(mesh, test, task_groups[test.name]) for test in exported},
    }
