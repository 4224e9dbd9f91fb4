"""Celery wrappers around meshes services."""

from celery import shared_task

from core import metrics
from meshes.services import housekeeping, outcomes, slot_planning


@shared_task
def plan_exclusive_slots() -> int:
    with metrics.timed(metrics.SLOT_PLANNING_SECONDS):
        return slot_planning.plan_exclusive_slots().placed


@shared_task
def expire_overdue_slots() -> int:
    return outcomes.expire_overdue_slots()


@shared_task
def forget_old_issued_plans() -> int:
    return housekeeping.forget_old_issued_plans()


@shared_task
def forget_past_slots() -> int:
    return housekeeping.forget_past_slots()
