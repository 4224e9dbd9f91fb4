"""Exclusive time slots for throughput runs, planned centrally and ahead of time.

Throughput tests (iperf3) are exclusive in pScheduler's sense: an agent never takes part in two
of them at overlapping times, neither as sender nor as receiver (the receiver runs the iperf3
server), whatever mesh the tests come from. pScheduler negotiates every run between the
participants and ends up with thousands of non-starters on busy hosts; Fathom plans the runs of
a horizon in one place instead and hands the agents their slots.

A request is one periodic exclusive test on one directed path. Its periods start at
`anchor_s + k * interval_s`; the run of a period may start anywhere in
`[period_start, period_start + slip_s]` (pScheduler's slip with sliprand) and reserves both
agents for `duration_s`. `plan_slots` places every run whose period starts within a horizon
`[from_s, to_s)`, keeping what was planned before, and reports every run it cannot place with
the reason: a run is never dropped silently.

Pure: plain values in, plain values out; no Django, no database. `meshes.bench_scheduler`
measures it on full meshes.
"""

from __future__ import annotations

import heapq
import math
import random
import zlib
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter


@dataclass(frozen=True, slots=True)
class SlotRequest:
    """One periodic exclusive test on one directed path.

    `duration_s` is the time reserved per run (test length, omit and a safety margin: the
    caller adds them up). `anchor_s` aligns the periods; None takes `default_anchor_s(key,
    interval_s)`, which staggers the period starts of different tests.
    """

    key: str
    source: str
    destination: str
    interval_s: float
    duration_s: float
    slip_s: float
    anchor_s: float | None = None

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("a slot request needs a non-empty key")
        name = f"request {self.key!r}"
        if not self.source or not self.destination:
            raise ValueError(f"{name}: source and destination agent ids must not be empty")
        if self.source == self.destination:
            raise ValueError(f"{name}: source and destination are both {self.source!r}; a test needs two agents")
        for field_name in ("interval_s", "duration_s", "slip_s"):
            _require_finite(name, field_name, getattr(self, field_name))
        if self.anchor_s is not None:
            _require_finite(name, "anchor_s", self.anchor_s)
        if self.interval_s <= 0:
            raise ValueError(f"{name}: interval_s must be positive, got {self.interval_s}")
        if self.duration_s <= 0:
            raise ValueError(f"{name}: duration_s must be positive, got {self.duration_s}")
        if self.duration_s > self.interval_s:
            raise ValueError(
                f"{name}: duration_s ({self.duration_s}) exceeds interval_s ({self.interval_s}); "
                "consecutive runs of the test would overlap"
            )
        if not 0 <= self.slip_s <= self.interval_s:
            raise ValueError(f"{name}: slip_s must be between 0 and interval_s ({self.interval_s}), got {self.slip_s}")


@dataclass(frozen=True, slots=True)
class Reservation:
    """Busy exclusive time of one agent, [start, end) in epoch seconds, that planning must keep."""

    agent: str
    start: float
    end: float

    def __post_init__(self) -> None:
        if not self.agent:
            raise ValueError("a reservation needs a non-empty agent id")
        _require_finite(f"reservation of {self.agent!r}", "start", self.start)
        _require_finite(f"reservation of {self.agent!r}", "end", self.end)
        if self.end <= self.start:
            raise ValueError(f"reservation of {self.agent!r}: end ({self.end}) must be after start ({self.start})")


@dataclass(frozen=True, slots=True)
class Placement:
    """One planned run: the request it belongs to, its period, and its reserved [start, end)."""

    key: str
    source: str
    destination: str
    period_start: float
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class Unplaceable:
    """A run that found no slot, with the reason an operator can act on."""

    key: str
    source: str
    destination: str
    period_start: float
    reason: str


@dataclass(frozen=True)
class SlotPlan:
    """What one planning call added: new placements sorted by start, and the runs it could not place."""

    placements: list[Placement]
    unplaceable: list[Unplaceable]


