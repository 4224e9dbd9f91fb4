"""What a scrape reports, read from the tables the API reads: each path's state as the Paths
list has it (analysis.services.path_state), its last hour of pings (history_rttlasthour), the
ECMP modes that stand (analysis_standingmodes), open findings, the agents, the alert outbox,
Celery's queues, and Fathom's own counters (core.metrics). A fixed number of queries whatever
the number of paths, and never a raw sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count
from django.utils import timezone
from redis import Redis
from redis.exceptions import RedisError

from alerts.choices import DeliveryStatus
from alerts.models import Delivery
from analysis.choices import FindingState
from analysis.services.path_state import PINGS_WINDOW, PathState, path_states
from core import metrics
from core.shared_redis import shared_redis
from inventory.models import Agent
from meshes.models import Mesh
from meshes.services.paths import mesh_pairs

RTT_SQL = """
SELECT source_id::text, destination_id::text, family, min_ms, p50_ms, p90_ms
FROM history_rttlasthour
WHERE through > %(since)s
"""

MODES_SQL = """
SELECT source_id::text, destination_id::text, family, mode_count
FROM analysis_standingmodes
WHERE mode_count IS NOT NULL
"""

FINDINGS_SQL = """
SELECT source_id::text, destination_id::text, family, metric, count(*)
FROM analysis_finding
WHERE state = %(open)s
GROUP BY source_id, destination_id, family, metric
"""

# Celery's Redis transport keeps one list per queue and priority step.
CELERY_QUEUES = ("celery", "alerts")
PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")

Path = tuple[str, str, int]  # agent ids as text, family


@dataclass(frozen=True)
class PathFigures:
    source: str  # agent names
    destination: str
    family: str  # "ipv4" or "ipv6": the path's
    state: PathState
    rtt_ms: tuple[float | None, float | None, float | None]  # min, median, p90 of the last hour
    ecmp_members: int | None
    open_findings: dict[str, int]  # by metric


@dataclass(frozen=True)
class AgentFigures:
    name: str
    kind: str
    version: str
    status: str
    last_seen_age_s: float | None
    clock_offset_s: float | None
    spool_results: int | None
    spool_bytes: int | None


@dataclass(frozen=True)
class Scrape:
    at: datetime
    paths: list[PathFigures]
    meshes: list[tuple[str, str, str, str]]  # (mesh, source, destination, family) of each pair
    agents: list[AgentFigures]
    outbox: dict[str, int]  # deliveries waiting, by status
    queues: dict[str, int] | None  # Celery's queue lengths; None: Redis did not answer
    own: dict[str, float] | None  # core.metrics' fields; None: Redis did not answer


def family_label(family: int) -> str:
    return "ipv6" if family == 6 else "ipv4"


def scrape(now: datetime | None = None) -> Scrape:
    now = now or timezone.now()
    agents = {str(agent.pk): agent for agent in Agent.objects.all()}
    return Scrape(
        at=now,
        paths=_paths(agents, now),
        meshes=_mesh_pairs(agents),
        agents=[_agent(agent, now) for agent in agents.values()],
        outbox=_outbox(),
        queues=_queues(),
        own=_own(),
    )


def _paths(agents: dict[str, Agent], now: datetime) -> list[PathFigures]:
    states = path_states(now)
    with connection.cursor() as cursor:
        cursor.execute(RTT_SQL, {"since": now - PINGS_WINDOW})
        rtts = {(row[0], row[1], row[2]): (row[3], row[4], row[5]) for row in cursor.fetchall()}
        cursor.execute(MODES_SQL)
        modes = {(row[0], row[1], row[2]): int(row[3]) for row in cursor.fetchall()}
        cursor.execute(FINDINGS_SQL, {"open": FindingState.OPEN})
        findings: dict[Path, dict[str, int]] = {}
        for src, dst, family, metric, number in cursor.fetchall():
            findings.setdefault((src, dst, family), {})[metric] = int(number)
    figures = []
    for path in sorted(states.with_runs()):
        source, destination = agents.get(path[0]), agents.get(path[1])
        if source is None or destination is None:
            continue  # an agent deleted since the query
        figures.append(
            PathFigures(
                source=source.name,
                destination=destination.name,
                family=family_label(path[2]),
                state=states.get(path),
                rtt_ms=rtts.get(path, (None, None, None)),
                ecmp_members=modes.get(path),
                open_findings=findings.get(path, {}),
            )
        )
    return figures


def _mesh_pairs(agents: dict[str, Agent]) -> list[tuple[str, str, str, str]]:
    active = {agent.pk: agent for agent in agents.values() if agent.revoked_at is None}
    pairs = set()
    for mesh in Mesh.objects.filter(enabled=True):
        for source, destination, _, family in mesh_pairs(mesh, active):
            if destination is not None:
                pairs.add((mesh.name, source.name, destination.name, family_label(family)))
    return sorted(pairs)


def _agent(agent: Agent, now: datetime) -> AgentFigures:
    age = (now - agent.last_seen_at).total_seconds() if agent.last_seen_at else None
    return AgentFigures(
        agent.name, agent.kind, agent.agent_version, agent.status(now), age,
        agent.clock_offset_s, agent.spool_results, agent.spool_bytes,
    )  # fmt: skip


def _outbox() -> dict[str, int]:
    waiting = (DeliveryStatus.PENDING, DeliveryStatus.RETRYING, DeliveryStatus.SENDING)
    counts = {str(status): 0 for status in waiting}
    rows = Delivery.objects.filter(status__in=waiting).values("status").annotate(number=Count("pk")).order_by()
    for row in rows:
        counts[row["status"]] = row["number"]
    return counts


def _queues() -> dict[str, int] | None:
    try:
        return queue_lengths(shared_redis())
    except RedisError:
        return None


def queue_lengths(client: Redis) -> dict[str, int]:
    """The tasks waiting in each Celery queue of the broker `client` reaches, over every
    priority (the Redis transport keeps a list per priority step)."""
    pipe = client.pipeline(transaction=False)
    for queue in CELERY_QUEUES:
        for suffix in PRIORITY_SUFFIXES:
            pipe.llen(queue + suffix)
    lengths = pipe.execute()
    steps = len(PRIORITY_SUFFIXES)
    return {queue: sum(lengths[index * steps : (index + 1) * steps]) for index, queue in enumerate(CELERY_QUEUES)}


def _own() -> dict[str, float] | None:
    try:
        return metrics.read()
    except RedisError:
        return None
