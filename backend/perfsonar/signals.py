"""Mesh edits reach perfSONAR nodes at once, not at the next beat: after a change to a mesh,
its tests or members, or to an agent (revoked, decommissioned), the tasks on nodes are
reconciled when the change commits. Nothing is done while no node is registered."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from inventory.models import Agent
from meshes.models import Mesh, MeshMember, MeshTest
from perfsonar.models import Node


def _sync_after_commit() -> None:
    if not Node.objects.exists():
        return
    from perfsonar.tasks import sync_perfsonar

    transaction.on_commit(sync_perfsonar.delay)


@receiver(post_save, sender=Mesh, dispatch_uid="perfsonar-sync-on-mesh-save")
@receiver(post_delete, sender=Mesh, dispatch_uid="perfsonar-sync-on-mesh-delete")
@receiver(post_save, sender=MeshTest, dispatch_uid="perfsonar-sync-on-test-save")
@receiver(post_delete, sender=MeshTest, dispatch_uid="perfsonar-sync-on-test-delete")
@receiver(post_save, sender=MeshMember, dispatch_uid="perfsonar-sync-on-member-save")
@receiver(post_delete, sender=MeshMember, dispatch_uid="perfsonar-sync-on-member-delete")
def sync_on_mesh_change(sender: Any, **kwargs: Any) -> None:
    _sync_after_commit()


@receiver(post_save, sender=Agent, dispatch_uid="perfsonar-sync-on-agent-change")
def sync_on_agent_change(sender: type[Agent], instance: Agent, created: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if created or update_fields is None or "revoked_at" in update_fields or "address" in update_fields:
        _sync_after_commit()
