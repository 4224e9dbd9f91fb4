"""Each agent's exclusive time in the planned horizon, beside the meshes' steady demand."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from inventory.models import Agent
from meshes.choices import SlotState
from meshes.models import PlannerState, Slot
from meshes.services.paths import active_agents, mesh_paths
from meshes.specs import (
    normalize_spec,
    reserved_seconds,
)


@dataclass(frozen=True)
class AgentUtilization:
    agent: Agent
    planned_s: float  # exclusive seconds reserved in the planned horizon
    horizon_s: float
    demand: float  # steady-state share of time the meshes ask for (duration / interval summed)
    slots_planned: int


def exclusive_utilization(now: datetime | None = None) -> tuple[datetime, datetime, list[AgentUtilization]]:
    """Each agent's exclusive time in the planned horizon, and the meshes' steady demand."""
    now = now or timezone.now()
    state = PlannerState.objects.first()
    until = state.planned_until if state and state.planned_until > now else now
    horizon_s = (until - now).total_seconds()
    busy: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    future = Slot.objects.filter(end_at__gt=now, start_at__lt=until).exclude(state=SlotState.UNSCHEDULABLE)
    for slot in future.only("source_id", "destination_id", "start_at", "end_at"):
        seconds = (min(slot.end_at, until) - max(slot.start_at, now)).total_seconds()
        for agent_id in (slot.source_id, slot.destination_id):
            busy[agent_id] = busy.get(agent_id, 0.0) + seconds
            counts[agent_id] = counts.get(agent_id, 0) + 1
    demand: dict[str, float] = {}
    for path in mesh_paths(exclusive=True):
        if path.destination is None:
            continue
        spec = normalize_spec(path.test.test_type, path.test.spec)
        share = min(1.0, reserved_seconds(spec, None) / path.test.interval_s)
        for end in (path.source, path.destination):
            demand[str(end.pk)] = demand.get(str(end.pk), 0.0) + share
    rows = [
        AgentUtilization(
            agent, busy.get(agent.pk, 0.0), horizon_s, demand.get(str(agent.pk), 0.0), counts.get(agent.pk, 0)
        )
        for agent in active_agents()
    ]
    return now, until, rows
