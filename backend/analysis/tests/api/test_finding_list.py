"""GET /api/v1/analysis/findings/ for the Findings page: across paths, by mesh, metric,
state, kind and a time window; bad filters are refused with a reason."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse

from analysis.choices import FindingKind, FindingMetric, FindingState
from analysis.models import Finding
from fathom.testing import FathomTestCase
from inventory.models import Agent
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember

T0 = datetime.fromisoformat("2026-11-20T12:00:00+00:00")


def finding(source: Agent, destination: Agent, metric: str, started: datetime, **fields: Any) -> Finding:
    return Finding.objects.create(
        source=source,
        destination=destination,
        metric=metric,
        started_at=started,
        detected_at=started + timedelta(minutes=2),
        direction="down",
        baseline=9e8,
        current=5e8,
        magnitude=-0.44,
        unit="relative",
        **fields,
    )


class FindingListTests(FathomTestCase):
    def setUp(self) -> None:
        self.vienna, _ = self.enroll("vienna", "198.18.3.1")
        self.rtt = finding(self.athens, self.frankfurt, FindingMetric.RTT, T0)
        self.tput = finding(
            self.frankfurt,
            self.athens,
            FindingMetric.THROUGHPUT,
            T0 - timedelta(days=3),
            state=FindingState.CLEARED,
            cleared_at=T0 - timedelta(days=2),
        )
        self.noted = finding(
            self.athens, self.vienna, FindingMetric.THROUGHPUT, T0 - timedelta(hours=5), kind=FindingKind.ANNOTATION
        )
        # A disjoint mesh: athens (a) -> frankfurt (b) and back, never athens -> vienna.
        self.mesh = Mesh.objects.create(name="lhc", kind=MeshKind.DISJOINT)
        MeshMember.objects.create(mesh=self.mesh, agent=self.athens, side=MemberSide.A)
        MeshMember.objects.create(mesh=self.mesh, agent=self.frankfurt, side=MemberSide.B)
        MeshMember.objects.create(mesh=self.mesh, agent=self.vienna, side=MemberSide.A)

    def ids(self, **params: str) -> list[int]:
        reply = self.user_client(self.outsider).get(reverse("analysis-findings"), params)
        assert reply.status_code == 200, reply.content
        return [row["id"] for row in reply.json()]

    def test_newest_detection_first_across_paths(self) -> None:
        assert self.ids() == [self.rtt.pk, self.noted.pk, self.tput.pk]

    def test_a_mesh_keeps_only_its_own_directed_pairs(self) -> None:
        assert self.ids(mesh="lhc") == [self.rtt.pk, self.tput.pk]

    def test_a_window_keeps_what_overlaps_it(self) -> None:
        day = {"since": (T0 - timedelta(days=1)).isoformat(), "until": (T0 + timedelta(hours=1)).isoformat()}
        assert self.ids(**day) == [self.rtt.pk, self.noted.pk]  # the throughput drop cleared 2 days ago
        assert self.ids(until=(T0 - timedelta(hours=1)).isoformat()) == [self.noted.pk, self.tput.pk]

    def test_kind_metric_and_state(self) -> None:
        assert self.ids(kind="annotation") == [self.noted.pk]
        assert self.ids(metric="throughput", state="cleared") == [self.tput.pk]

    def test_bad_filters_are_refused_with_a_reason(self) -> None:
        client = self.user_client(self.outsider)
        url = reverse("analysis-findings")
        cases = {
            "mesh=nope": "mesh",
            "since=yesterday": "since",
            f"since={T0.isoformat()}&until={(T0 - timedelta(hours=1)).isoformat()}": "until",
            "kind=page": "kind",
            "limit=0": "limit",
            "colour=red": "colour",
        }
        for query, field in cases.items():
            reply = client.get(f"{url}?{query.replace('+', '%2B')}")
            assert reply.status_code == 400, (query, reply.content)
            assert field in reply.json(), (query, reply.json())

    def test_signed_in_only(self) -> None:
        assert self.client.get(reverse("analysis-findings")).status_code in (401, 403)
