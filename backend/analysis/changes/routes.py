"""Route changes: trace runs whose path fingerprints leave the route known before.

Pure. A trace run is the set of path fingerprints its flows saw (one per ECMP member they
hashed onto); the service reads them from the stored traces.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from analysis.changes.episodes import Direction, Episode, Metric


@dataclass
class _RouteOpen:
    started: int
    detected: int
    old: frozenset[str]
    new: frozenset[str]
    original: frozenset[str]
    cleared: int | None = None
    superseded: bool = False


class _KnownRoute:
    """The fingerprints of the last memory_n runs on the current route, counted so they age out."""

    def __init__(self, memory_n: int) -> None:
        self._memory_n = memory_n
        self._runs: deque[frozenset[str]] = deque()
        self._counts: dict[str, int] = {}
        self.age = 0  # runs since the route was established

    def __bool__(self) -> bool:
        return bool(self._runs)

    def add(self, run: frozenset[str]) -> None:
        self._runs.append(run)
        self.age += 1
        for fingerprint in run:
            self._counts[fingerprint] = self._counts.get(fingerprint, 0) + 1
        if len(self._runs) > self._memory_n:
            for fingerprint in self._runs.popleft():
                self._counts[fingerprint] -= 1
                if not self._counts[fingerprint]:
                    del self._counts[fingerprint]

    def reset(self, runs: Sequence[frozenset[str]]) -> None:
        self._runs.clear()
        self._counts.clear()
        self.age = 0
        for run in runs:
            self.add(run)

    def covers(self, run: frozenset[str]) -> bool:
        return all(fingerprint in self._counts for fingerprint in run)

    def fingerprints(self) -> frozenset[str]:
        return frozenset(self._counts)


def _confirms(runs: Sequence[frozenset[str]], known: frozenset[str], settled: bool) -> bool:
    """Runs that all left the known route, or (on a settled route) all saw one same new fingerprint."""
    if all(run.isdisjoint(known) for run in runs):
        return True
    return settled and bool(frozenset.intersection(*(run - known for run in runs)))


def route_changes(
    traces: Sequence[tuple[datetime, frozenset[str]]],
    *,
    confirm_n: int = 2,
    memory_n: int = 144,
    settle_n: int = 6,
) -> list[Episode]:
    """Route changes from trace runs, each the set of path fingerprints its flows saw.

    ECMP makes several fingerprints per run normal, and a flow may hash onto another member
    now and then, so runs are compared with the known route: the union of the fingerprints of
    the last memory_n runs on it (a day of traces every 10 min). A run whose set is a subset of
    the known route is no change. A change is confirmed by confirm_n consecutive runs that each
    saw something new and either all saw nothing of the known route (the path moved), or all
    saw one same new fingerprint (a replaced member that keeps appearing). When a streak of new
    runs does not confirm, its oldest run is learned as part of the known route (a member not
    seen before), and so is every run of a streak that a run inside the known route breaks.

    A route is only compared once it has settled: for its first settle_n runs (at the start of
    the series and after each change) new fingerprints are learned, not judged, because a few
    runs need not have seen every ECMP member yet. The one exception is a return into the route
    known before an open episode, which is confirmed at once. A second change within settle_n
    runs of the first is therefore missed (its fingerprints become part of the route), and so
    is a change within the first settle_n runs of the series: a caller that recomputes over a
    sliding time range sees its first runs as learning only.

    Needs runs that see most ECMP members (several flows per run, e.g. 16 source ports or
    scamper tracelb): with one flow per run, hashing twice in a row onto a member not seen yet
    looks exactly like the path moving there, until every member has been seen once.

    Episode: `started_at` is the first run of the confirming streak, `detected_at` its last;
    baseline = fingerprints known before, current = fingerprints of the confirming runs,
    magnitude = how many of those are new; evidence lists the sets. The episode stays open
    while the path is on the new route and clears (at the first run of the return) when a later
    change goes back within the route known before the first open change, which then is no
    episode of its own; a change to yet another route clears the open episode as superseded and
    opens the next. Direction is always UP (a change happened; a route has no better or worse
    direction here). Runs with an empty set (nothing answered) are skipped.
    """
    if confirm_n < 1 or memory_n < 1 or settle_n < 0:
        raise ValueError("confirm_n and memory_n must be >= 1, settle_n >= 0")
    ordered = [(moment, run) for moment, run in sorted(traces, key=lambda trace: trace[0]) if run]
    route = _KnownRoute(memory_n)
    pending: list[int] = []
    done: list[_RouteOpen] = []
    current: _RouteOpen | None = None
    for index, (_, run) in enumerate(ordered):
        if not route:
            route.add(run)
            continue
        if route.covers(run):
            for j in pending:
                route.add(ordered[j][1])
            pending.clear()
            route.add(run)
            continue
        pending.append(index)
        while len(pending) >= confirm_n:
            streak = [ordered[j][1] for j in pending[-confirm_n:]]
            known = route.fingerprints()
            settled = route.age >= settle_n
            returning = current is not None and frozenset().union(*streak) <= current.original
            if not (settled or returning) or not _confirms(streak, known, settled):
                # The oldest run of the streak was alternation: learn it, and with it any later
                # run of the streak that is now known (which breaks the streak there).
                route.add(ordered[pending.pop(0)][1])
                while pending and any(route.covers(ordered[j][1]) for j in pending):
                    route.add(ordered[pending.pop(0)][1])
                continue
            new = frozenset().union(*streak)
            started = pending[-confirm_n]
            if current is not None:
                current.cleared = started
                done.append(current)
                if new <= current.original:
                    current = None
                else:
                    current.superseded = True
                    current = _RouteOpen(started, index, known, new, current.original)
            else:
                current = _RouteOpen(started, index, known, new, known)
            route.reset(streak)
            pending.clear()
    if current is not None:
        done.append(current)
    times = [moment for moment, _ in ordered]
    return [
        Episode(
            metric=Metric.ROUTE,
            rule="route",
            started_at=times[change.started],
            detected_at=times[change.detected],
            cleared_at=times[change.cleared] if change.cleared is not None else None,
            direction=Direction.UP,
            baseline=float(len(change.old)),
            current=float(len(change.new)),
            magnitude=float(len(change.new - change.old)),
            evidence={
                "old_fingerprints": sorted(change.old),
                "new_fingerprints": sorted(change.new),
                "added": sorted(change.new - change.old),
                "removed": sorted(change.old - change.new),
                "original_fingerprints": sorted(change.original),
                "superseded": change.superseded,
                "confirm_n": confirm_n,
            },
        )
        for change in sorted(done, key=lambda change: change.started)
    ]
