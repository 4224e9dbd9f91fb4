"""Celery wrappers around measurement services."""

from celery import shared_task

from measurements import retention


@shared_task
def drop_expired_measurements() -> dict[str, int]:
    return retention.drop_expired_measurements()
