"""Changes that alter the meshes' paths outside a mesh edit: an agent joining or leaving
(a decommissioned one leaves its meshes' member lists too) re-plans exclusive slots at once
(not at the next beat run), so a new agent's throughput tests start within minutes and a
revoked agent's slots never start; a deleted test's slots go with it; a stored result that
names a slot settles it; results on paths outside the agent's plan are refused."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_save, pre_delete
from django.dispatch import receiver
from django.utils import timezone

from inventory.models import Agent
from measurements.kinds.base import BatchError
from measurements.models import Run
from measurements.signals import results_received, results_stored
from meshes.choices import SlotState
from meshes.models import MeshMember, MeshTest, Slot
from meshes.services.outcomes import record_slot_outcomes
from meshes.services.refusals import unplanned_results
from meshes.services.slot_planning import lock_planner, plan_exclusive_slots


@receiver(post_save, sender=Agent, dispatch_uid="meshes-replan-on-agent-change")
def replan_on_agent_change(sender: type[Agent], instance: Agent, created: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    # Enrolment saves the whole agent (new, or re-enrolled with a new address); revocation
    # saves revoked_at, decommissioning decommissioned_at too. Host facts and last-seen
    # updates change no path.
    if not (created or update_fields is None or "revoked_at" in update_fields):
        return
    if instance.decommissioned_at is not None:
        # Retired for good: out of every mesh that lists it, so no edit can bring it back.
        MeshMember.objects.filter(agent=instance).delete()
    if instance.revoked_at is not None:
        lock_planner()
        involved = Q(source=instance) | Q(destination=instance)
        Slot.objects.filter(involved, state=SlotState.PLANNED, start_at__gt=timezone.now()).delete()
    transaction.on_commit(plan_exclusive_slots)


@receiver(pre_delete, sender=MeshTest, dispatch_uid="meshes-drop-slots-of-deleted-test")
def drop_slots_of_deleted_test(sender: type[MeshTest], instance: MeshTest, **kwargs: Any) -> None:
    """A test removed from a mesh (or with its mesh) runs no more: its slots yet to start go,
    before SET_NULL would orphan them where no re-planning can find them."""
    lock_planner()
    now = timezone.now()
    Slot.objects.filter(mesh_test=instance, state=SlotState.PLANNED, start_at__gt=now).delete()
    Slot.objects.filter(mesh_test=instance, state=SlotState.UNSCHEDULABLE, period_start__gt=now).delete()


@receiver(results_stored, sender=Run, dispatch_uid="meshes-settle-slots-of-stored-results")
def settle_slots_of_stored_results(
    sender: type[Run], agent: Agent, results: list[dict[str, Any]], **kwargs: Any
) -> None:
    record_slot_outcomes(agent, results)


@receiver(results_received, sender=Run, dispatch_uid="meshes-refuse-results-off-the-plan")
def refuse_results_off_the_plan(
    sender: type[Run], agent: Agent, results: list[dict[str, Any]], **kwargs: Any
) -> list[BatchError]:
    return unplanned_results(agent, results)
