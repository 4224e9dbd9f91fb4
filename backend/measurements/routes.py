"""A path's routes for the Routes view: every distinct route its trace runs saw (one per ECMP
member the flows hashed onto), hop by hop, which routes each run saw, and when that set changed.

Two queries whatever the range: counts of flows per run and route, then one stored flow per
route for its hops (equal routes share a fingerprint, so any flow of a route has its hops). A
route with silent hops counts as the complete route it fits (measurements.route_match).
A path is an agent pair (path_routes) or an agent and an external target (target_routes),
whose trace samples carry no target and are found through the target's runs.
"""

from __future__ import annotations

import json
import string
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from measurements import route_match

# The newest trace runs read: a trace every 10 minutes is three and a half days of them.
MAX_RUNS = 500

RUN_ROUTES_SQL = """
WITH newest AS (
    SELECT DISTINCT time, run_id FROM measurements_tracepath
    WHERE {path} AND time >= %(start)s AND time < %(end)s
    ORDER BY time DESC
    LIMIT %(runs)s
)
SELECT t.time, t.run_id, t.fingerprint, count(*)
FROM measurements_tracepath t JOIN newest USING (time, run_id)
WHERE {path}
GROUP BY t.time, t.run_id, t.fingerprint
ORDER BY t.time, t.run_id
"""

ROUTE_HOPS_SQL = """
SELECT DISTINCT ON (fingerprint) fingerprint, reached, hops
FROM measurements_tracepath
WHERE {path} AND fingerprint = ANY(%(fingerprints)s)
  AND time >= %(start)s AND time < %(end)s
ORDER BY fingerprint, time DESC
"""

AGENT_PATH = "source_id = %(source)s AND destination_id = %(destination)s AND family = %(family)s"
# A trace sample's time is its run's start, so the runs of the range are those of its samples.
TARGET_PATH = """source_id = %(source)s AND destination_id IS NULL AND run_id IN (
    SELECT id FROM measurements_run
    WHERE source_id = %(source)s AND destination_id IS NULL AND target = %(target)s AND test_type = 'trace'
      AND started_at >= %(start)s AND started_at < %(end)s
)"""


@dataclass(frozen=True)
class RouteHop:
    ttl: int
    address: str | None  # the address most probes of the hop answered from; None: none answered
    other_addresses: list[str]  # load-balanced routers answering the same TTL
    rtt_ms: float | None  # the fastest answer
    hostname: str | None
    asn: int | None
    as_owner: str | None
    mtu: int | None


@dataclass(frozen=True)
class Route:
    label: str  # "A", "B", ... in the order the routes were first seen
    fingerprint: str
    reached: bool
    hops: list[RouteHop]
    first_seen: datetime
    last_seen: datetime
    runs: int  # trace runs that saw it
    flows: int  # flows (of all runs) that took it
    latest_flows: int  # of the newest run's flows
    path_mtu: int | None  # the smallest MTU a hop reported
    unanswered_hops: int


@dataclass(frozen=True)
class RouteRun:
    time: datetime
    run_id: uuid.UUID
    flows: dict[str, int]  # route label -> flows


@dataclass(frozen=True)
class RouteChange:
    time: datetime
    added: list[str]  # labels
    removed: list[str]


@dataclass(frozen=True)
class PathRoutes:
    routes: list[Route]
    runs: list[RouteRun]  # oldest first
    changes: list[RouteChange]
    truncated: bool  # more runs in the range than MAX_RUNS: the oldest are left out


