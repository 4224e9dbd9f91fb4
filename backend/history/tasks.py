"""Celery wrappers around the history services (scheduled in fathom/scheduled.py)."""

from celery import shared_task

from history import refresh, retention


@shared_task
def refresh_rollups() -> dict[str, int]:
    return refresh.refresh()


@shared_task
def drop_expired_rollups() -> dict[str, int]:
    return retention.drop_expired_rollups()
