"""Forgetting what no one can use any more: old issued plans and past slots."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from measurements.retention import raw_retention_cutoff
from meshes.models import IssuedPlan, Slot
from meshes.services.issued_plans import ISSUED_PLAN_RETENTION


def forget_old_issued_plans(now: datetime | None = None) -> int:
    cutoff = (now or timezone.now()) - ISSUED_PLAN_RETENTION
    deleted, _ = IssuedPlan.objects.filter(last_served_at__lt=cutoff).delete()
    return deleted


# Past slots are forgotten in batches: the first pass on a mesh that ran for long has millions.
SLOT_FORGET_BATCH = 10_000


def forget_past_slots(now: datetime | None = None, keep_days: int | None = None) -> int:
    """Forgets slots that ended longer ago than the raw retention (`keep_days`), whatever came
    of them: a mesh of 100 agents plans tens of thousands a day. Their runs are dropped by
    then, and ingest refuses results that old, so nothing can settle or show them. Returns
    how many were forgotten."""
    cutoff = raw_retention_cutoff(now, keep_days)
    forgotten = 0
    while True:
        batch = list(Slot.objects.filter(end_at__lt=cutoff).values_list("pk", flat=True)[:SLOT_FORGET_BATCH])
        if not batch:
            return forgotten
        _, per_model = Slot.objects.filter(pk__in=batch).delete()
        forgotten += per_model.get(Slot._meta.label, 0)
