"""What a mesh change would do to the exclusive plan, worked out before anything is saved.

A mesh as it would be saved (a draft) yields exclusive requests; with them in place of the
mesh's current ones, each agent's exclusive demand (meshes.exclusive_demand over every
enabled mesh) and a trial plan of the horizon around the slots already planned show whether
the change fits. A change that leaves an agent's demand over its time is refused before
anything is written (`MeshPreview.refusals`); runs the trial plan finds no slot for are
conflicts, shown but not refused (they depend on where random anchors fall).

`plan_effect` is pure; `preview_mesh` gathers its inputs from the database, writing nothing.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import attrgetter
from typing import Any

from django.conf import settings
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import EXCLUSIVE_TEST_TYPES
from meshes.choices import MemberSide, SlotState
from meshes.models import Mesh, MeshTest, Slot
from meshes.services.paths import active_agents, member_pairs, mesh_paths, path_min_rtt_ms, slot_key
from meshes.services.slot_planning import exclusive_request, placements_of, with_names
from meshes.slots import Placement, SlotRequest, Unplaceable, exclusive_demand, period_starts, plan_slots
from meshes.specs import DEFAULT_TESTS

# Demands are sums of fractions: equal ones must compare equal.
DEMAND_EPSILON = 1e-9
# A refusal names this many paths at most, then counts the rest.
MAX_REFUSAL_MESSAGES = 10
PREVIEW_SEED = 0  # the same draft gets the same answer
TEST_FIELDS = ("test_type", "spec", "interval_s", "slip_s", "enabled")


@dataclass(frozen=True)
class DraftMesh:
    """A mesh as it would be saved: its fields, its (agent, side) members and its tests (unsaved
    MeshTest objects, carrying the primary key of the test they replace, if any)."""

    name: str
    kind: str
    all_agents: bool
    unidirectional: bool
    targets: list[str]
    enabled: bool
    members: list[tuple[Agent, str]]
    tests: list[MeshTest]


def draft_mesh(validated: dict[str, Any], instance: Mesh | None) -> DraftMesh:
    """The mesh MeshSerializer would write from its validated data, over `instance` if it
    updates one (fields left out keep their values, as its update does)."""

    base = instance if instance is not None else Mesh()  # a new mesh starts from the model's defaults

    def value(field: str) -> Any:
        return validated[field] if field in validated else getattr(base, field)

    if "members" in validated:
        members = [(m["agent"], m.get("side", MemberSide.A)) for m in validated["members"]]
    elif instance is not None:
        members = [(m.agent, m.side) for m in instance.members.select_related("agent")]
    else:
        members = []
    current = {test.name: test for test in instance.tests.all()} if instance is not None else {}
    if "tests" in validated:
        tests = []
        for given in validated["tests"]:
            old = current.get(given["name"])
            fields = {f: getattr(old, f) for f in TEST_FIELDS} if old else {}
            fields.update(given)
            tests.append(MeshTest(pk=old.pk if old else None, **fields))
    elif instance is not None:
        tests = list(current.values())
    else:
        tests = [
            MeshTest(name=d.name, test_type=d.test_type, spec=dict(d.spec), interval_s=d.interval_s, slip_s=d.slip_s)
            for d in DEFAULT_TESTS
        ]
    return DraftMesh(
        name=value("name"),
        kind=value("kind"),
        all_agents=value("all_agents"),
        unidirectional=value("unidirectional"),
        targets=list(value("targets")),
        enabled=value("enabled"),
        members=members,
        tests=tests,
    )


@dataclass(frozen=True)
class PlanEffect:
    """A change's effect on the exclusive plan, by agent id and request key."""

    demand_before: dict[str, float]
    demand: dict[str, float]
    slots: dict[str, int]  # runs each agent takes part in within [now, horizon end)
    exclusive_s: dict[str, float]  # their seconds within [now, horizon end)
    unplaceable: list[Unplaceable]  # runs the change leaves without a slot
    periods: dict[str, int]  # each request's periods in the planned horizon


def plan_effect(
    before: list[SlotRequest],
    after: list[SlotRequest],
    changed: set[str],
    planned_before: list[Placement],
    planned_after: list[Placement],
    now_s: float,
    from_s: float,
    to_s: float,
    seed: int = PREVIEW_SEED,
) -> PlanEffect:
    """Plans [from_s, to_s) with the requests `after` the change around `planned_after` (what
    stays planned), as the save would. Runs of the `changed` requests that find no slot are
    the change's doing; another request's run only when it did find one without the change
    (planning `before` around `planned_before`)."""
    # plan_slots shuffles its input: the same requests in any order get the same plan.
    before, after = sorted(before, key=attrgetter("key")), sorted(after, key=attrgetter("key"))
    trial = plan_slots(after, from_s, to_s, random.Random(seed), planned=planned_after)  # noqa: S311
    unplaceable = [run for run in trial.unplaceable if run.key in changed]
    others = [run for run in trial.unplaceable if run.key not in changed]
    if others:
        baseline = plan_slots(before, from_s, to_s, random.Random(seed), planned=planned_before)  # noqa: S311
        failing_anyway = {(run.key, run.period_start) for run in baseline.unplaceable}
        unplaceable += [run for run in others if (run.key, run.period_start) not in failing_anyway]
    counts: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    for run in [*planned_after, *trial.placements]:
        overlap = min(run.end, to_s) - max(run.start, now_s)
        if overlap > 0:
            for agent in (run.source, run.destination):
                counts[agent] += 1
                seconds[agent] += overlap
    return PlanEffect(
        demand_before=exclusive_demand(before),
        demand=exclusive_demand(after),
        slots=dict(counts),
        exclusive_s=dict(seconds),
        unplaceable=sorted(unplaceable, key=lambda run: (run.key, run.period_start)),
        periods={request.key: len(period_starts(request, from_s, to_s)) for request in after},
    )


