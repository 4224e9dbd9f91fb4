"""What an import plans, and the names and helpers every part of the mapping shares."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from measurements.choices import TestType
from meshes.documents import HOSTNAME
from perfsonar.psconfig.address_classes import ClassEvaluation

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9:._\-]+$")  # pSConfig's NameType


MATCHED, REGISTER, UNKNOWN = "matched", "register", "unknown"


# The tool Fathom runs for each kind (for latency, the one its exported latencybg tasks ask
# for): a task that asks only for others is reported.
FATHOM_TOOL: dict[str, str] = {
    TestType.THROUGHPUT: "iperf3",
    TestType.PING: "ping",
    TestType.TRACE: "traceroute",
    TestType.LATENCY: "powstream",
}
# Tools whose measurement Fathom's own stands for, where that is more than FATHOM_TOOL's: a
# latency task may ask for owping or twping (halfping only halves a round trip).
ACCEPTED_TOOLS: dict[str, set[str]] = {TestType.LATENCY: {"powstream", "owping", "twping"}}


# Display hints of perfSONAR's Grafana; Fathom shows the test's own name instead.
UNDERSTOOD_REFERENCE_KEYS = frozenset({"fathom", "display-task-name", "display-task-group"})


SECTIONS = ("addresses", "groups", "tests", "schedules", "tasks", "archives", "hosts", "address-classes")


NOT_MAPPED_SECTIONS = {
    "subtasks": "subtasks are not mapped: Fathom runs each test on its own schedule",
    "contexts": "contexts (network namespaces and the like) are not mapped: Fathom tests from each host's own stack",
}


ADDRESS_KEYS_NOT_MAPPED = {
    "labels": "labelled addresses are not used: Fathom tests the host at its address",
    "remote-addresses": "per-peer addresses are not used: Fathom tests the host at its address",
    "lead-bind-address": "Fathom does not bind a lead address",
    "contexts": "contexts are not mapped: Fathom tests from the host's own stack",
    "tags": "tags are not kept (they select addresses into address classes, at import)",
}


@dataclass(frozen=True)
class KnownAgent:
    """An agent or perfSONAR node Fathom has (active, not revoked)."""

    name: str
    address: str
    kind: str


@dataclass(frozen=True)
class Unmapped:
    element: str  # "tasks.x", "tests.y.spec.ip-version", "groups.g.excludes", ...
    reason: str


@dataclass(frozen=True)
class NodePlan:
    element: str  # "addresses.<name>"
    name: str  # the Fathom agent's name, or the name a registered node gets
    address: str
    action: str  # matched | register | unknown
    kind: str = ""  # the matched agent's kind; perfsonar when registered
    api_url: str = ""  # register: the node's pScheduler API


@dataclass(frozen=True)
class TestPlan:
    name: str
    test_type: str
    spec: dict[str, Any]
    interval_s: int
    slip_s: int
    enabled: bool
    elements: tuple[str, ...]  # the task, test and schedule it is made of

    def body(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "test_type": self.test_type,
            "spec": self.spec,
            "interval_s": self.interval_s,
            "slip_s": self.slip_s,
            "enabled": self.enabled,
        }


@dataclass(frozen=True)
class MeshPlan:
    name: str
    element: str  # "groups.<name>"
    kind: str
    description: str
    unidirectional: bool
    enabled: bool
    all_agents: bool
    members: tuple[tuple[str, str], ...]  # (agent name, side)
    targets: tuple[str, ...]
    tests: tuple[TestPlan, ...]

    def body(self, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The mesh as MeshSerializer writes it, without members named in `leave_out`."""
        return {
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "all_agents": self.all_agents,
            "unidirectional": self.unidirectional,
            "targets": list(self.targets),
            "enabled": self.enabled,
            "members": [{"agent": name, "side": side} for name, side in self.members if name not in leave_out],
            "tests": [test.body() for test in self.tests],
        }


@dataclass
class ImportPlan:
    meshes: list[MeshPlan]
    nodes: list[NodePlan]
    unmapped: list[Unmapped]
    # Every element that maps ("addresses.a", "groups.g", "tasks.t", ...).
    mapped: set[str]
    # What each address class selects, in the template's order.
    address_classes: list[ClassEvaluation]


def fathom_meta(element: dict[str, Any]) -> dict[str, Any]:
    meta = element.get("_meta")
    hints = meta.get("fathom") if isinstance(meta, dict) else None
    return hints if isinstance(hints, dict) else {}


def host_or_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return HOSTNAME.match(value) is not None
    return True


def canonical(address: str) -> str:
    try:
        return str(ipaddress.ip_address(address)).lower()
    except ValueError:
        return address.lower().rstrip(".")


def api_url(spec: dict[str, Any]) -> str:
    host = str(spec.get("pscheduler-address") or spec["address"])
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass
    return f"https://{host}/pscheduler"


def seconds_text(seconds: int) -> str:
    return f"{seconds} s"


@dataclass
class MappedTask:
    """A task that maps, before its group's membership is known."""

    name: str
    group: str
    test: TestPlan
    targets: list[str]  # literal far ends (list groups)
    # list groups: the task's far end is the address itself, so the group's addresses
    # without an agent are the targets.
    dest_is_element: bool = False
