"""Whether a node's run fits the task it claims: what keeps a node's archive token from
inventing results (an attacker with the token, or a node misconfigured to archive another
task's runs to Fathom).

A run is taken only if its task could have run it: a task the node accepted, the run started
within the task's life (from its start to its end or deletion), under the task's own URL,
in its slot for an exclusive (throughput) task and once for that slot, and for a repeating
task no more often than its schedule allows. A push and a polled run are held to the same.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from measurements.models import Run
from perfsonar.choices import TaskState
from perfsonar.durations import parse_duration
from perfsonar.mapping import PsRun, task_uuid
from perfsonar.models import Task

# The node's clock against Fathom's, and pScheduler's own start-up: a run a little outside
# its window is still its own.
GRACE = timedelta(minutes=2)
# pScheduler's sliprand starts each repeat anywhere in its slip (less than the interval), so
# two runs of one schedule can lie closer than an interval; never three within one each side.
MOST_NEIGHBOURS = 2


def refusal(task: Task, run: PsRun, run_id: uuid.UUID) -> str | None:
    """Why `run` cannot be a run of `task`, or None when it can."""
    if task.state == TaskState.REFUSED:
        return f"its task {task.pk} was refused by the node and never ran"
    if task.url and task_uuid(task.url) != task_uuid(run.href):
        return f"it is not under its task's URL ({task.url})"
    ended = min(task.until, task.deleted_at) if task.deleted_at else task.until
    if not task.starts_at - GRACE <= run.start <= ended + GRACE:
        return f"it started at {_utc(run.start)}, outside its task's life ({_utc(task.starts_at)} to {_utc(ended)})"
    if task.slot is not None:
        slot = task.slot
        if not slot.start_at - GRACE <= run.start <= slot.end_at:
            return f"it started at {_utc(run.start)}, outside its slot ({_utc(slot.start_at)} to {_utc(slot.end_at)})"
        other = Run.objects.filter(slot_id=slot.pk).exclude(id=run_id).values_list("id", flat=True).first()
        if other is not None:
            return f"its slot {slot.pk} already has its run ({other})"
        return None
    return too_often(task.source_id, task.test_id, run, run_id, repeat_s(task))


def too_often(
    source_id: uuid.UUID, test_id: str, run: PsRun, run_id: uuid.UUID, interval_s: float | None
) -> str | None:
    """Why a run of a repeating test comes more often than its interval allows, or None."""
    if not interval_s:
        return None
    reach = timedelta(seconds=interval_s)
    neighbours = (
        Run.objects.filter(
            source_id=source_id,
            test_id=test_id,
            started_at__gt=run.start - reach,
            started_at__lt=run.start + reach,
        )
        .exclude(id=run_id)
        .count()
    )
    if neighbours > MOST_NEIGHBOURS:
        return (
            f"{neighbours} other runs of its test lie within its interval ({interval_s:g} s) of it:"
            " more than its schedule runs"
        )
    return None


def repeat_s(task: Task) -> float | None:
    """The task's repeat interval in seconds (its posted schedule, else its mesh test's)."""
    schedule = task.body.get("schedule") if isinstance(task.body, dict) else None
    if isinstance(schedule, dict) and "repeat" in schedule:
        try:
            return parse_duration(schedule["repeat"])
        except ValueError:
            pass
    return float(task.mesh_test.interval_s) if task.mesh_test is not None else None


def _utc(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