@dataclass(frozen=True)
class AgentEffect:
    agent: str
    slots: int
    exclusive_s: float
    demand_before: float
    demand: float
    overbooked: bool


@dataclass(frozen=True)
class Conflict:
    test: str  # "<mesh>/<test>"
    source: str
    destination: str
    reason: str


@dataclass(frozen=True)
class MeshPreview:
    horizon_s: float
    agents: list[AgentEffect]
    conflicts: list[Conflict]
    refusals: list[str]  # why saving the draft would be refused; none: it would be saved

    @property
    def ok(self) -> bool:
        return not self.refusals


def percent(share: float) -> str:
    """A share as a percentage, rounded up to 0.1 %, so 100.04 % never reads as 100 %."""
    return f"{math.ceil(round(share * 1000, 6)) / 10:g}%"


def span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


@dataclass(frozen=True)
class _Labelled:
    request: SlotRequest
    test: str  # "<mesh>/<test>"


@dataclass(frozen=True)
class _Change:
    """A draft's inputs to plan_effect, gathered from the database."""

    now: datetime
    start: datetime
    until: datetime
    names: dict[str, str]  # active agents by id
    included: set[str]  # agent ids the draft includes
    before: list[_Labelled]
    after: list[_Labelled]
    changed_keys: set[str]
    planned_before: list[Placement]
    planned_after: list[Placement]
    # The draft asks for exactly the exclusive runs the mesh it replaces asks for now (an edit
    # of its description or of a ping test, say): the plan is no concern of the change.
    unaffected: bool


def _gather(draft: DraftMesh, replaces: Mesh | None, now: datetime | None) -> _Change:
    now = (now or timezone.now()).replace(microsecond=0)
    agents = {agent.pk: agent for agent in active_agents()}
    current = [
        (path.test, path.source, path.destination, path.family, path.slot_key)
        for path in mesh_paths(exclusive=True)
        if path.destination is not None
    ]
    if draft.all_agents:
        members = [(agent, str(MemberSide.A)) for agent in agents.values()]
    else:
        members = [(agent, side) for agent, side in draft.members if agent.pk in agents]
    draft_paths: list[tuple[MeshTest, Agent, Agent, int]] = []
    if draft.enabled:
        pairs = [
            (src, dst, family)
            for src, dst, _, family in member_pairs(draft.kind, draft.unidirectional, draft.targets, members)
            if dst
        ]
        for test in draft.tests:
            if test.enabled and test.test_type in EXCLUSIVE_TEST_TYPES:
                draft_paths.extend((test, src, dst, family) for src, dst, family in pairs)
    rtts = path_min_rtt_ms(
        [(src.pk, dst.pk, family) for _, src, dst, family, _ in current]
        + [(src.pk, dst.pk, family) for _, src, dst, family in draft_paths],
        now - timedelta(days=1),
    )

    def labelled(test: MeshTest, src: Agent, dst: Agent, family: int, key: str, mesh_name: str) -> _Labelled:
        with_node = AgentKind.PERFSONAR in (src.kind, dst.kind)
        request, _ = exclusive_request(key, src.pk, dst.pk, test, rtts.get((src.pk, dst.pk, family)), with_node)
        return _Labelled(request, f"{mesh_name}/{test.name}")

    before = [labelled(test, src, dst, family, key, test.mesh.name) for test, src, dst, family, key in current]
    replaced = [replaces is not None and test.mesh_id == replaces.pk for test, *_ in current]
    changed = [
        labelled(
            test,
            src,
            dst,
            family,
            slot_key(test.pk, src.pk, dst.pk, family) if test.pk else f"draft:{test.name}:{src.pk}:{dst.pk}:{family}",
            draft.name,
        )
        for test, src, dst, family in draft_paths
    ]
    changed_keys = {entry.request.key for entry in changed}
    unaffected = {e.request for e in changed} == {e.request for e, mine in zip(before, replaced, strict=True) if mine}

    existing = list(
        Slot.objects.filter(end_at__gt=now)
        .exclude(state=SlotState.UNSCHEDULABLE)
        .only("mesh_test_id", "source_id", "destination_id", "family", "period_start", "start_at", "end_at")
    )
    dropped = set()
    if replaces is not None:
        # As drop_future_slots will: runs yet to start go, but the current period's run of a
        # path that remains stays.
        for pk, test_id, source_id, destination_id, family, period_start in Slot.objects.filter(
            mesh_test__mesh=replaces, state=SlotState.PLANNED, start_at__gt=now
        ).values_list("pk", "mesh_test_id", "source_id", "destination_id", "family", "period_start"):
            if period_start >= now or slot_key(test_id, source_id, destination_id, family) not in changed_keys:
                dropped.add(pk)
    return _Change(
        now=now,
        start=now + timedelta(seconds=settings.SLOT_PLANNING_LEAD_S),
        until=now + timedelta(seconds=settings.SLOT_HORIZON_S),
        names={str(pk): agent.name for pk, agent in agents.items()},
        included={str(agent.pk) for agent, _ in members},
        before=before,
        after=[entry for entry, mine in zip(before, replaced, strict=True) if not mine] + changed,
        changed_keys=changed_keys,
        planned_before=placements_of(existing),
        planned_after=placements_of(slot for slot in existing if slot.pk not in dropped),
        unaffected=unaffected,
    )