def _require_finite(name: str, field_name: str, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{name}: {field_name} must be a finite number, got {value}")


def default_anchor_s(key: str, interval_s: float) -> float:
    """A whole-second offset in [0, interval_s) derived from the key, stable across processes.

    Tests that share an interval and an anchor open their windows at the same instant; with a
    short slip every test of a mesh would then compete for the same minutes. crc32 rather
    than hash(): str hashes are salted per process, and a test must keep its periods from one
    planning call to the next.
    """
    return float(zlib.crc32(key.encode()) % max(1, math.floor(interval_s)))


def request_anchor_s(request: SlotRequest) -> float:
    return request.anchor_s if request.anchor_s is not None else default_anchor_s(request.key, request.interval_s)


def period_starts(request: SlotRequest, from_s: float, to_s: float) -> list[float]:
    """The starts of the request's periods within [from_s, to_s): anchor + k * interval_s."""
    anchor = request_anchor_s(request)
    return [anchor + k * request.interval_s for k in _period_indices(anchor, request.interval_s, from_s, to_s)]


def _period_indices(anchor_s: float, interval_s: float, from_s: float, to_s: float) -> range:
    def first_at_or_after(bound_s: float) -> int:
        k = math.ceil((bound_s - anchor_s) / interval_s)
        # The division can land a hair beside an integer; settle on the products instead.
        while anchor_s + (k - 1) * interval_s >= bound_s:
            k -= 1
        while anchor_s + k * interval_s < bound_s:
            k += 1
        return k

    first = first_at_or_after(from_s)
    return range(first, max(first, first_at_or_after(to_s)))


def exclusive_demand(requests: Iterable[SlotRequest]) -> dict[str, float]:
    """The share of each agent's time its requests ask for in the long run (sum of duration / interval).

    Above 1.0 the requests can never all fit; close to 1.0 many runs will not.
    """
    demand: dict[str, float] = defaultdict(float)
    for request in requests:
        share = request.duration_s / request.interval_s
        demand[request.source] += share
        demand[request.destination] += share
    return dict(demand)


def _timeline(intervals: list[tuple[float, float]]) -> list[float]:
    """One agent's busy time as a flat sorted list of bounds: start, end, start, end, ...

    Flat rather than a list of pairs: one bisect tells whether an instant is busy (an odd
    insertion point lies inside an interval) and one slice assignment reserves a run.
    Reservations may overlap each other (one run known twice, say); merging them keeps the
    intervals disjoint, which the bisect lookups rely on.
    """
    bounds: list[float] = []
    for start, end in sorted(intervals):
        if bounds and start <= bounds[-1]:
            bounds[-1] = max(bounds[-1], end)
        else:
            bounds += (start, end)
    return bounds


def _next_free(bounds: list[float], t: float, duration_s: float) -> float:
    """The earliest start at or after t whose [start, start + duration_s) is free."""
    i = bisect_right(bounds, t)
    if i & 1:
        t = bounds[i]
        i += 1
    count = len(bounds)
    while i < count and bounds[i] < t + duration_s:
        t = bounds[i + 1]
        i += 2
    return t


def _reserve(bounds: list[float], start: float, end: float) -> None:
    i = bisect_right(bounds, start)
    bounds[i:i] = (start, end)


def _common_start(a: list[float], b: list[float], t: float, latest: float, duration_s: float) -> float | None:
    """The earliest start in [t, latest] free on both timelines, or None.

    Each agent in turn pushes t past its next conflicts (the steps of _next_free, inlined:
    this runs once or twice per run and the calls cost a quarter of the planning time); when
    the second agent leaves t where the first put it, t is free on both. Every round passes at
    least one busy interval, so this ends.
    """
    a_count, b_count = len(a), len(b)
    while t <= latest:
        i = bisect_right(a, t)
        if i & 1:
            t = a[i]
            i += 1
        while i < a_count and a[i] < t + duration_s:
            t = a[i + 1]
            i += 2
        free_on_a = t
        i = bisect_right(b, t)
        if i & 1:
            t = b[i]
            i += 1
        while i < b_count and b[i] < t + duration_s:
            t = b[i + 1]
            i += 2
        if t == free_on_a:
            return t if t <= latest else None
    return None


def _unplaceable_reason(
    source: list[float], destination: list[float], request: SlotRequest, period_start: float
) -> str:
    latest = period_start + request.slip_s
    duration = f"{request.duration_s:g} s"
    if _next_free(source, period_start, request.duration_s) > latest:
        return f"sender {request.source} has no {duration} of free exclusive time within the slip window"
    if _next_free(destination, period_start, request.duration_s) > latest:
        return f"receiver {request.destination} has no {duration} of free exclusive time within the slip window"
    return (
        f"no {duration} of exclusive time free for both {request.source} and {request.destination} "
        "within the slip window"
    )


def plan_slots(
    requests: Iterable[SlotRequest],
    from_s: float,
    to_s: float,
    rng: random.Random,
    *,
    planned: Iterable[Placement] = (),
    reservations: Iterable[Reservation] = (),
) -> SlotPlan:
    """Place every run of every request whose period starts within [from_s, to_s).

    `planned` is what earlier calls returned (pass their placements back): each keeps its
    agents busy, and a period that already has a placement for its request is not planned
    again, so a horizon can be extended call by call. `reservations` is any other exclusive
    time to keep. The result holds only the new placements. Unplaceable runs are not
    remembered: a later call whose horizon holds their period tries them again.

    A run starts at a random whole-second offset within its slip window when both agents are
    free for its duration there; otherwise at the first instant after that point where both
    are free, wrapping around to the start of the window (pScheduler's sliprand: random
    earliest start, then the first common slot). Moving forward from a conflict puts the run
    right behind a busy interval instead of leaving a gap too short for any run. Measured on a
    200-agent full mesh over 24 h with 40 s runs every 6 h (74% of each agent's time, one
    common anchor): 322 of 159,200 runs unplaceable this way, 1,574 when four random points
    are tried before moving forward, 3,334 with sixteen; at 55% all three place every run.
    Whole seconds keep planned times exact through a database or an agent clock without
    sub-second precision.

    Order: the runs with the least freedom go first: shortest slip window, then the busiest
    pair of agents (exclusive_demand); ties in random order. That is all: every run is placed
    once and never moved.
    """
    _require_finite("horizon", "from_s", from_s)
    _require_finite("horizon", "to_s", to_s)
    if to_s < from_s:
        raise ValueError(f"horizon ends ({to_s}) before it starts ({from_s})")
    requests = list(requests)
    by_key: dict[str, SlotRequest] = {}
    for request in requests:
        if request.key in by_key:
            raise ValueError(f"two slot requests share the key {request.key!r}")
        by_key[request.key] = request
    anchors = {request.key: request_anchor_s(request) for request in requests}

    # Nothing before from_s or after the last window can collide with a run of this horizon.
    reach_end = to_s + max((request.slip_s + request.duration_s for request in requests), default=0.0)
    busy: dict[str, list[tuple[float, float]]] = defaultdict(list)
    done: set[tuple[str, int]] = set()
    for placement in planned:
        request_or_none = by_key.get(placement.key)
        if request_or_none is not None:
            index = round((placement.period_start - anchors[placement.key]) / request_or_none.interval_s)
            done.add((placement.key, index))
        if placement.end > from_s and placement.start < reach_end:
            busy[placement.source].append((placement.start, placement.end))
            busy[placement.destination].append((placement.start, placement.end))
    for reservation in reservations:
        if reservation.end > from_s and reservation.start < reach_end:
            busy[reservation.agent].append((reservation.start, reservation.end))
    agents = {agent for request in requests for agent in (request.source, request.destination)}
    timelines = {agent: _timeline(busy.get(agent, [])) for agent in agents}

    demand = exclusive_demand(requests)
    order = list(requests)
    rng.shuffle(order)
    order.sort(key=lambda request: (request.slip_s, -(demand[request.source] + demand[request.destination])))

    placements: list[Placement] = []
    unplaceable: list[Unplaceable] = []
    random_unit = rng.random
    for request in order:
        source, destination = timelines[request.source], timelines[request.destination]
        key, duration, slip = request.key, request.duration_s, request.slip_s
        anchor, interval = anchors[key], request.interval_s
        offsets = math.floor(slip) + 1
        for index in _period_indices(anchor, interval, from_s, to_s):
            if done and (key, index) in done:
                continue
            period_start = anchor + index * interval
            earliest = period_start + int(random_unit() * offsets)
            start = _common_start(source, destination, earliest, period_start + slip, duration)
            if start is None:
                start = _common_start(source, destination, period_start, earliest, duration)
            if start is None:
                reason = _unplaceable_reason(source, destination, request, period_start)
                unplaceable.append(Unplaceable(key, request.source, request.destination, period_start, reason))
                continue
            end = start + duration
            _reserve(source, start, end)
            _reserve(destination, start, end)
            placements.append(Placement(key, request.source, request.destination, period_start, start, end))

    placements.sort(key=attrgetter("start"))
    unplaceable.sort(key=attrgetter("period_start", "key"))
    return SlotPlan(placements, unplaceable)


def utilization(
    placements: Iterable[Placement], from_s: float, to_s: float, reservations: Iterable[Reservation] = ()
) -> dict[str, float]:
    """Each agent's reserved share of [from_s, to_s): busy seconds in the window / window seconds.

    Busy time is the union of the agent's intervals, so overlapping runs (see count_overlaps)
    do not push it past 1.0. Agents without any interval in the window are left out.
    """
    if to_s <= from_s:
        raise ValueError(f"utilization window ends ({to_s}) at or before it starts ({from_s})")
    busy: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for placement in placements:
        interval = (max(placement.start, from_s), min(placement.end, to_s))
        if interval[0] < interval[1]:
            busy[placement.source].append(interval)
            busy[placement.destination].append(interval)
    for reservation in reservations:
        interval = (max(reservation.start, from_s), min(reservation.end, to_s))
        if interval[0] < interval[1]:
            busy[reservation.agent].append(interval)
    window_s = to_s - from_s
    shares: dict[str, float] = {}
    for agent, intervals in busy.items():
        total = 0.0
        covered_to = -math.inf
        for start, end in sorted(intervals):
            if end > covered_to:
                total += end - max(start, covered_to)
                covered_to = end
        shares[agent] = total / window_s
    return shares


def count_overlaps(placements: Iterable[Placement]) -> int:
    """Pairs of runs that share an agent and overlap in time; 0 for a valid plan.

    Works from the placements alone, not from the planner's timelines, so it can check them.
    Runs of the same two agents are seen from both agents; those pairs are counted once.
    """
    by_agent: dict[str, list[tuple[float, float]]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for placement in placements:
        interval = (placement.start, placement.end)
        by_agent[placement.source].append(interval)
        by_agent[placement.destination].append(interval)
        by_pair[min(placement.source, placement.destination), max(placement.source, placement.destination)].append(
            interval
        )
    return sum(_overlapping_pairs(runs) for runs in by_agent.values()) - sum(
        _overlapping_pairs(runs) for runs in by_pair.values()
    )


def _overlapping_pairs(intervals: list[tuple[float, float]]) -> int:
    """Pairs among [start, end) intervals that intersect, by a sweep over starts."""
    pairs = 0
    open_ends: list[float] = []
    for start, end in sorted(intervals):
        while open_ends and open_ends[0] <= start:
            heapq.heappop(open_ends)
        pairs += len(open_ends)
        heapq.heappush(open_ends, end)
    return pairs
