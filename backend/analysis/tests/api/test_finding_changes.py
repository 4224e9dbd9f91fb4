"""GET /api/v1/analysis/findings/<id>/changes/: what else changed in a finding's moment (the
path's other findings, the reverse direction's, either host, paths sharing an agent or a
traced router), and nothing from outside that moment or from unrelated paths."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse

from analysis.choices import FindingMetric
from analysis.models import Finding
from analysis.services.coinciding import MOMENT_SLACK, facts_diff
from analysis.tests.services.fixtures import MIB, analysis_row, facts, snapshot
from fathom.testing import FathomTestCase
from inventory.models import Agent
from measurements.models import TracePath

T0 = datetime.fromisoformat("2026-11-20T12:00:00+00:00")


def finding(source: Agent, destination: Agent, metric: str, started: datetime, **fields: Any) -> Finding:
    values: dict[str, Any] = {
        "direction": "down", "baseline": 9e8, "current": 5e8, "magnitude": -0.44, "unit": "relative", **fields,
    }  # fmt: skip
    return Finding.objects.create(
        source=source, destination=destination, metric=metric, started_at=started,
        detected_at=started + timedelta(minutes=2), **values,
    )  # fmt: skip


def trace(source: Agent, destination: Agent, routers: list[str], at_s: int = -600) -> None:
    hops = [{"ttl": ttl, "probes": [{"address": address, "rtt_ms": 1.0}]} for ttl, address in enumerate(routers, 1)]
    hops.append({"ttl": len(routers) + 1, "probes": [{"address": destination.address, "rtt_ms": 2.0}]})
    TracePath.objects.create(
        time=T0 + timedelta(seconds=at_s), run_id=uuid.uuid4(), flow=0, source_id=source.pk,
        destination_id=destination.pk, src_port=33434, reached=True, fingerprint=uuid.uuid4().hex,
        hop_count=len(hops), hops=hops,
    )  # fmt: skip


class FindingChangesTests(FathomTestCase):
    def setUp(self) -> None:
        self.vienna, _ = self.enroll("vienna", "198.18.3.1")
        self.geneva, _ = self.enroll("geneva", "198.18.4.1")
        self.oslo, _ = self.enroll("oslo", "198.18.5.1")
        self.rtt = finding(self.athens, self.frankfurt, FindingMetric.RTT, T0, direction="up", magnitude=4.1,
                           baseline=20.0, current=24.1, unit="ms")  # fmt: skip

    def changes(self, finding_id: int, status: int = 200) -> Any:
        reply = self.user_client(self.outsider).get(reverse("analysis-finding-changes", args=[finding_id]))
        assert reply.status_code == status, reply.content
        return reply.json()

    def sentences(self, relation: str | None = None) -> list[str]:
        items = self.changes(self.rtt.pk)["items"]
        return [item["sentence"] for item in items if relation is None or item["relation"] == relation]

    def test_a_route_change_on_the_path_names_its_new_router(self) -> None:
        for fingerprint, router in (("old", "198.18.100.1"), ("new", "198.18.200.1")):
            hops = [{"ttl": 1, "probes": [{"address": router, "rtt_ms": 1.0}]}]
            TracePath.objects.create(
                time=T0, run_id=uuid.uuid4(), flow=0, source_id=self.athens.pk, destination_id=self.frankfurt.pk,
                src_port=33434, reached=True, fingerprint=fingerprint, hop_count=1, hops=hops,
            )  # fmt: skip
        finding(self.athens, self.frankfurt, FindingMetric.ROUTE, T0 - timedelta(minutes=5), direction="up",
                magnitude=1, evidence={"added": ["new"], "old_fingerprints": ["old"]})  # fmt: skip
        body = self.changes(self.rtt.pk)
        assert [item["relation"] for item in body["items"]] == ["same_path"]
        assert body["items"][0]["sentence"] == "Route changed on athens → frankfurt (1 new route), through 198.18.200.1"
        assert body["from"] < body["to"]

    def test_the_reverse_direction_and_a_path_sharing_an_agent(self) -> None:
        back = finding(self.frankfurt, self.athens, FindingMetric.THROUGHPUT, T0 + timedelta(minutes=3))
        finding(self.athens, self.vienna, FindingMetric.LOSS, T0 - timedelta(minutes=10), direction="up",
                magnitude=1.5, baseline=0.0, current=0.015, unit="pp")  # fmt: skip
        items = self.changes(self.rtt.pk)["items"]
        assert (items[0]["relation"], items[0]["finding_id"]) == ("reverse", back.pk)
        assert items[0]["sentence"].startswith("Throughput down 44% on frankfurt → athens")
        assert items[1]["relation"] == "shared_agent"
        assert items[1]["sentence"].endswith("(shares agent athens)")
        assert items[1]["source_id"] == str(self.athens.pk)

    def test_a_path_through_a_shared_router_but_not_one_through_other_routers(self) -> None:
        trace(self.athens, self.frankfurt, ["198.18.100.1", "198.18.100.2"])
        trace(self.vienna, self.geneva, ["198.18.100.2"])  # shares 198.18.100.2
        trace(self.oslo, self.vienna, ["198.18.150.1"])  # shares nothing
        finding(self.vienna, self.geneva, FindingMetric.RTT, T0 + timedelta(minutes=1))
        finding(self.oslo, self.vienna, FindingMetric.RTT, T0 + timedelta(minutes=2))
        assert [sentence.split(" (")[-1] for sentence in self.sentences()] == ["shares router 198.18.100.2)"]

    def test_a_host_change_says_what_changed(self) -> None:
        snapshot(self.frankfurt, T0 - timedelta(days=2), facts(4 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(minutes=1), facts(16 * MIB, iperf3="3.16"))
        (sentence,) = self.sentences("host")
        assert sentence == (
            "frankfurt: iperf3 version 3.12 → 3.16; net.ipv4.tcp_rmem 4096 87380 4194304 → 4096 87380 16777216"
        )

    def test_changes_outside_the_moment_are_not_listed(self) -> None:
        finding(self.frankfurt, self.athens, FindingMetric.RTT, T0 - MOMENT_SLACK - timedelta(minutes=1))
        finding(self.frankfurt, self.athens, FindingMetric.LOSS, T0 + MOMENT_SLACK + timedelta(minutes=1))
        snapshot(self.athens, T0 - timedelta(days=2), facts(4 * MIB))
        snapshot(self.athens, T0 - timedelta(hours=1), facts(8 * MIB))
        finding(self.vienna, self.geneva, FindingMetric.RTT, T0)  # no trace, no shared agent
        assert self.sentences() == []

    def test_a_throughput_finding_looks_back_to_the_run_before_it(self) -> None:
        analysis_row(self.athens, self.frankfurt, T0 - timedelta(hours=6), 9e8)
        self.rtt.delete()
        tput = finding(self.athens, self.frankfurt, FindingMetric.THROUGHPUT, T0)
        route = finding(self.athens, self.frankfurt, FindingMetric.ROUTE, T0 - timedelta(hours=5), magnitude=1)
        body = self.changes(tput.pk)
        assert datetime.fromisoformat(body["from"]) == T0 - timedelta(hours=6)
        assert [item["finding_id"] for item in body["items"]] == [route.pk]

    def test_an_unknown_finding_is_404_and_a_stranger_is_refused(self) -> None:
        self.changes(Finding.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1, status=404)
        reply = self.client.get(reverse("analysis-finding-changes", args=[self.rtt.pk]))
        assert reply.status_code in (401, 403)


def test_facts_diff_shows_versions_and_sysctls_and_names_other_changes() -> None:
    old = {"agent_version": "0.9.0", "kernel": "6.1", "interfaces": [{"mtu": 1500}], "sysctls": {"a": "1"}}
    new = {"agent_version": "0.10.0", "kernel": "6.1", "interfaces": [{"mtu": 9000}], "sysctls": {"a": "2", "b": "x"}}
    assert facts_diff(old, new) == ["agent version 0.9.0 → 0.10.0", "interfaces changed", "a 1 → 2", "b none → x"]
    assert facts_diff(old, old) == []
