"""Celery wrappers around meshes services."""

from celery import shared_task

from meshes import services


@shared_task
def plan_exclusive_slots() -> int:
    return services.plan_exclusive_slots().placed


@shared_task
def expire_overdue_slots() -> int:
    return services.expire_overdue_slots()


@shared_task
def forget_old_issued_plans() -> int:
    return services.forget_old_issued_plans()


@shared_task
def forget_past_slots() -> int:
    return services.forget_past_slots()
