"""The plan versions each agent was served, and the paths and span each one vouches for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from inventory.addresses import address_family
from inventory.models import Agent
from meshes.models import IssuedPlan
from meshes.services.plans import Plan

# (peer agent id or "", external target or the family of an IPv6 agent path, test type)
PathKey = tuple[str, str, str]


# A result may start a little before the plan that asked for it reached the server's clock.
ISSUED_PLAN_CLOCK_SKEW = timedelta(minutes=5)


# Issued plans older than this (since last served) are forgotten; a result measured under
# one is older than anything the agent's spool keeps.
ISSUED_PLAN_RETENTION = timedelta(days=30)


def path_key(peer_id: str | None, target: str, test_type: str) -> PathKey:
    """A directed path as plans and results name it: the peer agent and the family of the
    address probed ("" for IPv4, as plans were issued before IPv6), or else the target."""
    if peer_id:
        return (peer_id, "ipv6" if address_family(target) == 6 else "", test_type)
    return ("", target, test_type)


def record_issued_plan(agent: Agent, plan: Plan) -> None:
    """Remembers that this agent holds this plan version (one upsert per plan poll)."""
    now = timezone.now()
    paths = sorted({path_key(test.peer.id, test.peer.address, test.type) for test in plan.tests})
    IssuedPlan.objects.bulk_create(
        [IssuedPlan(agent=agent, version=plan.version, paths=paths, issued_at=now, last_served_at=now)],
        update_conflicts=True,
        unique_fields=["agent", "version"],
        update_fields=["last_served_at"],
    )


@dataclass(frozen=True)
class HeldPlan:
    """A plan version as issued to one agent: its paths, and the span in which a result
    measured under it is believable."""

    paths: frozenset[PathKey]
    since: datetime
    until: datetime

    def covers(self, key: PathKey, started_at: datetime) -> bool:
        return key in self.paths and self.since <= started_at <= self.until


def held_plans(agent: Agent, results: list[dict[str, Any]]) -> dict[str, HeldPlan]:
    """The plans the batch's results name, as issued to this agent, by version."""
    versions = {result.get("plan_version") or "" for result in results} - {""}
    if not versions:
        return {}
    valid_for = timedelta(seconds=settings.PLAN_VALID_FOR_S)
    return {
        plan.version: HeldPlan(
            frozenset((str(peer), str(target), str(kind)) for peer, target, kind in plan.paths),
            plan.issued_at - ISSUED_PLAN_CLOCK_SKEW,
            plan.last_served_at + valid_for,
        )
        for plan in IssuedPlan.objects.filter(agent=agent, version__in=versions)
    }
