"""Mesh changes as the audit log keeps them: every save, delete and revert of a mesh is
checked against the exclusive plan, written, re-planned and recorded in one transaction, with
the mesh as its API writes it before and after; a revert restores an entry's `before`."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from audit.choices import AuditAction, AuditObject
from audit.models import AuditEntry
from audit.services import Actor, record
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.preview import change_refusals, draft_mesh
from meshes.services.slot_planning import lock_planner, replan_mesh


def snapshot(mesh: Mesh) -> dict[str, Any]:
    """The mesh as its API writes it, read afresh (not from a stale prefetch)."""
    fresh = Mesh.objects.prefetch_related("members__agent", "tests").get(pk=mesh.pk)
    return dict(MeshSerializer(fresh).data)


# Fields that change what the mesh shows, never what it measures: a write of only these
# neither waits for the planner nor re-plans (a grid threshold is not a schedule change).
PLAN_NEUTRAL_FIELDS = frozenset({"description", "psconfig_published", "thresholds"})


def save_mesh(serializer: MeshSerializer, actor: Actor, action: AuditAction | None = None) -> Mesh:
    """Saves a validated MeshSerializer unless the change overbooks an agent or leaves runs
    without a slot (400 {"tests": [...]}, nothing written), re-plans and records the change
    (CREATE or UPDATE unless `action` says otherwise)."""
    instance = serializer.instance
    plans = instance is None or not set(serializer.validated_data) <= PLAN_NEUTRAL_FIELDS
    with transaction.atomic():
        before = snapshot(instance) if instance is not None else None
        if plans:
            lock_planner()  # the check and the change see the same plan
            refusals = change_refusals(draft_mesh(serializer.validated_data, instance), instance)
            if refusals:
                raise ValidationError({"tests": refusals})
        mesh = serializer.save()
        if plans:
            replan_mesh(mesh)
        after = snapshot(mesh)
        if before != after:
            action = action or (AuditAction.UPDATE if instance is not None else AuditAction.CREATE)
            record(actor, action, AuditObject.MESH, mesh.pk, mesh.name, before=before, after=after)
    return mesh


def delete_mesh(mesh: Mesh, actor: Actor) -> None:
    with transaction.atomic():
        before = snapshot(mesh)
        key, name = mesh.pk, mesh.name
        mesh.delete()  # its tests' future slots go with them (meshes.signals)
        record(actor, AuditAction.DELETE, AuditObject.MESH, key, name, before=before, after=None)


def mesh_history(mesh: Mesh) -> QuerySet[AuditEntry]:
    """The mesh's audit entries, newest first; keyed by its id, so they survive a rename."""
    return AuditEntry.objects.filter(object_type=AuditObject.MESH, object_key=str(mesh.pk)).order_by("-id")


def revert_mesh(mesh: Mesh, entry_id: int, actor: Actor) -> Mesh:
    """Restores the mesh as it was before audit entry `entry_id`, through the same validation
    and plan check as any save; 400 {"entry": [...]} when it cannot be."""
    entry = mesh_history(mesh).filter(pk=entry_id).first()
    if entry is None:
        raise ValidationError({"entry": [f"entry {entry_id} is not a change of mesh {mesh.name}"]})
    if entry.before is None:
        raise ValidationError(
            {"entry": [f"entry {entry_id} created mesh {mesh.name}: there is no earlier state to restore"]}
        )
    serializer = MeshSerializer(mesh, data=entry.before)
    cannot = f"mesh {mesh.name} cannot be restored as it was before entry {entry_id}"
    if not serializer.is_valid():
        raise ValidationError({"entry": [f"{cannot}: {message}" for message in flat_messages(serializer.errors)]})
    try:
        return save_mesh(serializer, actor, AuditAction.REVERT)
    except ValidationError as error:
        raise ValidationError({"entry": [f"{cannot}: {message}" for message in flat_messages(error.detail)]}) from error


def flat_messages(detail: Any, prefix: str = "") -> list[str]:
    """DRF's nested errors as "members.0.agent: message" lines."""
    if isinstance(detail, dict):
        return [
            message
            for key, value in detail.items()
            for message in flat_messages(value, prefix if key == "non_field_errors" else f"{prefix}{key}.")
        ]
    if isinstance(detail, list):
        messages = []
        for index, item in enumerate(detail):
            if isinstance(item, dict | list):
                messages += flat_messages(item, f"{prefix}{index}.")
            else:
                messages += flat_messages(item, prefix)
        return messages
    return [f"{prefix.rstrip('.')}: {detail}" if prefix else str(detail)]