def route_label(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: short enough for a chart axis."""
    letters = string.ascii_uppercase
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = letters[rest] + label
    return label


def summarize_hop(hop: dict[str, Any]) -> RouteHop:
    probes = hop.get("probes") or []
    answered = [probe for probe in probes if probe.get("address")]
    counts = Counter(str(probe["address"]) for probe in answered)
    address = counts.most_common(1)[0][0] if counts else None
    rtts = [float(probe["rtt_ms"]) for probe in answered if probe.get("rtt_ms") is not None]
    return RouteHop(
        ttl=int(hop["ttl"]),
        address=address,
        other_addresses=sorted(name for name in counts if name != address),
        rtt_ms=min(rtts) if rtts else None,
        hostname=hop.get("hostname") or None,
        asn=hop.get("asn"),
        as_owner=hop.get("as_owner") or None,
        mtu=hop.get("mtu"),
    )


def path_routes(
    source: uuid.UUID, destination: uuid.UUID, start: datetime, end: datetime, family: int = 4
) -> PathRoutes:
    """The routes from one agent to another."""
    keys = {"source": source, "destination": destination, "family": family}
    return _routes(AGENT_PATH, {**keys, "start": start, "end": end})


def target_routes(source: uuid.UUID, target: str, start: datetime, end: datetime) -> PathRoutes:
    """The routes from an agent to an external target (normalised, as runs store it)."""
    return _routes(TARGET_PATH, {"source": source, "target": target, "start": start, "end": end})


def _routes(path: str, params: dict[str, Any]) -> PathRoutes:
    with connection.cursor() as cursor:
        cursor.execute(RUN_ROUTES_SQL.format(path=path), {**params, "runs": MAX_RUNS + 1})
        rows = cursor.fetchall()
    if not rows:
        return PathRoutes([], [], [], False)
    with connection.cursor() as cursor:
        cursor.execute(ROUTE_HOPS_SQL.format(path=path), {**params, "fingerprints": sorted({row[2] for row in rows})})
        # Django's cursor hands jsonb over as text.
        stored = {
            fingerprint: (reached, json.loads(hops) if isinstance(hops, str) else hops)
            for fingerprint, reached, hops in cursor.fetchall()
        }
    weights: Counter[str] = Counter()
    for _, _, fingerprint, flows in rows:
        weights[fingerprint] += int(flows)
    # A flow that saw a known route with a hop silent took that route.
    read = route_match.read_as(
        {fingerprint: route_match.hop_pattern(hops) for fingerprint, (_, hops) in stored.items()}, weights
    )
    by_run: dict[tuple[datetime, uuid.UUID], Counter[str]] = {}
    for time, run_id, fingerprint, flows in rows:
        by_run.setdefault((time, run_id), Counter())[read.get(fingerprint, fingerprint)] += int(flows)
    keys = sorted(by_run)
    truncated = len(keys) > MAX_RUNS
    keys = keys[-MAX_RUNS:]

    order: list[str] = []  # fingerprints by first sight
    stats: dict[str, dict[str, Any]] = {}
    for time, run_id in keys:
        for fingerprint, flows in by_run[(time, run_id)].items():
            seen = stats.get(fingerprint)
            if seen is None:
                order.append(fingerprint)
                stats[fingerprint] = {"first": time, "last": time, "runs": 1, "flows": flows}
            else:
                seen["last"], seen["runs"], seen["flows"] = time, seen["runs"] + 1, seen["flows"] + flows
    labels = {fingerprint: route_label(index) for index, fingerprint in enumerate(order)}

    latest = by_run[keys[-1]]
    routes = []
    for fingerprint in order:
        reached, raw_hops = stored.get(fingerprint, (False, []))
        hops = [summarize_hop(hop) for hop in raw_hops]
        mtus = [hop.mtu for hop in hops if hop.mtu]
        seen = stats[fingerprint]
        routes.append(
            Route(
                label=labels[fingerprint],
                fingerprint=fingerprint,
                reached=bool(reached),
                hops=hops,
                first_seen=seen["first"],
                last_seen=seen["last"],
                runs=seen["runs"],
                flows=seen["flows"],
                latest_flows=latest.get(fingerprint, 0),
                path_mtu=min(mtus) if mtus else None,
                unanswered_hops=sum(1 for hop in hops if hop.address is None),
            )
        )

    runs, changes = [], []
    previous: set[str] | None = None
    for time, run_id in keys:
        flows = {labels[fingerprint]: count for fingerprint, count in by_run[(time, run_id)].items()}
        runs.append(RouteRun(time, run_id, flows))
        current = set(flows)
        if previous is not None and current != previous:
            changes.append(RouteChange(time, sorted(current - previous), sorted(previous - current)))
        previous = current
    return PathRoutes(routes, runs, changes, truncated)
