"""Plans: the tests each agent runs.

In the spine every active agent pings every other active agent (a full mesh). Configured
meshes and centrally planned time slots (issue 4) will produce more tests through the same
`build_plan`: each source of tests contributes PlannedTest entries.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from inventory.models import Agent

PLAN_SCHEMA_VERSION = 1
UPLOAD_INTERVAL_S = 10
HOST_FACTS_INTERVAL_S = 300
DEFAULT_PING_SPEC: dict[str, Any] = {"count": 10, "interval_s": 1.0, "size_bytes": 56, "ttl": None}


@dataclass(frozen=True)
class Peer:
    id: str
    name: str
    address: str


@dataclass(frozen=True)
class PlannedTest:
    id: str
    type: str
    interval_s: int
    peer: Peer
    spec: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    agent_id: str
    version: str
    generated_at: datetime
    valid_until: datetime
    tests: list[PlannedTest]

    def as_json(self) -> dict[str, Any]:
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "agent_id": self.agent_id,
            "version": self.version,
            "generated_at": self.generated_at.isoformat(),
            "valid_until": self.valid_until.isoformat(),
            "upload_interval_s": UPLOAD_INTERVAL_S,
            "host_facts_interval_s": HOST_FACTS_INTERVAL_S,
            "tests": [asdict(test) for test in self.tests],
        }


def full_mesh_ping_tests(agent: Agent, peers: list[Agent]) -> list[PlannedTest]:
    return [
        PlannedTest(
            id=f"ping:{peer.pk}",
            type="ping",
            interval_s=settings.PING_INTERVAL_S,
            peer=Peer(str(peer.pk), peer.name, peer.address),
            spec=dict(DEFAULT_PING_SPEC),
        )
        for peer in peers
        if peer.pk != agent.pk
    ]


def plan_version(tests: list[PlannedTest]) -> str:
    """Stable while the tests are unchanged, so an unchanged plan is a 304."""
    canonical = json.dumps([asdict(test) for test in tests], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def build_plan(agent: Agent, now: datetime | None = None) -> Plan:
    now = now or timezone.now()
    peers = list(Agent.objects.filter(revoked_at__isnull=True).order_by("name"))
    tests = full_mesh_ping_tests(agent, peers)
    return Plan(
        agent_id=str(agent.pk),
        version=plan_version(tests),
        generated_at=now,
        valid_until=now + timedelta(seconds=settings.PLAN_VALID_FOR_S),
        tests=tests,
    )
