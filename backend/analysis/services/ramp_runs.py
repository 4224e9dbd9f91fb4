"""A path's paced UDP ramps as stored runs: which runs are ramps, their steps, and the newest
one read as the policer's measured rate (analysis/policer.py `from_ramp`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Q

from analysis.policer import PolicerEstimate, from_ramp, ramp_steps
from analysis.services.inputs import as_dict, data_direction
from inventory.models import Agent
from measurements.choices import RunStatus, TestType
from measurements.models import Run

# A ramp older than this no longer speaks for the policer: its operator may have changed it.
RAMP_VALID = timedelta(days=30)
# How many of the path's newest ramps (both directions) are looked at for one in the direction asked.
_NEWEST = 10


def is_ramp(run: Run) -> bool:
    ramp = as_dict(run.params).get("ramp_bps")
    return isinstance(ramp, list) and len(ramp) > 0


def ramp_runs(
    sender: Agent, receiver: Agent, since: datetime, now: datetime, family: int = 4, newest: int = _NEWEST
) -> list[Run]:
    """The OK ramps of the path (in its family) from `since`, newest first, whose data went
    sender -> receiver, of its `newest` ramps in both directions."""
    rows = (
        Run.objects.filter(
            Q(source_id=sender.pk, destination_id=receiver.pk) | Q(source_id=receiver.pk, destination_id=sender.pk),
            family=family,
            test_type=TestType.THROUGHPUT,
            status=RunStatus.OK,
            started_at__gte=since,
            started_at__lte=now,
            params__has_key="ramp_bps",
        )
        .exclude(params__ramp_bps=[])
        .order_by("-started_at")[:newest]
    )
    agents = {sender.pk: sender, receiver.pk: receiver}
    return [run for run in rows if (direction := data_direction(run, agents)) and direction[0].pk == sender.pk]


def latest_ramp(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> PolicerEstimate | None:
    """What the path's newest ramp of the last RAMP_VALID measured, if any."""
    for run in ramp_runs(sender, receiver, now - RAMP_VALID, now, family):
        estimate = from_ramp(ramp_steps(run.summary), f"{run.started_at:%Y-%m-%d %H:%M} UTC")
        if estimate is not None:
            return estimate
    return None
