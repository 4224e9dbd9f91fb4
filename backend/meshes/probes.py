"""A streams probe: several TCP streams in one of a path's exclusive slots, beside its
single-stream runs, so the analysis can tell a limit each flow meets on its own from one the
path puts on all of them together (analysis/services/stream_probes.py asks for it).

As with a ramp (meshes/ramps.py), the slot keeps its time and both agents' reservation; only
its spec changes (more streams, marked as a probe), so nothing is re-planned. Several streams
take the same measured seconds as one.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from inventory.models import Agent
from meshes.choices import SlotState
from meshes.models import Slot
from meshes.ramps import future_slots, marked_slots

# Enough streams to add up to several times one where each flow is held on its own, few
# enough to leave the hosts' CPU out of it (the options cap parallel at 128 for that reason).
PROBE_STREAMS = 4


def probe_slots(sender: Agent, receiver: Agent, since: datetime, family: int = 4) -> list[Slot]:
    """The slots in the data's direction that hold a streams probe and start from `since` on."""
    return marked_slots(sender, receiver, since, "streams_probe", family)


def next_probe_slot(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> Slot | None:
    """The path's first planned TCP slot in the data's direction that its client fetches
    before it starts (the planning lead)."""
    # From the moment of writing, not the caller's: a long analysis pass must not hand a slot
    # to a plan its client has already fetched.
    after = max(now, timezone.now()) + timedelta(seconds=settings.SLOT_PLANNING_LEAD_S)
    candidates = future_slots(sender, receiver, after, family)
    return next((slot for slot in candidates if isinstance(slot.spec, dict) and not slot.spec.get("udp")), None)


def put_streams_probe(slot: Slot, streams: int = PROBE_STREAMS) -> bool:
    """Turns a planned slot into the probe, if it is still planned (the caller's read may be
    stale by the time it writes); returns whether it did."""
    if streams < 2:
        raise ValueError(f"a streams probe runs several streams, not {streams}")
    spec = {**slot.spec, "parallel": streams, "streams_probe": True}
    return bool(Slot.objects.filter(pk=slot.pk, state=SlotState.PLANNED).update(spec=spec, updated_at=timezone.now()))
