"""What became of each slot: settled by the result that names it, or missed when none came."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from inventory.addresses import address_family
from inventory.models import Agent
from meshes.choices import SlotState
from meshes.models import Slot


def record_slot_outcomes(agent: Agent, results: Iterable[dict[str, Any]]) -> None:
    """A result that names a slot of this agent settles it, late or not (measurements'
    results_stored signal calls this inside ingest's transaction). Slots are settled in id
    order, so two uploads that name the same slots lock them in the same order."""
    for result in sorted(results, key=lambda result: str(result.get("slot_id") or "")):
        slot_id = result.get("slot_id")
        if not slot_id:
            continue
        # Only the slot's own run settles it, and a measured slot stays measured: a retry
        # that failed later does not erase the run that worked.
        Slot.objects.filter(
            pk=slot_id,
            source=agent,
            destination_id=result.get("peer_id"),
            family=address_family(result["target"]),
            test_type=result["test_type"],
        ).exclude(state=SlotState.OK).update(
            state=result["status"], run_id=result["id"], reason=result["error"][:500], updated_at=timezone.now()
        )


def expire_overdue_slots(now: datetime | None = None) -> int:
    """Slots whose run should have been reported long ago become missed, with the reason.

    A slot that an upload is settling right now (its row locked) is skipped: the upload
    settles it, or the next pass expires it. Waiting for it instead deadlocked with an
    agent's upload of many late results, each side holding slots the other wanted."""
    now = now or timezone.now()
    grace = timedelta(seconds=settings.SLOT_RESULT_GRACE_S)
    with transaction.atomic():
        overdue = list(
            Slot.objects.filter(state=SlotState.PLANNED, end_at__lt=now - grace)
            .order_by("pk")
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)
        )
        return Slot.objects.filter(pk__in=overdue).update(
            state=SlotState.MISSED,
            reason=f"no result from the agent within {settings.SLOT_RESULT_GRACE_S} s of the slot's end",
            updated_at=now,
        )
