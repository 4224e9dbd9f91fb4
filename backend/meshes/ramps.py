"""A policer's paced UDP ramp, run in a path's next exclusive slot.

The analysis asks for a ramp when a path's label is a policer (analysis/services/ramps.py).
The slot keeps its time and both agents' reservation; only its spec becomes a ramp that fits
in it, so nothing is re-planned and no other slot moves. The changed spec changes the
client's plan version, so the agent fetches it on its next poll: hence the planning lead.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import TestType
from meshes.choices import SlotState
from meshes.models import Slot

# Each step: one iperf3 UDP run of RAMP_STEP_S measured seconds (a token bucket's burst is
# milliseconds of it), plus a second to start iperf3 and a few round trips to connect, agree
# the parameters and exchange results.
RAMP_STEP_S = 2
RAMP_OMIT_S = 0  # the agent omits nothing in a ramp (iperf3 miscounts UDP loss across --omit)
RAMP_STEP_OVERHEAD_S = 1
RAMP_STEP_ROUND_TRIPS = 4
MIN_RAMP_STEPS = 3
MAX_RAMP_STEPS = 6
# How many of a path's next slots are looked at for one in the data's direction.
_CANDIDATES = 20


def sends_from(slot: Slot, sender: Agent) -> bool:
    """Whether the slot's data leaves `sender`: the client sends unless iperf3 -R."""
    reverse = isinstance(slot.spec, dict) and slot.spec.get("reverse") is True
    return (slot.source_id == sender.pk) != reverse


def marked_slots(sender: Agent, receiver: Agent, since: datetime, key: str, family: int = 4) -> list[Slot]:
    """The slots of the path (in its family) in the data's direction whose spec holds `key`
    (a ramp's ramp_bps, a streams probe's streams_probe) and that start from `since` on,
    whatever came of them (still to come, under way, ok, failed or missed)."""
    rows = Slot.objects.filter(
        Q(source=sender, destination=receiver) | Q(source=receiver, destination=sender),
        family=family,
        test_type=TestType.THROUGHPUT,
        start_at__gte=since,
        spec__has_key=key,
    ).order_by("start_at")
    return [slot for slot in rows if sends_from(slot, sender)]


def ramp_slots(sender: Agent, receiver: Agent, since: datetime, family: int = 4) -> list[Slot]:
    """The slots in the data's direction that hold a ramp and start from `since` on."""
    return marked_slots(sender, receiver, since, "ramp_bps", family)


def future_slots(sender: Agent, receiver: Agent, after: datetime, family: int = 4) -> list[Slot]:
    """The path's next planned slots of a mesh test in the data's direction that run Fathom's
    own test (no perfSONAR node) and hold no ramp or streams probe yet."""
    rows = (
        Slot.objects.filter(
            Q(source=sender, destination=receiver) | Q(source=receiver, destination=sender),
            family=family,
            state=SlotState.PLANNED,
            test_type=TestType.THROUGHPUT,
            mesh_test__isnull=False,
            start_at__gte=after,
        )
        # A perfSONAR node runs pScheduler's own test in its slots, never a Fathom ramp.
        .exclude(source__kind=AgentKind.PERFSONAR)
        .exclude(destination__kind=AgentKind.PERFSONAR)
        .exclude(spec__has_key="ramp_bps")
        .exclude(spec__has_key="streams_probe")
        .order_by("start_at")[:_CANDIDATES]
    )
    return [slot for slot in rows if sends_from(slot, sender)]


def next_ramp_slot(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> Slot | None:
    """The path's first planned slot in the data's direction that its client fetches before it
    starts (the planning lead) and that holds at least MIN_RAMP_STEPS steps."""
    # From the moment of writing, not the caller's: a long analysis pass must not hand a slot
    # to a plan its client has already fetched.
    after = max(now, timezone.now()) + timedelta(seconds=settings.SLOT_PLANNING_LEAD_S)
    candidates = future_slots(sender, receiver, after, family)
    return next((slot for slot in candidates if steps_fitting(slot) >= MIN_RAMP_STEPS), None)


def steps_fitting(slot: Slot) -> int:
    """How many steps the slot's reservation holds on its path's RTT (the spec carries it)."""
    seconds = (slot.end_at - slot.start_at).total_seconds()
    rtt_ms = slot.spec.get("path_rtt_ms") if isinstance(slot.spec, dict) else None
    rtt_s = rtt_ms / 1000 if isinstance(rtt_ms, int | float) and 0 < rtt_ms <= 10_000 else 0.0
    step_s = RAMP_STEP_S + RAMP_OMIT_S + RAMP_STEP_OVERHEAD_S + RAMP_STEP_ROUND_TRIPS * rtt_s
    return min(MAX_RAMP_STEPS, math.floor(seconds / step_s))


def ramp_spec(spec: dict[str, Any], rates_bps: list[int]) -> dict[str, Any]:
    """The slot's spec as a UDP ramp: one stream, the steps' rates, TCP-only options cleared."""
    return {
        **spec,
        "udp": True,
        "bitrate_bps": rates_bps[0],
        "ramp_bps": rates_bps,
        "duration_s": RAMP_STEP_S,
        "omit_s": RAMP_OMIT_S,
        "parallel": 1,
        "fq_rate_bps": 0,
        "congestion": "",
        "mss": 0,
    }


def put_ramp(slot: Slot, rates_bps: list[int]) -> None:
    """Turns a planned slot into the ramp, if it is still planned (the caller's read may be
    stale by the time it writes)."""
    if not MIN_RAMP_STEPS <= len(rates_bps) <= steps_fitting(slot):
        raise ValueError(f"a ramp of {len(rates_bps)} steps does not fit slot {slot.pk}")
    Slot.objects.filter(pk=slot.pk, state=SlotState.PLANNED).update(
        spec=ramp_spec(slot.spec, rates_bps), updated_at=timezone.now()
    )
