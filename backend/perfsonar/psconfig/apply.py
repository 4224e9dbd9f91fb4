"""Writing a pSConfig import: unknown hosts registered as perfSONAR nodes, then each mesh
created or updated by name through the same validation, plan check and audit as a save from
the API (meshes.history.save_mesh), all in one transaction. Importing the same template
again finds its meshes by name and updates them, or leaves them unchanged.

A dry run does exactly the same and rolls back, so its report is what the import would do;
the tasks on perfSONAR nodes and the nodes' checks follow only a commit (on_commit).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from rest_framework.exceptions import ValidationError

from audit.services import Actor
from inventory.choices import AgentKind
from inventory.models import Agent
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.services.writes import flat_messages, save_mesh, snapshot
from perfsonar.nodes import NodeError, register_node
from perfsonar.psconfig.import_model import REGISTER, UNKNOWN, ImportPlan, KnownAgent, MeshPlan, NodePlan
from perfsonar.psconfig.importer import plan_import
from perfsonar.tasks import check_perfsonar_nodes

CREATE, UPDATE, UNCHANGED = "create", "update", "unchanged"


@dataclass
class ImportReport:
    dry_run: bool
    meshes: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    unmapped: list[dict[str, str]]
    # What each address class selected: {name, element, selected (address names), notes}.
    address_classes: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def known_agents() -> list[KnownAgent]:
    """The agents and nodes an address may be: active ones (a revoked agent is in no mesh)."""
    rows = Agent.objects.filter(revoked_at__isnull=True).order_by("name").values_list("name", "address", "kind")
    return [KnownAgent(name, address, kind) for name, address, kind in rows]


def import_template(template: Any, actor: Actor, dry_run: bool = False, register_unknown: bool = False) -> ImportReport:
    """Plans and writes (or, dry, only tries) an import; TemplateError, with nothing written,
    when the template is not one pSConfig would accept."""
    plan = plan_import(template, known_agents(), register_unknown)
    return apply_plan(plan, actor, dry_run)


def apply_plan(plan: ImportPlan, actor: Actor, dry_run: bool) -> ImportReport:
    unmapped = [{"element": entry.element, "reason": entry.reason} for entry in plan.unmapped]
    meshes: list[dict[str, Any]] = []
    with transaction.atomic():
        nodes = [_registered(node, actor, dry_run, unmapped) for node in plan.nodes]
        left_out = frozenset(node.name for node, planned in zip(nodes, plan.nodes, strict=True) if node != planned)
        for mesh in plan.meshes:
            action, reason = _apply_mesh(mesh, left_out, actor)
            if reason is not None:
                unmapped.append({"element": mesh.element, "reason": reason})
            else:
                meshes.append(_mesh_report(mesh, action, left_out))
        if dry_run:
            transaction.set_rollback(True)
        elif any(node.action == REGISTER for node in nodes):
            transaction.on_commit(check_perfsonar_nodes.delay)  # a new node is checked at once
    return ImportReport(
        dry_run=dry_run,
        meshes=meshes,
        nodes=[
            {"name": node.name, "address": node.address, "action": node.action, "element": node.element}
            for node in nodes
        ],
        unmapped=unmapped,
        address_classes=[
            {
                "name": evaluation.name,
                "element": f"address-classes.{evaluation.name}",
                "selected": list(evaluation.selected),
                "notes": list(evaluation.notes),
            }
            for evaluation in plan.address_classes
        ],
    )


def _registered(node: NodePlan, actor: Actor, dry_run: bool, unmapped: list[dict[str, str]]) -> NodePlan:
    """The node as it stands after registering it if planned: unknown, and reported, when
    the registration is refused."""
    if node.action != REGISTER:
        return node
    reason = _register(node, actor, dry_run)
    if reason is None:
        return node
    unmapped.append({"element": node.element, "reason": f"cannot register it as a perfSONAR node: {reason}"})
    return NodePlan(node.element, node.name, node.address, UNKNOWN)


def _register(node: NodePlan, actor: Actor, dry_run: bool) -> str | None:
    """Registers the node (a dry run stands in a row, rolled back with the rest); why not."""
    if dry_run:
        Agent.objects.create(name=node.name, kind=AgentKind.PERFSONAR, address=node.address, credential_sha256="")
        return None
    try:
        register_node(node.name, node.api_url, _ip_or_blank(node.address), actor=actor)
    except NodeError as error:
        return str(error)
    return None


def _ip_or_blank(address: str) -> str:
    # register_node takes an IP address, and resolves the API's host name when given none.
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return ""


def _apply_mesh(mesh: MeshPlan, left_out: frozenset[str], actor: Actor) -> tuple[str, str | None]:
    """(create | update | unchanged, None), or ("", why Fathom refused the mesh)."""
    body = mesh.body(left_out)
    if not body["members"] and not body["all_agents"]:
        return "", "none of its hosts is a Fathom agent or a registered node, so no mesh is made"
    existing = Mesh.objects.filter(name=mesh.name).first()
    serializer = MeshSerializer(existing, data=body)
    if not serializer.is_valid():
        return "", "Fathom refused the mesh: " + "; ".join(flat_messages(serializer.errors))
    if existing is not None and _comparable(snapshot(existing), body) == _comparable(body, body):
        return UNCHANGED, None
    try:
        save_mesh(serializer, actor)
    except ValidationError as error:
        return "", "Fathom refused the mesh: " + "; ".join(flat_messages(error.detail))
    return (UPDATE if existing is not None else CREATE), None


def _comparable(mesh: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The fields an import sets, members and tests in a stable order."""
    fields = {key: mesh.get(key) for key in body if key not in ("members", "tests")}
    fields["members"] = sorted((member["agent"], member["side"]) for member in mesh.get("members", []))
    fields["tests"] = sorted(json.dumps(test, sort_keys=True) for test in mesh.get("tests", []))
    return fields


def _mesh_report(mesh: MeshPlan, action: str, left_out: frozenset[str]) -> dict[str, Any]:
    return {
        "name": mesh.name,
        "group": mesh.element.removeprefix("groups."),
        "action": action,
        "kind": str(mesh.kind),
        "members": [name for name, _ in mesh.members if name not in left_out],
        "targets": list(mesh.targets),
        "tests": [
            {
                "name": test.name,
                "test_type": test.test_type,
                "interval_s": test.interval_s,
                "slip_s": test.slip_s,
                "enabled": test.enabled,
            }
            for test in mesh.tests
        ],
    }
