"""Route findings: a router that leaves some traces unanswered (an ICMP rate limit under load)
is no route change; a path that really moves is."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.utils import timezone

from analysis.choices import FindingMetric
from analysis.services.findings import path_episodes, trace_route_sets
from fathom.testing import FathomTestCase
from measurements.models import TracePath


def hops(*routers: str | None) -> list[dict[str, object]]:
    return [{"ttl": ttl, "probes": [{"address": router, "rtt_ms": None if router is None else 1.0}]}
            for ttl, router in enumerate(routers, 1)]  # fmt: skip


class TraceRouteSetsTests(FathomTestCase):
    def trace_runs(self, routes: list[tuple[str, list[dict[str, object]]]], start_min: int) -> None:
        for index, (fingerprint, route) in enumerate(routes):
            TracePath.objects.create(
                time=timezone.now() - timedelta(minutes=start_min - 10 * index), run_id=uuid.uuid4(), flow=0,
                source_id=self.athens.pk, destination_id=self.frankfurt.pk, src_port=33434, reached=True,
                fingerprint=fingerprint, hop_count=len(route), hops=route,
            )  # fmt: skip

    def route_episodes(self) -> int:
        episodes = path_episodes(self.athens, self.frankfurt, timezone.now(), frozenset({FindingMetric.ROUTE}))
        return len(episodes[FindingMetric.ROUTE])

    def test_silent_hops_on_the_known_route_are_no_change(self) -> None:
        known = ("known", hops("198.18.1.1", "198.18.2.1", "198.18.3.1"))
        silent = ("silent", hops("198.18.1.1", None, "198.18.3.1"))
        self.trace_runs([known] * 8 + [silent] * 3, start_min=120)
        assert self.route_episodes() == 0
        sets = trace_route_sets(self.athens, self.frankfurt, timezone.now() - timedelta(days=1))
        assert {run for _, run in sets} == {frozenset({"known"})}

    def test_a_move_to_other_routers_is_a_change_even_with_a_silent_hop(self) -> None:
        known = ("known", hops("198.18.1.1", "198.18.2.1", "198.18.3.1"))
        moved = ("moved", hops("198.18.1.1", "198.18.9.1", "198.18.3.1"))
        moved_silent = ("moved-silent", hops(None, "198.18.9.1", "198.18.3.1"))
        self.trace_runs([known] * 8 + [moved, moved_silent, moved], start_min=120)
        assert self.route_episodes() == 1