def preview_mesh(draft: DraftMesh, replaces: Mesh | None, now: datetime | None = None) -> MeshPreview:
    """What saving `draft` (in place of `replaces`, if it updates a mesh) does to every agent's
    exclusive time, over the planning horizon plan_exclusive_slots uses. Reads, never writes."""
    return _preview(_gather(draft, replaces, now))


def change_refusals(draft: DraftMesh, replaces: Mesh | None) -> list[str]:
    """Why saving `draft` must be refused (it overbooks an agent); none when it fits. A mesh without enabled exclusive
    tests only frees exclusive time and needs no trial plan."""
    if not draft.enabled or not any(test.enabled and test.test_type in EXCLUSIVE_TEST_TYPES for test in draft.tests):
        return []
    change = _gather(draft, replaces, None)
    return [] if change.unaffected else _preview(change).refusals


def _preview(change: _Change) -> MeshPreview:
    names = change.names
    effect = plan_effect(
        [entry.request for entry in change.before],
        [entry.request for entry in change.after],
        change.changed_keys,
        change.planned_before,
        change.planned_after,
        change.now.timestamp(),
        change.start.timestamp(),
        change.until.timestamp(),
    )
    listed = change.included | {
        agent
        for agent in set(effect.demand) | set(effect.demand_before)
        if abs(effect.demand.get(agent, 0.0) - effect.demand_before.get(agent, 0.0)) > DEMAND_EPSILON
    }
    rows = sorted(
        (
            AgentEffect(
                agent=names[agent],
                slots=effect.slots.get(agent, 0),
                exclusive_s=round(effect.exclusive_s.get(agent, 0.0), 1),
                demand_before=round(effect.demand_before.get(agent, 0.0), 4),
                demand=round(effect.demand.get(agent, 0.0), 4),
                overbooked=effect.demand.get(agent, 0.0) > 1.0 + DEMAND_EPSILON,
            )
            for agent in listed
            if agent in names
        ),
        key=lambda row: row.agent,
    )

    tests = {entry.request.key: entry.test for entry in change.after}
    by_key: dict[str, list[Unplaceable]] = defaultdict(list)
    for run in effect.unplaceable:
        by_key[run.key].append(run)
    horizon_s = (change.until - change.now).total_seconds()
    conflicts = []
    for key, runs in by_key.items():
        reason = with_names(runs[0].reason, names)
        failed = f"{len(runs)} of {effect.periods[key]} runs in the next {span(horizon_s)} find no slot"
        conflicts.append(
            Conflict(
                test=tests[key],
                source=names.get(runs[0].source, runs[0].source),
                destination=names.get(runs[0].destination, runs[0].destination),
                reason=f"{failed}: {reason}",
            )
        )
    conflicts.sort(key=lambda c: (c.test, c.source, c.destination))

    refusals = [
        f"{names[agent]}: its exclusive (throughput) tests would take {percent(share)} of its time, "
        f"more than it has (now {percent(effect.demand_before.get(agent, 0.0))}): "
        "lengthen intervals, shorten tests or leave it out"
        for agent, share in sorted(effect.demand.items(), key=lambda item: names.get(item[0], item[0]))
        if agent in names and share > 1.0 + DEMAND_EPSILON
    ]
    # Runs without a slot are conflicts to show, not reasons to refuse: below full demand they
    # depend on where the planner's random anchors fall, so the same change could pass or fail
    # by the minute it is saved at. The slots page keeps each one with its reason.
    if change.unaffected:
        refusals = []
    if len(refusals) > MAX_REFUSAL_MESSAGES:
        rest = len(refusals) - MAX_REFUSAL_MESSAGES + 1
        refusals = [*refusals[: MAX_REFUSAL_MESSAGES - 1], f"and {rest} more like these"]
    return MeshPreview(horizon_s, rows, conflicts, refusals)
