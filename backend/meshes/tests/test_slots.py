"""The exclusive slot planner: no agent in two throughput runs at once, every run accounted for.

Pure tests (no database): meshes.slots takes and returns plain values.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence

import pytest

from meshes.slots import (
    Placement,
    Reservation,
    SlotPlan,
    SlotRequest,
    count_overlaps,
    default_anchor_s,
    exclusive_demand,
    period_starts,
    plan_slots,
    request_anchor_s,
    utilization,
)

HOUR = 3600.0
T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def request(
    source: str,
    destination: str,
    *,
    interval_s: float = 600,
    duration_s: float = 30,
    slip_s: float = 600,
    anchor_s: float | None = T0,
    key: str | None = None,
) -> SlotRequest:
    return SlotRequest(
        key=key or f"throughput:{source}>{destination}",
        source=source,
        destination=destination,
        interval_s=interval_s,
        duration_s=duration_s,
        slip_s=slip_s,
        anchor_s=anchor_s,
    )


def random_mesh(rng: random.Random) -> list[SlotRequest]:
    """Some directed paths among a few agents, mixed schedules, each agent asked for at most ~60%."""
    agents = [f"agent-{i}" for i in range(rng.randint(3, 12))]
    paths = [(a, b) for a in agents for b in agents if a != b]
    requests = []
    demand: dict[str, float] = defaultdict(float)
    for source, destination in rng.sample(paths, k=rng.randint(1, len(paths))):
        interval = rng.choice([300, 600, 900, 1800, 3600])
        duration = rng.randint(5, 60)
        share = duration / interval
        if demand[source] + share > 0.6 or demand[destination] + share > 0.6:
            continue
        demand[source] += share
        demand[destination] += share
        slip = rng.choice([0, rng.randint(0, interval), interval])
        anchor = rng.choice([None, T0, T0 + rng.randint(0, 3600)])
        requests.append(
            request(source, destination, interval_s=interval, duration_s=duration, slip_s=slip, anchor_s=anchor)
        )
    return requests


def assert_valid(
    plan: SlotPlan,
    requests: Sequence[SlotRequest],
    from_s: float,
    to_s: float,
    reservations: Sequence[Reservation] = (),
    planned: Sequence[Placement] = (),
) -> None:
    """Checks a plan from its placements alone, not from the planner's bookkeeping."""
    by_key = {r.key: r for r in requests}
    assert count_overlaps([*planned, *plan.placements]) == 0
    for placement in plan.placements:
        r = by_key[placement.key]
        assert (placement.source, placement.destination) == (r.source, r.destination)
        assert placement.period_start <= placement.start <= placement.period_start + r.slip_s
        assert placement.end - placement.start == r.duration_s
        # whole-second offsets: times survive storage without sub-second precision
        assert (placement.start - placement.period_start).is_integer()
        for reservation in reservations:
            if reservation.agent in (placement.source, placement.destination):
                assert placement.end <= reservation.start or reservation.end <= placement.start
    # Every run of the horizon is planned now, was planned before, or is reported: none dropped, none twice.
    expected = {(r.key, start) for r in requests for start in period_starts(r, from_s, to_s)}
    already = {(p.key, p.period_start) for p in planned} & expected
    placed = [(p.key, p.period_start) for p in plan.placements]
    refused = [(u.key, u.period_start) for u in plan.unplaceable]
    assert len(placed) == len(set(placed)) and len(refused) == len(set(refused))
    assert set(placed) | set(refused) | already == expected
    assert not set(placed) & set(refused) and not set(placed) & already
    assert all(u.reason for u in plan.unplaceable)
    assert [p.start for p in plan.placements] == sorted(p.start for p in plan.placements)


@pytest.mark.parametrize("seed", range(12))
def test_random_meshes_never_overlap(seed: int) -> None:
    rng = random.Random(seed)
    requests = random_mesh(rng)
    agents = sorted({a for r in requests for a in (r.source, r.destination)})
    reservations = [
        Reservation(agent, start, start + rng.randint(1, 120))
        for agent in rng.sample(agents, k=min(3, len(agents)))
        for start in [T0 + rng.randint(0, 2 * 3600)]
    ]
    plan = plan_slots(requests, T0, T0 + 2 * HOUR, random.Random(seed), reservations=reservations)
    assert_valid(plan, requests, T0, T0 + 2 * HOUR, reservations)
    assert plan.placements


def test_full_mesh_at_half_load_places_every_run() -> None:
    agents = [f"agent-{i:02d}" for i in range(20)]
    # 38 runs of 8 s per agent every 600 s: about 51% of each agent's time.
    requests = [request(a, b, duration_s=8) for a in agents for b in agents if a != b]
    assert max(exclusive_demand(requests).values()) == pytest.approx(38 * 8 / 600)
    plan = plan_slots(requests, T0, T0 + HOUR, random.Random(7))
    assert_valid(plan, requests, T0, T0 + HOUR)
    assert plan.unplaceable == [] and len(plan.placements) == len(requests) * 6


