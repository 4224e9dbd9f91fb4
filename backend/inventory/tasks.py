"""Celery wrappers around inventory services."""

from celery import shared_task

from inventory import services


@shared_task
def purge_stale_enrollment_tokens() -> int:
    return services.purge_stale_enrollment_tokens()
