"""Agents joining or leaving change the meshes' paths: re-plan exclusive slots at once,
rather than at the next beat run, so a new agent's throughput tests start within minutes
and a revoked agent's slots never start at all."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from inventory.models import Agent
from meshes.choices import SlotState
from meshes.models import Slot
from meshes.services import plan_exclusive_slots


@receiver(post_save, sender=Agent, dispatch_uid="meshes-replan-on-agent-change")
def replan_on_agent_change(sender: type[Agent], instance: Agent, created: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    # Enrolment saves the whole agent (new, or re-enrolled with a new address); revocation
    # saves revoked_at. Host facts and last-seen updates change no path.
    if not (created or update_fields is None or "revoked_at" in update_fields):
        return
    if instance.revoked_at is not None:
        involved = Q(source=instance) | Q(destination=instance)
        Slot.objects.filter(involved, state=SlotState.PLANNED, start_at__gt=timezone.now()).delete()
    transaction.on_commit(plan_exclusive_slots)