def test_same_seed_same_plan_other_seed_other_starts() -> None:
    requests = [request("a", "b"), request("b", "c"), request("c", "a")]
    first = plan_slots(requests, T0, T0 + HOUR, random.Random(3))
    again = plan_slots(requests, T0, T0 + HOUR, random.Random(3))
    other = plan_slots(requests, T0, T0 + HOUR, random.Random(4))
    assert first == again
    assert [p.start for p in first.placements] != [p.start for p in other.placements]


def test_no_slip_starts_on_the_period() -> None:
    plan = plan_slots([request("a", "b", slip_s=0)], T0, T0 + HOUR, random.Random(1))
    assert [p.start for p in plan.placements] == [T0 + k * 600 for k in range(6)]


def test_starts_spread_over_the_slip_window() -> None:
    plan = plan_slots([request("a", "b", interval_s=60, duration_s=1, slip_s=60)], T0, T0 + 24 * HOUR, random.Random(1))
    offsets = [p.start - p.period_start for p in plan.placements]
    assert min(offsets) < 6 and max(offsets) > 54  # 1440 draws over 0..60 s
    assert all(0 <= offset <= 60 for offset in offsets)


def test_reservation_leaves_one_slot_and_the_run_takes_it() -> None:
    reservations = [Reservation("a", T0, T0 + 100), Reservation("b", T0 + 130, T0 + 400)]
    requests = [request("a", "b", interval_s=400, duration_s=30, slip_s=370)]
    plan = plan_slots(requests, T0, T0 + 1, random.Random(5), reservations=reservations)
    assert [(p.start, p.end) for p in plan.placements] == [(T0 + 100, T0 + 130)]


def test_rigid_requests_go_first() -> None:
    # Listed first, the flexible test could take the only instant the rigid one may use.
    for seed in range(20):
        requests = [request("a", "c", interval_s=100, slip_s=100), request("a", "b", interval_s=100, slip_s=0)]
        plan = plan_slots(requests, T0, T0 + 1000, random.Random(seed))
        assert plan.unplaceable == []
        assert count_overlaps(plan.placements) == 0


def test_incremental_extension_keeps_placements_and_adds_no_duplicates() -> None:
    rng = random.Random(11)
    requests = random_mesh(random.Random(11))
    first = plan_slots(requests, T0, T0 + HOUR, rng)
    assert_valid(first, requests, T0, T0 + HOUR)

    # Overlapping the first horizon: only its new periods are planned, around the kept runs.
    second = plan_slots(requests, T0 + HOUR / 2, T0 + 3 * HOUR, rng, planned=first.placements)
    assert_valid(second, requests, T0 + HOUR / 2, T0 + 3 * HOUR, planned=first.placements)
    assert all(p.period_start >= T0 + HOUR for p in second.placements)
    everything = [*first.placements, *second.placements]
    keys = [(p.key, p.period_start) for p in everything]
    assert len(keys) == len(set(keys))
    assert count_overlaps(everything) == 0

    # Planning what is planned already adds nothing; runs that found no slot are tried (and reported) again.
    again = plan_slots(requests, T0, T0 + 3 * HOUR, rng, planned=everything)
    assert again.placements == []
    refused = {(u.key, u.period_start) for u in [*first.unplaceable, *second.unplaceable]}
    assert {(u.key, u.period_start) for u in again.unplaceable} == refused


def test_incremental_extension_matches_periods_of_default_anchors() -> None:
    requests = [request("a", "b", anchor_s=None), request("b", "a", anchor_s=None)]
    first = plan_slots(requests, T0, T0 + HOUR, random.Random(1))
    again = plan_slots(requests, T0, T0 + HOUR, random.Random(2), planned=first.placements)
    assert len(first.placements) == 12 and again.placements == []


def test_planned_runs_of_other_requests_still_block_their_agents() -> None:
    # A run of a test no longer requested (or from another planner) keeps its agents busy.
    foreign = Placement("gone", "a", "x", T0, T0, T0 + 570)
    plan = plan_slots([request("a", "b", slip_s=600)], T0, T0 + 1, random.Random(1), planned=[foreign])
    assert [p.start for p in plan.placements] == [T0 + 570]


def test_exceeded_capacity_is_reported_with_the_sender() -> None:
    # Two 40 s tests from a within 50 s: the second never fits.
    requests = [
        request("a", "b", interval_s=60, duration_s=40, slip_s=10),
        request("a", "c", interval_s=60, duration_s=40, slip_s=10),
    ]
    plan = plan_slots(requests, T0, T0 + 600, random.Random(1))
    assert_valid(plan, requests, T0, T0 + 600)
    assert len(plan.placements) == 10 and len(plan.unplaceable) == 10
    assert {u.reason for u in plan.unplaceable} == {
        "sender a has no 40 s of free exclusive time within the slip window"
    }


def test_exceeded_capacity_is_reported_with_the_receiver() -> None:
    requests = [
        request("b", "a", interval_s=60, duration_s=40, slip_s=10),
        request("c", "a", interval_s=60, duration_s=40, slip_s=10),
    ]
    plan = plan_slots(requests, T0, T0 + 60, random.Random(1))
    assert [u.reason for u in plan.unplaceable] == [
        "receiver a has no 40 s of free exclusive time within the slip window"
    ]


