"""What came of the slots the analysis marked for its own runs (a policer's ramp, a streams
probe): a marked slot is measured only when an ok run of that kind settled it. Failed, missed,
or settled by the slot's earlier test (the agent fetched its plan before the mark) is
unmeasured, and the next slot may try again, up to MAX_UNMEASURED an interval.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from measurements.choices import RunStatus
from measurements.models import Run
from meshes.choices import SlotState
from meshes.models import Slot

# A lost datagram or a busy moment can fail one marked run; a host that cannot run one (an
# iperf3 without pacing, a firewall on UDP) fails every one, and is not asked in every slot.
MAX_UNMEASURED = 3
STALE_PLAN = "the agent ran the slot's earlier test: it had fetched its plan before the change"


def measured_and_unmeasured(slots: list[Slot], since: datetime, key: str) -> tuple[list[Slot], list[Slot]]:
    """The marked slots that are over, oldest first, split into those an ok run with `key` in
    its params settled and those that measured nothing."""
    over = [slot for slot in slots if slot.state != SlotState.PLANNED]
    measured = set(
        Run.objects.filter(
            id__in=[slot.run_id for slot in over if slot.run_id is not None],
            started_at__gte=since - timedelta(hours=1),  # a slot's run starts in its slot, give or take clocks
            status=RunStatus.OK,
            params__has_key=key,
        ).values_list("id", flat=True)
    )
    return [slot for slot in over if slot.run_id in measured], [slot for slot in over if slot.run_id not in measured]


def unmeasured(slots: list[Slot], since: datetime, key: str) -> list[Slot]:
    """The marked slots, oldest first, that are over without a run of their kind."""
    return measured_and_unmeasured(slots, since, key)[1]


def failure_reason(slot: Slot) -> str:
    """Why a marked slot measured nothing, in the words the request's reason carries."""
    if slot.state == SlotState.OK:
        return STALE_PLAN
    return slot.reason or "no result"
