"""Celery wrappers around alerting services. Delivery runs in its own tasks, so a slow SMTP
server or webhook never holds up evaluation, ingest or analysis."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.utils import timezone

from alerts.services import delivery, evaluate


@shared_task
def evaluate_alerts() -> dict[str, Any]:
    """One evaluation tick, then the deliveries it queued (after its commit)."""
    tick = evaluate.evaluate(timezone.now())
    for delivery_id in tick.deliveries:
        deliver.delay(delivery_id)
    return {"conditions": tick.conditions, "opened": len(tick.opened), "deliveries": len(tick.deliveries)}


@shared_task
def deliver(delivery_id: int) -> str:
    outcome = delivery.deliver(delivery_id)
    if outcome.retry_in_s is not None:
        deliver.apply_async((delivery_id,), countdown=outcome.retry_in_s)
    return outcome.status


@shared_task
def redeliver_due() -> int:
    """Due retries whose task was lost, and deliveries a killed worker left in sending."""
    ids = delivery.due(timezone.now())
    for delivery_id in ids:
        deliver.delay(delivery_id)
    return len(ids)