def test_agents_free_apart_but_never_together() -> None:
    reservations = [Reservation("b", T0, T0 + 30), Reservation("c", T0 + 30, T0 + 60)]
    plan = plan_slots(
        [request("b", "c", interval_s=100, duration_s=30, slip_s=30)],
        T0,
        T0 + 1,
        random.Random(1),
        reservations=reservations,
    )
    assert plan.placements == []
    assert [(u.key, u.period_start, u.reason) for u in plan.unplaceable] == [
        ("throughput:b>c", T0, "no 30 s of exclusive time free for both b and c within the slip window")
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"duration_s": -5}, "duration_s must be positive"),
        ({"duration_s": 0}, "duration_s must be positive"),
        ({"slip_s": 601}, r"slip_s must be between 0 and interval_s \(600\)"),
        ({"slip_s": -1}, "slip_s must be between 0"),
        ({"duration_s": 700}, r"duration_s \(700\) exceeds interval_s \(600\)"),
        ({"interval_s": 0, "duration_s": 0}, "interval_s must be positive"),
        ({"source": ""}, "agent ids must not be empty"),
        ({"destination": ""}, "agent ids must not be empty"),
        ({"destination": "a"}, "source and destination are both 'a'"),
        ({"key": ""}, "non-empty key"),
        ({"interval_s": math.nan}, "interval_s must be a finite number"),
        ({"anchor_s": math.inf}, "anchor_s must be a finite number"),
    ],
)
def test_bad_requests_are_refused(fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {
        "key": "t",
        "source": "a",
        "destination": "b",
        "interval_s": 600,
        "duration_s": 30,
        "slip_s": 60,
        "anchor_s": None,
    }
    values.update(fields)
    with pytest.raises(ValueError, match=message):
        SlotRequest(**values)  # type: ignore[arg-type]


def test_bad_horizon_and_inputs_are_refused() -> None:
    requests = [request("a", "b")]
    with pytest.raises(ValueError, match=r"horizon ends .* before it starts"):
        plan_slots(requests, T0, T0 - 1, random.Random(1))
    with pytest.raises(ValueError, match="share the key 'dup'"):
        plan_slots([request("a", "b", key="dup"), request("b", "a", key="dup")], T0, T0 + 1, random.Random(1))
    with pytest.raises(ValueError, match=r"end \(.*\) must be after start"):
        Reservation("a", T0, T0)
    with pytest.raises(ValueError, match="non-empty agent id"):
        Reservation("", T0, T0 + 1)
    assert plan_slots(requests, T0, T0, random.Random(1)) == SlotPlan([], [])


def test_period_starts_are_anchored_and_half_open() -> None:
    r = request("a", "b", interval_s=600, anchor_s=T0 + 100)
    assert period_starts(r, T0 + 100, T0 + 1900) == [T0 + 100, T0 + 700, T0 + 1300]
    assert period_starts(r, T0 + 101, T0 + 1300) == [T0 + 700]
    assert period_starts(r, T0 - 600, T0) == [T0 - 500]


def test_default_anchor_is_stable_and_staggers_tests() -> None:
    anchors = {default_anchor_s(f"throughput:{i}", 21600) for i in range(50)}
    assert all(0 <= anchor < 21600 and anchor.is_integer() for anchor in anchors)
    assert len(anchors) > 40
    assert default_anchor_s("throughput:7", 21600) == default_anchor_s("throughput:7", 21600)
    assert request_anchor_s(request("a", "b", anchor_s=None, key="k")) == default_anchor_s("k", 600)


def test_count_overlaps_counts_pairs_sharing_an_agent_once() -> None:
    def run(key: str, source: str, destination: str, start: float, end: float) -> Placement:
        return Placement(key, source, destination, start, start, end)

    assert count_overlaps([]) == 0
    # touching is not overlapping; different agents may overlap
    assert count_overlaps([run("1", "a", "b", 0, 10), run("2", "b", "a", 10, 20), run("3", "c", "d", 0, 20)]) == 0
    # three runs of one agent pairwise overlapping, as sender and receiver
    assert count_overlaps([run("1", "a", "b", 0, 10), run("2", "c", "a", 5, 15), run("3", "a", "d", 8, 9)]) == 3
    # the same two agents, both directions: one pair, not one per agent
    assert count_overlaps([run("1", "a", "b", 0, 10), run("2", "b", "a", 9, 19)]) == 1


def test_utilization_is_the_busy_share_of_the_window() -> None:
    placements = [
        Placement("1", "a", "b", 0, 0, 30),
        Placement("2", "a", "c", 0, 90, 120),  # half outside the window
        Placement("3", "c", "a", 0, 20, 40),  # overlaps run 1 on a: counted once
    ]
    shares = utilization(placements, 0, 100, reservations=[Reservation("d", 50, 75)])
    assert shares == pytest.approx({"a": 0.5, "b": 0.3, "c": 0.3, "d": 0.25})
    with pytest.raises(ValueError, match="utilization window"):
        utilization(placements, 10, 10)
