"""pSConfig groups as Fathom meshes: the addresses each selects, its members on each side, the
perfSONAR nodes among them, and the tests of Fathom's own exports."""

from __future__ import annotations

import re
from typing import Any

from inventory.choices import AgentKind
from inventory.services import AGENT_NAME_MAX, AGENT_NAME_RE
from meshes.choices import MemberSide, MeshKind
from meshes.documents import MeshTestSerializer
from meshes.names import RESERVED_MESH_NAMES, name_from, unique_name, valid_name
from meshes.services.writes import flat_messages
from perfsonar.mapping import kinds
from perfsonar.psconfig.import_model import (
    ADDRESS_KEYS_NOT_MAPPED,
    MATCHED,
    REGISTER,
    UNKNOWN,
    MappedTask,
    MeshPlan,
    NodePlan,
    TestPlan,
    api_url,
    fathom_meta,
    host_or_ip,
)
from perfsonar.psconfig.import_tasks import TaskMapper


class GroupMapper(TaskMapper):
    """Maps groups to meshes and their members (one mesh per group)."""

    def meshes(self, tasks: list[MappedTask]) -> tuple[list[MeshPlan], list[NodePlan]]:
        by_group: dict[str, list[MappedTask]] = {}
        for task in tasks:
            by_group.setdefault(task.group, []).append(task)
        nodes: dict[str, NodePlan] = {}
        meshes: list[MeshPlan] = []
        mesh_names: set[str] = set(RESERVED_MESH_NAMES)
        # Groups whose tasks became another group's tests (a Fathom export's owamp pairs).
        absorbed = {element for task in tasks for element in task.test.elements if element.startswith("groups.")}
        for group_name, group in self.section("groups").items():
            element = f"groups.{group_name}"
            group_tasks = by_group.get(group_name, [])
            extra = self.fathom_only_tests(element, group)
            if not group_tasks and not extra and element in absorbed:
                continue
            if not group_tasks and not extra:
                if any(task.get("group") == group_name for task in self.section("tasks").values()):
                    self.report(element, "no task of this group maps to a Fathom test, so no mesh is made")
                continue
            mesh = self.mesh(group_name, group, group_tasks, extra, nodes, mesh_names)
            if mesh is not None:
                meshes.append(mesh)
        return meshes, list(nodes.values())

    def fathom_only_tests(self, element: str, group: dict[str, Any]) -> list[TestPlan]:
        """Tests perfSONAR has no equivalent of (flow sweeps), which a Fathom export carries in
        the group's `_meta`."""
        found = []
        listed = fathom_meta(group).get("tests", [])
        for index, body in enumerate(listed if isinstance(listed, list) else []):
            where = f"{element}._meta.fathom.tests[{index}]"
            if isinstance(body, dict) and body.get("test_type") in kinds.TEST_OF_KIND:
                self.report(where, "a test pScheduler runs travels as a task, not here: ignored")
                continue
            checked = MeshTestSerializer(data=body)
            if not checked.is_valid():
                self.report(where, "not a valid Fathom test: " + "; ".join(flat_messages(checked.errors)))
                continue
            data = checked.validated_data
            found.append(
                TestPlan(
                    data["name"],
                    data["test_type"],
                    data["spec"],
                    data["interval_s"],
                    data["slip_s"],
                    data.get("enabled", True),
                    (where,),
                )
            )
        return found

    def selections(self, group_name: str, group: dict[str, Any], key: str) -> list[str]:
        """The enabled address names a group lists under `key`, each once."""
        chosen: list[str] = []
        where = f"groups.{group_name}.{key}"
        if group.get("default-address-label"):
            self.report(f"groups.{group_name}.default-address-label", ADDRESS_KEYS_NOT_MAPPED["labels"])
        for index, selector in enumerate(group.get(key, [])):
            if "class" in selector:
                self.select_class(f"{where}[{index}]", selector, chosen)
                continue
            name = selector["name"]
            if selector.get("disabled"):
                self.report(f"{where}[{index}]", f"{name} is disabled in this group: left out")
                continue
            if selector.get("label"):
                self.report(
                    f"{where}[{index}].label",
                    f"{name}'s label {selector['label']}: {ADDRESS_KEYS_NOT_MAPPED['labels']}",
                )
            if not self.address_disabled(name) and name not in chosen:
                chosen.append(name)
        return chosen

    def select_class(self, where: str, selector: dict[str, Any], chosen: list[str]) -> None:
        """Adds the enabled addresses a class selects, as pSConfig expands {"class": NAME}."""
        name = selector["class"]
        if selector.get("disabled"):
            self.report(where, f"address class {name} is disabled in this group: left out")
            return
        self.mapped.add(f"address-classes.{name}")
        selected = self.address_class(name).selected
        if not selected:
            self.report(where, f"address class {name} selects no address (see address-classes.{name})")
        for address in selected:
            if not self.address_disabled(address) and address not in chosen:
                chosen.append(address)

    def report_same_host(self, group_name: str, group: dict[str, Any], names: list[str]) -> None:
        if group.get("excludes-self", "host") != "host":
            return
        seen: dict[str, str] = {}
        for name in names:
            host = self.section("addresses")[name].get("host")
            if host and host in seen:
                self.report(
                    f"groups.{group_name}.excludes-self",
                    f"{seen[host]} and {name} are both on host {host}: pSConfig leaves out their pairs, "
                    "a Fathom mesh tests them",
                )
            elif host:
                seen[host] = name

    def mesh(
        self,
        group_name: str,
        group: dict[str, Any],
        tasks: list[MappedTask],
        extra: list[TestPlan],
        nodes: dict[str, NodePlan],
        mesh_names: set[str],
    ) -> MeshPlan | None:
        element = f"groups.{group_name}"
        hints = fathom_meta(group)
        if group.get("excludes"):
            self.report(f"{element}.excludes", "not mapped: a Fathom mesh tests every pair of its members")
        if group.get("excludes-self") == "disabled":
            self.report(f"{element}.excludes-self", "not mapped: Fathom never tests a host to itself")
        kind, members, targets = self.membership(group_name, group, tasks, nodes)
        if not members:
            self.report(element, "none of its addresses is a Fathom agent or perfSONAR node, so no mesh is made")
            for task in tasks:
                self.report(f"tasks.{task.name}", f"its group {group_name} became no Fathom mesh")
            return None
        all_agents = False
        if hints.get("all_agents") is True:
            if {name for name, _ in members} == {agent.name for agent in self.agents}:
                all_agents, members = True, []
            else:
                self.report(
                    f"{element}._meta.fathom.all_agents",
                    "its addresses are not all of Fathom's agents: imported as listed",
                )
        tests = self.named_tests([task.test for task in tasks] + extra)
        name = hints["mesh"] if valid_name(hints.get("mesh")) else name_from(group_name, "psconfig")
        description = hints.get("description")
        if not isinstance(description, str):
            description = f"Imported from pSConfig group {group_name}"[:500]
        self.mapped.add(element)
        for test in tests:
            self.mapped.update(test.elements)
        return MeshPlan(
            name=unique_name(name, mesh_names),
            element=element,
            kind=kind,
            description=description,
            unidirectional=kind == MeshKind.DISJOINT and bool(group.get("unidirectional", False)),
            enabled=hints.get("enabled", True) is not False,
            all_agents=all_agents,
            members=tuple(members),
            targets=tuple(targets),
            tests=tuple(tests),
        )

    def membership(
        self, group_name: str, group: dict[str, Any], tasks: list[MappedTask], nodes: dict[str, NodePlan]
    ) -> tuple[MeshKind, list[tuple[str, str]], list[str]]:
        """The mesh kind, its (agent name, side) members and its targets."""
        element = f"groups.{group_name}"
        if group["type"] == "disjoint" and fathom_meta(group).get("kind") == MeshKind.LIST:
            # Fathom's own list mesh, exported as its members (A) to its targets (B).
            members = self.members(element, self.selections(group_name, group, "a-addresses"), MemberSide.A, nodes)
            far_ends = self.selections(group_name, group, "b-addresses")
            self.mapped.update(f"addresses.{name}" for name in far_ends)
            return MeshKind.LIST, members, [self.address_of(name) for name in far_ends]
        if group["type"] == "disjoint":
            return MeshKind.DISJOINT, self.disjoint_members(group_name, group, nodes), []
        if group["type"] == "list":
            return MeshKind.LIST, *self.list_members(group_name, group, tasks, nodes)
        names = self.selections(group_name, group, "addresses")
        self.report_same_host(group_name, group, names)
        return MeshKind.MESH, self.members(element, names, MemberSide.A, nodes), []

    def disjoint_members(
        self, group_name: str, group: dict[str, Any], nodes: dict[str, NodePlan]
    ) -> list[tuple[str, str]]:
        element = f"groups.{group_name}"
        a_side = self.selections(group_name, group, "a-addresses")
        b_side = self.selections(group_name, group, "b-addresses")
        self.report_same_host(group_name, group, a_side + b_side)
        members = self.members(element, a_side, MemberSide.A, nodes)
        on_a = {agent for agent, _ in members}
        for agent, side in self.members(element, b_side, MemberSide.B, nodes):
            if agent in on_a:
                reason = f"{agent} is on both sides; a Fathom member has one side: kept on A"
                self.report(f"{element}.b-addresses", reason)
            else:
                members.append((agent, side))
        return members

    def list_members(
        self, group_name: str, group: dict[str, Any], tasks: list[MappedTask], nodes: dict[str, NodePlan]
    ) -> tuple[list[tuple[str, str]], list[str]]:
        element = f"groups.{group_name}"
        listed = self.selections(group_name, group, "addresses")
        targets: list[str] = []
        if any(task.dest_is_element for task in tasks):
            # The far end is the listed address itself: those with an agent measure, the
            # others are what they measure to (never registered).
            with_agent = [name for name in listed if self.resolve(name) is not None]
            members = self.members(element, with_agent, MemberSide.A, nodes)
            for name in listed:
                if name not in with_agent:
                    targets.append(self.address_of(name))
                    self.mapped.add(f"addresses.{name}")
        else:
            members = self.members(element, listed, MemberSide.A, nodes)
        for task in tasks:
            targets.extend(target for target in task.targets if target not in targets)
        if len({tuple(task.targets) for task in tasks}) > 1:
            reason = "its tasks test to different hosts; a Fathom list mesh tests every member to every target"
            self.report(element, reason)
        return members, targets

    @staticmethod
    def named_tests(tests: list[TestPlan]) -> list[TestPlan]:
        taken: set[str] = set()
        named = []
        for test in tests:
            unique = unique_name(test.name, taken)
            named.append(
                test if unique == test.name else TestPlan(**{**test.body(), "name": unique}, elements=test.elements)
            )
        return named

    def members(self, element: str, names: list[str], side: str, nodes: dict[str, NodePlan]) -> list[tuple[str, str]]:
        """(agent name, side) of each address that is or becomes an agent, each agent once."""
        found: list[tuple[str, str]] = []
        for name in names:
            node = nodes.get(name) or self.node(name, nodes)
            nodes[name] = node
            if node.action == UNKNOWN:
                continue
            self.mapped.add(node.element)
            if any(agent == node.name for agent, _ in found):
                self.report(
                    f"{element}",
                    f"{name} is the same Fathom agent ({node.name}) as another of its addresses: listed once",
                )
                continue
            found.append((node.name, side))
        return found

    def node(self, name: str, nodes: dict[str, NodePlan]) -> NodePlan:
        element = f"addresses.{name}"
        spec = self.section("addresses")[name]
        address = str(spec["address"])
        agent = self.resolve(name)
        if agent is not None:
            return NodePlan(element, agent.name, address, MATCHED, agent.kind)
        if not self.register_unknown:
            self.report(
                element,
                f"{address}: no Fathom agent or perfSONAR node has this address or name "
                "(import with register_unknown to register it as a perfSONAR node)",
            )
            return NodePlan(element, name, address, UNKNOWN)
        agent_name = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.")[:AGENT_NAME_MAX]
        taken = {agent.name for agent in self.agents} | {
            node.name for node in nodes.values() if node.action == REGISTER
        }
        reason = None
        if not host_or_ip(address):
            reason = f"{address!r} is neither a host name nor an IP address"
        elif not AGENT_NAME_RE.match(agent_name):
            reason = f"{name!r} gives no valid agent name"
        elif agent_name in taken:
            reason = f"the name {agent_name} is taken by another agent or node"
        if reason is not None:
            self.report(element, f"cannot register it as a perfSONAR node: {reason}")
            return NodePlan(element, agent_name, address, UNKNOWN)
        return NodePlan(element, agent_name, address, REGISTER, AgentKind.PERFSONAR, api_url(spec))
