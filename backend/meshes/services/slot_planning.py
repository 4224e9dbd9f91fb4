"""The central planning of exclusive slots: slots that never overlap for any agent as sender or
receiver across all meshes (pScheduler's exclusive class without its negotiation and
non-starters), planned ahead to a horizon and again when a mesh changes."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from meshes import slots
from meshes.choices import SlotState
from meshes.models import Mesh, MeshTest, PlannerState, Slot
from meshes.services.paths import Path, is_node, mesh_paths, path_min_rtt_ms, slot_key
from meshes.specs import (
    PSCHEDULER_RUN_MARGIN_S,
    THROUGHPUT_MARGIN_S,
    normalize_spec,
    reserved_seconds,
)


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def _moment(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, tz=UTC)


@dataclass(frozen=True)
class SlotPlanning:
    placed: int
    unschedulable: int
    planned_from: datetime
    planned_until: datetime


def plan_exclusive_slots(now: datetime | None = None, seed: int | None = None) -> SlotPlanning:
    """Extends the exclusive plan to now + the horizon, keeping every slot already planned.

    Runs in one transaction under an advisory lock, so the beat task and a mesh edit never
    plan the same period twice or place two slots on one agent's time.
    """
    now = (now or timezone.now()).replace(microsecond=0)
    # Every agent must have fetched a new slot before it starts: one started late would
    # overrun its reservation.
    start = now + timedelta(seconds=settings.SLOT_PLANNING_LEAD_S)
    until = now + timedelta(seconds=settings.SLOT_HORIZON_S)
    rng = random.Random(seed)  # noqa: S311 - start jitter, not secrets
    with transaction.atomic():
        lock_planner()
        paths = [path for path in mesh_paths(exclusive=True) if path.destination is not None]
        rtts = path_min_rtt_ms(
            ((p.source.pk, p.destination.pk, p.family) for p in paths if p.destination), now - timedelta(days=1)
        )
        requests, by_key = [], {}
        for path in paths:
            assert path.destination is not None
            request, spec = exclusive_request(
                path.slot_key,
                path.source.pk,
                path.destination.pk,
                path.test,
                rtts.get((path.source.pk, path.destination.pk, path.family)),
                with_node=is_node(path.source) or is_node(path.destination),
            )
            requests.append(request)
            by_key[path.slot_key] = (path, spec)
        planned = placements_of(Slot.objects.filter(end_at__gt=now).exclude(state=SlotState.UNSCHEDULABLE))
        result = slots.plan_slots(requests, _epoch(start), _epoch(until), rng, planned=planned)
        new_rows = [_slot_row(by_key[p.key], p.period_start, p.start, p.end) for p in result.placements]
        failed_rows = [
            _slot_row(by_key[u.key], u.period_start, u.period_start, u.period_start) for u in result.unplaceable
        ]
        names = {str(path.source.pk): path.source.name for path in paths}
        names.update({str(path.destination.pk): path.destination.name for path in paths if path.destination})
        for row, unplaceable in zip(failed_rows, result.unplaceable, strict=True):
            row.state, row.reason = SlotState.UNSCHEDULABLE, with_names(unplaceable.reason, names)
        # A period that once found no time and now does: the placement replaces the record.
        for row in new_rows:
            Slot.objects.filter(
                mesh_test=row.mesh_test,
                source=row.source,
                destination=row.destination,
                family=row.family,
                period_start=row.period_start,
                state=SlotState.UNSCHEDULABLE,
            ).delete()
        Slot.objects.bulk_create(new_rows + failed_rows, batch_size=2000, ignore_conflicts=True)
        PlannerState.objects.update_or_create(pk=1, defaults={"planned_until": until})
    return SlotPlanning(len(new_rows), len(failed_rows), now, until)


def exclusive_request(
    key: str, source_id: Any, destination_id: Any, test: MeshTest, rtt_ms: float | None, with_node: bool = False
) -> tuple[slots.SlotRequest, dict[str, Any]]:
    """One exclusive test on one directed path as the planner asks for it, and the spec its runs
    get (with the path's RTT, from which the agent derives the slow start to omit). The test
    need not be saved: a mesh's preview plans tests that do not exist yet."""
    spec = normalize_spec(test.test_type, test.spec)
    spec["path_rtt_ms"] = rtt_ms or 0
    if reserved_seconds(spec, rtt_ms) > test.interval_s:
        # A long path's derived slow-start omit would outgrow the interval: omit what fits.
        spec["omit_s"] = max(0, test.interval_s - spec["duration_s"] - THROUGHPUT_MARGIN_S)
    request = slots.SlotRequest(
        key=key,
        source=str(source_id),
        destination=str(destination_id),
        interval_s=test.interval_s,
        # pScheduler's extra run time, within the interval (validation keeps the test itself shorter).
        duration_s=min(test.interval_s, reserved_seconds(spec, rtt_ms) + (PSCHEDULER_RUN_MARGIN_S if with_node else 0)),
        slip_s=min(test.slip_s, test.interval_s),
    )
    return request, spec


def placements_of(rows: Iterable[Slot]) -> list[slots.Placement]:
    """Slots as the planner keeps them: busy time of both agents, and periods already planned."""
    return [
        slots.Placement(
            key=slot_key(slot.mesh_test_id, slot.source_id, slot.destination_id, slot.family),
            source=str(slot.source_id),
            destination=str(slot.destination_id),
            period_start=_epoch(slot.period_start),
            start=_epoch(slot.start_at),
            end=_epoch(slot.end_at),
        )
        for slot in rows
    ]


def with_names(reason: str, names: dict[str, str]) -> str:
    """The planner speaks of agent ids; an operator reads names."""
    for agent_id, name in names.items():
        reason = reason.replace(agent_id, name)
    return reason


def _slot_row(path_and_spec: tuple[Path, dict[str, Any]], period_s: float, start_s: float, end_s: float) -> Slot:
    path, spec = path_and_spec
    assert path.destination is not None
    return Slot(
        mesh_test=path.test,
        source=path.source,
        destination=path.destination,
        family=path.family,
        test_type=path.test.test_type,
        period_start=_moment(period_s),
        start_at=_moment(start_s),
        end_at=_moment(end_s),
        spec=spec,
    )


def lock_planner() -> None:
    """Serialises everything that plans or drops slots, until the transaction ends (an
    edit that drops slots and the beat task extending the plan must not interleave)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended('meshes:plan-slots', 0))")


def drop_future_slots(mesh: Mesh, now: datetime | None = None) -> None:
    """A changed or deleted mesh's slots yet to start go, to be planned again; slots started
    or reported stay as history. A run of the current period (its period began, its start
    has not come) stays when its path and test still exist: planning starts at now, so that
    period would otherwise have no run at all."""
    now = now or timezone.now()
    lock_planner()
    future = Slot.objects.filter(mesh_test__mesh=mesh, state=SlotState.PLANNED, start_at__gt=now)
    future.filter(period_start__gte=now).delete()
    keep = {path.slot_key for path in mesh_paths(exclusive=True) if path.test.mesh_id == mesh.pk and path.destination}
    for slot in future.filter(period_start__lt=now):
        if slot_key(slot.mesh_test_id, slot.source_id, slot.destination_id, slot.family) not in keep:
            slot.delete()
    Slot.objects.filter(mesh_test__mesh=mesh, state=SlotState.UNSCHEDULABLE, period_start__gt=now).delete()


def replan_mesh(mesh: Mesh, now: datetime | None = None) -> SlotPlanning:
    """After a mesh changes: its future slots go, and the horizon is planned again around the
    other meshes' slots."""
    drop_future_slots(mesh, now)
    return plan_exclusive_slots(now)
