"""Asking for a policer's paced UDP ramp: when a path's recent runs agree it is policed, its
next exclusive slot in the data's direction runs a ramp instead of TCP (meshes/ramps.py), at
most every FATHOM_POLICER_RAMP_EVERY_H, and sooner after a TCP run below the path's recent
median where its runs scatter over 5 % (the path is suspect: the ramp confirms or clears a
drop of the policer's rate, analysis/changes/policer_rate.py). The ramp's steps rise from below the current estimate
(TCP's rate is only a lower bound) to 6x it or to the path's TCP ceiling, whichever is
higher, and stay under the link; a ramp that lost nothing is followed by a higher one, and
one that measured nothing (it failed, its slot was missed, or the agent ran the slot's old
test) is tried again in a later slot, up to MAX_UNMEASURED an interval (services/marked_slots.py).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from analysis.changes.policer_rate import SUSPECT_BASELINE_N, suspect
from analysis.choices import Diagnosis
from analysis.models import RunAnalysis
from analysis.policer import from_ramp, ramp_rates, ramp_steps
from analysis.services.findings import run_point
from analysis.services.marked_slots import MAX_UNMEASURED, failure_reason, unmeasured
from analysis.services.paths import ceilings_now, consensus, path_policer
from analysis.services.ramp_runs import ramp_runs
from inventory.models import Agent
from measurements.models import Run
from meshes.choices import SlotState
from meshes.ramps import MIN_RAMP_STEPS, next_ramp_slot, put_ramp, ramp_slots, steps_fitting

logger = logging.getLogger(__name__)

# A ramp that lost nothing is followed by a higher one in the next slot, at most this many
# ramps an interval (6x each: 10 Mbit/s reaches 10 Gbit/s in four), and only while its top
# step was below the link's rate (past that, nothing below the link polices this path).
MAX_CLIMBS = 4
CLIMB_BELOW_LINK = 0.9


@dataclass(frozen=True)
class RampRequest:
    """What a request for a ramp came to: the slot it took and its rates, or why none."""

    slot_id: str | None
    rates_bps: list[int]
    reason: str


def request_policer_ramp(sender: Agent, receiver: Agent, now: datetime, family: int = 4) -> RampRequest:
    """Puts a ramp in the path's next slot when its label is a policer and no ramp is recent
    or already planned; says why not otherwise. Idempotent within the ramp interval."""
    every_h = settings.POLICER_RAMP_EVERY_H
    if every_h <= 0:
        return RampRequest(None, [], "ramps are off (FATHOM_POLICER_RAMP_EVERY_H=0)")
    analyses = RunAnalysis.objects.filter(source=sender, destination=receiver, family=family)
    latest = analyses.order_by("-started_at").first()
    agreed = consensus(latest) if latest is not None else None
    if latest is None or agreed is None or agreed.label.diagnosis is not Diagnosis.POLICER:
        return RampRequest(None, [], "the path's runs do not agree on a policer")
    since = now - timedelta(hours=every_h)
    ramps = ramp_slots(sender, receiver, since, family)
    waiting = [slot for slot in ramps if slot.state == SlotState.PLANNED]
    if waiting:
        started_already = waiting[0].start_at <= now
        return RampRequest(None, [], "a ramp is under way" if started_already else "a ramp is already planned")
    # Today's ceilings take several queries: read once, and only when a decision needs them.
    link = functools.cache(lambda: _link_bps(sender, receiver, latest))
    recent = ramp_runs(sender, receiver, since, now, family)
    why = ""
    if recent and not _still_climbing(recent, len(recent), link):
        # A TCP run below the path's recent median since the newest ramp: measure the policer
        # now, not in a day (analysis/changes/policer_rate.py: the ramp confirms a drop).
        if recent[0].started_at >= latest.started_at or not _suspect(latest):
            return RampRequest(None, [], f"a ramp ran in the last {every_h} h")
        why = " (the newest run lay below the path's recent median)"
    failed = unmeasured(ramps, since, "ramp_bps")
    if len(failed) >= MAX_UNMEASURED:  # the next interval tries again
        latest_reason = failure_reason(failed[-1])
        return RampRequest(None, [], f"{len(failed)} ramps failed in the last {every_h} h; the latest: {latest_reason}")
    slot = next_ramp_slot(sender, receiver, now, family)
    if slot is None:
        return RampRequest(None, [], f"no planned slot ahead holds {MIN_RAMP_STEPS} ramp steps")
    estimate = path_policer(sender, receiver, agreed, family)
    # The newest run's binding TCP ceiling: the policer lies below what TCP could have reached.
    rates = ramp_rates(
        estimate.rate_bps if estimate is not None else 0.0, link(), steps_fitting(slot), latest.ceiling_bps
    )
    if len(rates) < MIN_RAMP_STEPS:
        return RampRequest(None, [], "no ramp fits between the estimate and the link's rate")
    put_ramp(slot, rates)
    logger.info("policer ramp %s -> %s in slot %s at %s: %s bit/s", sender, receiver, slot.pk, slot.start_at, rates)
    return RampRequest(
        str(slot.pk), rates, f"a ramp of {len(rates)} steps in the slot at {slot.start_at:%H:%M:%S}{why}"
    )


def _suspect(latest: RunAnalysis) -> bool:
    """Whether the path's newest TCP run (of its option set) lay below the median of the runs
    before it, on a path whose runs scatter enough to need a ramp (policer_rate.suspect)."""
    rows = RunAnalysis.objects.filter(
        source_id=latest.source_id,
        destination_id=latest.destination_id,
        family=latest.family,
        options_key=latest.options_key,
        rate_bps__isnull=False,
    ).order_by("-started_at")[: SUSPECT_BASELINE_N + 1]
    return suspect([run_point(row) for row in reversed(rows)])


def _link_bps(sender: Agent, receiver: Agent, latest: RunAnalysis) -> float | None:
    """The slower NIC of the two, with today's tuning; None when neither reports its speed."""
    now_ceilings = ceilings_now(sender, receiver, latest)
    return now_ceilings.ceilings.at_min_rtt.ceilings.link.rate_bps if now_ceilings is not None else None


def _still_climbing(recent: list[Run], ramps: int, link_bps: Callable[[], float | None]) -> bool:
    """Whether the newest ramp lost nothing below the link: the policer is faster than its
    top step, so the next slot climbs from there rather than waiting a day, up to MAX_CLIMBS
    ramps an interval."""
    if not recent or ramps >= MAX_CLIMBS:
        return False
    steps = ramp_steps(recent[0].summary)
    measured = from_ramp(steps, "")
    if measured is None or not measured.at_least or measured.disturbed:
        return False
    top = max(step.offered_bps for step in steps)
    link = link_bps()
    return link is None or top < CLIMB_BELOW_LINK * link
