"""GET /api/v1/analysis/paths/ (every path's current state, the Paths list) and
GET /api/v1/analysis/paths/spark/ (a page's sparklines): shapes, the mesh filter, refused input,
one-way loss each way, and a fixed number of queries whatever the number of paths."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any
from unittest import mock

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.renderers import JSONRenderer

from analysis.api.serializers import PathListSerializer
from analysis.choices import FindingKind
from analysis.models import Finding
from analysis.services import shaping
from analysis.services.path_list import path_list
from analysis.services.run_analyses import analyze_recent
from analysis.tests.services.fixtures import MIB, T0, facts, latency_sessions, pings, snapshot, throughput_run
from fathom.testing import FathomTestCase
from history.backfill import mark_range
from history.refresh import refresh
from inventory.models import Agent
from measurements.models import PathLatestRun
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember

NOW = T0 + timedelta(minutes=5)


def latest(source: Agent, destination: Agent, test_type: str, at: Any, status: str = "ok") -> None:
    PathLatestRun.objects.create(
        source=source, destination=destination, test_type=test_type, run_id=uuid.uuid4(), started_at=at, status=status
    )


class PathListTests(FathomTestCase):
    def setUp(self) -> None:
        self.vienna, _ = self.enroll("vienna", "198.18.3.1")
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(minutes=50), 90, 7.9, every_s=30)
        # Hourly medians for the sparkline: hours 2 and 3 before T0's hour.
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=3), 120, 12.0, every_s=60)
        mark_range(T0 - timedelta(hours=4), NOW, NOW)
        refresh(NOW)
        throughput_run(self.athens, self.frankfurt, T0 - timedelta(minutes=20), 3.05e9)
        analyze_recent(now=NOW)
        latest(self.athens, self.frankfurt, "ping", T0)
        latest(self.athens, self.frankfurt, "throughput", T0 - timedelta(minutes=20))
        latest(self.frankfurt, self.athens, "throughput", T0 - timedelta(hours=2), status="failed")
        latest(self.athens, self.vienna, "ping", T0 - timedelta(minutes=1))
        Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric="rtt", started_at=T0, detected_at=T0,
            direction="up", baseline=7.9, current=12.0, magnitude=0.5, unit="relative",
        )  # fmt: skip
        Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric="throughput", started_at=T0, detected_at=T0,
            direction="down", baseline=9e8, current=5e8, magnitude=-0.4, unit="relative", kind=FindingKind.ANNOTATION,
        )  # fmt: skip
        self.client_ = self.user_client(self.outsider)

    def get(self, url: str, params: Any = None) -> Any:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            return self.client_.get(url, params)

    def rows(self, **params: str) -> dict[tuple[str, str], dict[str, Any]]:
        reply = self.get(reverse("analysis-paths"), params)
        assert reply.status_code == 200, reply.content
        return {(row["source"]["name"], row["destination"]["name"]): row for row in reply.json()["paths"]}

    def test_every_path_with_a_run_has_its_current_state(self) -> None:
        rows = self.rows()
        assert list(rows) == [("athens", "frankfurt"), ("athens", "vienna"), ("frankfurt", "athens")]
        forward = rows[("athens", "frankfurt")]
        assert forward["source"] == {"id": str(self.athens.pk), "name": "athens"}
        assert forward["test_types"] == ["ping", "throughput"]
        assert forward["last_run_status"] == "ok" and forward["last_run_test_type"] == "ping"
        assert forward["last_run_at"] == "2026-11-20T12:00:00Z" and forward["data_age_s"] == 300
        assert forward["loss_fraction"] == 0 and 7.9 <= forward["rtt_median_ms"] <= 7.92
        assert forward["rate_bps"] == 3.05e9 and 0.9 < forward["fraction_of_ceiling"] <= 1.0
        assert forward["diagnosis"] and forward["limit"]
        assert forward["measured_at"] == "2026-11-20T11:40:00Z"
        assert forward["open_findings"] == 1  # alarms only
        failed = rows[("frankfurt", "athens")]
        assert failed["last_run_status"] == "failed" and failed["data_age_s"] == 2 * 3600 + 300
        assert failed["rtt_median_ms"] is None and failed["loss_fraction"] is None and failed["rate_bps"] is None
        assert failed["limit"] is None and failed["open_findings"] == 0

    def test_one_way_loss_each_way_from_the_last_hours_unloaded_latency_intervals(self) -> None:
        rows = self.rows()
        assert all(row["forward_loss_fraction"] is None for row in rows.values())  # no latency test yet
        assert all(row["backward_loss_fraction"] is None for row in rows.values())
        # athens' two-way session towards frankfurt, with loaded minutes left out; a one-way-only
        # session (OWAMP) towards vienna, which has no way back to read.
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=30), 20, forward_lost=6, backward_lost=3)
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=8), 5, forward_lost=300, own_load=True)
        latency_sessions(self.athens, self.vienna, NOW - timedelta(minutes=30), 10, forward_lost=12, one_way_only=True)
        rows = self.rows()
        forward = rows[("athens", "frankfurt")]
        assert forward["forward_loss_fraction"] == 6 / 600 and forward["backward_loss_fraction"] == 3 / 594
        # The way back is read from athens' session, as the grid's frankfurt -> athens cell.
        reverse_row = rows[("frankfurt", "athens")]
        assert reverse_row["forward_loss_fraction"] == 3 / 594 and reverse_row["backward_loss_fraction"] == 6 / 600
        one_way = rows[("athens", "vienna")]
        assert one_way["forward_loss_fraction"] == 12 / 600 and one_way["backward_loss_fraction"] is None

    def test_the_view_renders_what_the_serializer_would(self) -> None:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            body = shaping.path_list(path_list())
        assert JSONRenderer().render(body) == JSONRenderer().render(PathListSerializer(body).data)
        served = self.get(reverse("analysis-paths")).json()
        assert served == json.loads(JSONRenderer().render(body))

    def test_a_mesh_keeps_its_pairs_and_an_unknown_mesh_is_a_404(self) -> None:
        mesh = Mesh.objects.create(name="lhc", kind=MeshKind.DISJOINT)
        MeshMember.objects.create(mesh=mesh, agent=self.athens, side=MemberSide.A)
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt, side=MemberSide.B)
        assert list(self.rows(mesh="lhc")) == [("athens", "frankfurt"), ("frankfurt", "athens")]
        reply = self.get(reverse("analysis-paths"), {"mesh": "nowhere"})
        assert reply.status_code == 404 and "nowhere" in reply.json()["detail"]
        reply = self.get(reverse("analysis-paths"), {"mesh": "lhc", "colour": "red"})
        assert reply.status_code == 400 and "colour" in reply.json()

    def test_no_paths_is_an_empty_list(self) -> None:
        PathLatestRun.objects.all().delete()
        assert self.rows() == {}

    def test_a_fixed_number_of_queries_whatever_the_number_of_paths(self) -> None:
        url = reverse("analysis-paths")
        with CaptureQueriesContext(connection) as few:
            assert self.get(url).status_code == 200
        for index in range(4):
            agent, _ = self.enroll(f"extra-{index}", f"198.18.9.{index + 1}")
            latest(agent, self.athens, "ping", T0)
            latest(self.frankfurt, agent, "throughput", T0)
        with CaptureQueriesContext(connection) as many:
            reply = self.get(url)
        assert len(reply.json()["paths"]) == 3 + 8
        assert len(many) == len(few), [query["sql"][:80] for query in many.captured_queries]


class PathSparkTests(FathomTestCase):
    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=3), 120, 12.0, every_s=60)
        pings(self.athens, self.frankfurt, T0 - timedelta(minutes=30), 30, 8.0, every_s=60)
        mark_range(T0 - timedelta(hours=4), NOW, NOW)
        refresh(NOW)
        for hours in (30, 6):
            throughput_run(self.athens, self.frankfurt, T0 - timedelta(hours=hours), 3.05e9 - hours * 1e7)
        analyze_recent(now=NOW)
        self.client_ = self.user_client(self.outsider)

    def get(self, *pairs: str) -> Any:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            return self.client_.get(reverse("analysis-path-sparks"), {"pair": list(pairs)})

    def test_hourly_rtt_medians_and_the_newest_runs_oldest_first(self) -> None:
        forward = f"{self.athens.pk}:{self.frankfurt.pk}"
        unknown = f"{uuid.uuid4()}:{self.frankfurt.pk}"
        reply = self.get(forward, unknown)
        assert reply.status_code == 200, reply.content
        body = reply.json()
        assert body["step_s"] == 3600 and body["start"] == "2026-11-19T13:00:00Z"
        spark, empty = body["sparks"]
        assert (spark["source"], spark["destination"]) == (str(self.athens.pk), str(self.frankfurt.pk))
        rtt = spark["rtt_p50_ms"]
        assert len(rtt) == 24 and rtt[:20] == [None] * 20
        # 09:00 and 10:00 closed hours from the hourly rollups; 11:00 the hour of 8 ms pings.
        assert [round(value) for value in rtt[20:23]] == [12, 12, 8] and rtt[23] is None
        assert [run["rate_bps"] for run in spark["runs"]] == [3.05e9 - 30e7, 3.05e9 - 6e7]
        assert spark["runs"][0]["started_at"] == "2026-11-19T06:00:00Z"
        assert empty["rtt_p50_ms"] == [None] * 24 and empty["runs"] == []

    def test_malformed_or_too_many_pairs_are_refused_naming_them(self) -> None:
        good = f"{self.athens.pk}:{self.frankfurt.pk}"
        for pairs, expected in (
            ((good, "athens:frankfurt"), "'athens:frankfurt'"),
            ((f"{self.athens.pk}",), str(self.athens.pk)),
            ((), "pair"),
            ((good,) * 41, "at most 40 pairs"),
        ):
            reply = self.get(*pairs)
            assert reply.status_code == 400, reply.content
            assert expected in json.dumps(reply.json()), reply.json()

    def test_a_fixed_number_of_queries_whatever_the_number_of_pairs(self) -> None:
        with CaptureQueriesContext(connection) as one:
            assert self.get(f"{self.athens.pk}:{self.frankfurt.pk}").status_code == 200
        with CaptureQueriesContext(connection) as many:
            reply = self.get(*(f"{uuid.uuid4()}:{uuid.uuid4()}" for _ in range(40)))
        assert reply.status_code == 200 and len(reply.json()["sparks"]) == 40
        assert len(many) == len(one)
