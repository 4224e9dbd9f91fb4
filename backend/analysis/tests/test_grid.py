"""The mesh grid: every metric a cell shows (one-way loss each way from latency sessions), stale
against the mesh's threshold, a fixed number of queries whatever the mesh size, and a clear body
for a mesh with one agent or none."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any
from unittest import mock

from django.core.cache import cache
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.renderers import JSONRenderer

from analysis.api.serializers import MeshGridSerializer
from analysis.services import shaping
from analysis.services.grid import mesh_grid
from analysis.services.run_analyses import analyze_recent
from analysis.services.snapshots import grid_key, refresh_snapshots
from analysis.tests.services.fixtures import MIB, T0, facts, latency_sessions, pings, snapshot, throughput_run
from fathom.testing import FathomTestCase
from history.backfill import mark_range
from history.refresh import refresh
from measurements.models import PathLatestRun, PingSample
from meshes.models import Mesh, MeshMember, MeshTest
from meshes.thresholds import STALE_FLOOR_S

NOW = T0 + timedelta(minutes=5)


class MeshGridTests(FathomTestCase):
    def setUp(self) -> None:
        self.mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=self.mesh, agent=self.athens)
        MeshMember.objects.create(mesh=self.mesh, agent=self.frankfurt)
        MeshTest.objects.create(mesh=self.mesh, name="ping", test_type="ping", spec={"count": 5}, interval_s=60)
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(minutes=50), 90, 7.9, every_s=30)
        PingSample.objects.bulk_create(
            PingSample(
                time=T0 - timedelta(minutes=10, seconds=index),
                run_id=uuid.uuid4(),
                sample_index=0,
                source_id=self.athens.pk,
                destination_id=self.frankfurt.pk,
                seq=1000 + index,
                rtt_ms=None,
            )
            for index in range(10)
        )
        # The grid reads the last hour's pings from the minute rollups, as the refresh keeps them.
        mark_range(T0 - timedelta(hours=2), NOW, NOW)
        refresh(NOW)
        run = throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        analyze_recent(now=NOW)
        PathLatestRun.objects.create(
            source=self.athens,
            destination=self.frankfurt,
            test_type="ping",
            run_id=uuid.uuid4(),
            started_at=T0,
            status="ok",
        )
        PathLatestRun.objects.create(
            source=self.athens,
            destination=self.frankfurt,
            test_type="throughput",
            run_id=run.id,
            started_at=T0 - timedelta(minutes=1),
            status="ok",
        )
        PathLatestRun.objects.create(
            source=self.frankfurt,
            destination=self.athens,
            test_type="throughput",
            run_id=uuid.uuid4(),
            started_at=T0 - timedelta(hours=2),
            status="failed",
        )

    def grid(self, mesh: Mesh | None = None) -> dict[str, Any]:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            return shaping.mesh_grid(mesh_grid(mesh or self.mesh))

    def cells(self, body: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(cell["source"]["name"], cell["destination"]["name"]): cell for cell in body["cells"]}

    def test_a_cell_holds_every_metric_the_switch_offers(self) -> None:
        forward = self.cells(self.grid())[("athens", "frankfurt")]
        assert 0.9 < forward["fraction_of_ceiling"] <= 1.0 and forward["rate_bps"] == 3.05e9
        assert forward["loss_fraction"] == 10 / 100
        assert forward["rtt_median_ms"] is not None and 7.9 <= forward["rtt_median_ms"] <= 7.92
        assert forward["last_run_status"] == "ok" and forward["last_run_test_type"] == "ping"
        assert forward["last_run_at"] == "2026-11-20T12:00:00Z"  # the newest of any kind, not the throughput run
        assert forward["measured_at"] == "2026-11-20T12:00:00Z"
        assert forward["data_age_s"] == 300 and forward["stale"] is False

    def test_a_cell_reads_its_directions_one_way_loss_in_the_last_hour_unloaded(self) -> None:
        cells = self.cells(self.grid())
        assert cells[("athens", "frankfurt")]["forward_loss_fraction"] is None  # no latency test: no data
        # athens' session towards frankfurt: 1 % lost on the way there, 0.5 % of what arrived lost
        # on the way back. Loaded minutes, and intervals that ended over an hour ago, lose far more.
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=40), 20, forward_lost=6, backward_lost=3)
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=10), 5, forward_lost=300, own_load=True)
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=70), 10, forward_lost=600)
        cells = self.cells(self.grid())
        assert cells[("athens", "frankfurt")]["forward_loss_fraction"] == 6 / 600
        # frankfurt runs no session: its direction is read from athens' way back.
        assert cells[("frankfurt", "athens")]["forward_loss_fraction"] == 3 / 594
        # Once it runs one, the direction is its own session's forward loss.
        latency_sessions(self.frankfurt, self.athens, NOW - timedelta(minutes=40), 10, forward_lost=12)
        assert self.cells(self.grid())[("frankfurt", "athens")]["forward_loss_fraction"] == 12 / 600

    def test_a_full_bottleneck_reads_as_full_not_as_a_share_of_the_hosts_ceiling(self) -> None:
        # Hosts tuned for 10 Gbit/s behind a 500 Mbit/s bottleneck: the hosts' ceiling is far
        # above, but the pipe is full. Against the hosts' ceiling it read 5 % and turned red.
        snapshot(self.athens, T0 - timedelta(hours=1), facts(512 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(hours=1), facts(512 * MIB))
        throughput_run(
            self.frankfurt, self.athens, T0 + timedelta(seconds=30), 5e8, snd_wnd=200_000_000, snd_cwnd=600_000
        )
        analyze_recent(now=NOW)
        backward = self.cells(self.grid())[("frankfurt", "athens")]
        assert backward["diagnosis"] == "capacity", backward
        assert backward["ceiling_bps"] == 5e8 and backward["fraction_of_ceiling"] == 1.0

    def test_old_data_is_stale_with_its_age_and_no_data_is_not_stale(self) -> None:
        body = self.grid()
        assert body["thresholds"]["stale_after_s"] == STALE_FLOOR_S  # 3 x 60 s is under the floor
        reverse_cell = self.cells(body)[("frankfurt", "athens")]
        assert reverse_cell["last_run_status"] == "failed" and reverse_cell["last_run_test_type"] == "throughput"
        assert reverse_cell["data_age_s"] == 2 * 3600 + 300 and reverse_cell["stale"] is True
        assert reverse_cell["rtt_median_ms"] is None and reverse_cell["loss_fraction"] is None

        self.mesh.thresholds = {"stale_after_s": 3 * 3600, "rtt_warn_ms": 5, "rtt_crit_ms": 9}
        self.mesh.save()
        body = self.grid(Mesh.objects.get(pk=self.mesh.pk))
        assert self.cells(body)[("frankfurt", "athens")]["stale"] is False
        assert body["thresholds"]["rtt_warn_ms"] == 5 and body["thresholds"]["fraction_good"] == 0.9

        PathLatestRun.objects.all().delete()
        silent = self.cells(self.grid(Mesh.objects.get(pk=self.mesh.pk)))[("frankfurt", "athens")]
        assert silent["last_run_at"] is None and silent["data_age_s"] is None and silent["stale"] is False

    def test_the_view_renders_what_the_serializer_would(self) -> None:
        body = self.grid()
        assert JSONRenderer().render(body) == JSONRenderer().render(MeshGridSerializer(body).data)
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            served = self.user_client(self.outsider).get(reverse("analysis-mesh-grid", args=["pair"])).json()
        assert served == json.loads(JSONRenderer().render(body))

    def test_the_grid_takes_a_fixed_number_of_queries_whatever_the_mesh_size(self) -> None:
        url = reverse("analysis-mesh-grid", args=["pair"])
        client = self.user_client(self.outsider)
        with CaptureQueriesContext(connection) as two:
            assert client.get(url).status_code == 200
        for index in range(4):
            agent, _ = self.enroll(f"extra-{index}", f"198.18.9.{index + 1}")
            MeshMember.objects.create(mesh=self.mesh, agent=agent)
        with CaptureQueriesContext(connection) as six:
            response = client.get(url)
        assert response.status_code == 200 and len(response.json()["cells"]) == 6 * 5
        assert len(six) == len(two), [query["sql"][:80] for query in six.captured_queries]

    def test_a_mesh_with_one_agent_or_none_has_an_empty_grid_not_an_error(self) -> None:
        client = self.user_client(self.outsider)
        lonely = Mesh.objects.create(name="lonely", kind="mesh")
        for expected_agents in (0, 1):
            response = client.get(reverse("analysis-mesh-grid", args=["lonely"]))
            assert response.status_code == 200, response.content
            body = response.json()
            assert body["cells"] == [] and body["agents"] == []
            assert body["thresholds"]["stale_after_s"] == STALE_FLOOR_S
            if expected_agents == 0:
                MeshMember.objects.create(mesh=lonely, agent=self.athens)


@override_settings(SNAPSHOT_TTL_S=150)
class GridSnapshotTests(FathomTestCase):
    """The grid is served from a snapshot beat refreshes each minute; an edit is served at once."""

    def setUp(self) -> None:
        self.mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=self.mesh, agent=self.athens)
        MeshMember.objects.create(mesh=self.mesh, agent=self.frankfurt)
        self.url = reverse("analysis-mesh-grid", args=["pair"])

    def test_a_second_request_reads_the_snapshot_and_computes_nothing(self) -> None:
        client = self.user_client(self.outsider)
        first = client.get(self.url)
        with CaptureQueriesContext(connection) as again:
            second = client.get(self.url)
        assert first.status_code == second.status_code == 200
        assert second.content == first.content
        # The session and the mesh lookup only: no grid query.
        assert not any("measurements_" in query["sql"] or "history_" in query["sql"] for query in again), [
            query["sql"][:80] for query in again.captured_queries
        ]

    def test_a_threshold_edit_is_served_at_once(self) -> None:
        client = self.user_client(self.outsider)
        assert client.get(self.url).json()["thresholds"]["rtt_warn_ms"] == 100
        reply = self.user_client(self.operator).patch(
            "/api/v1/meshes/pair/", {"thresholds": {"rtt_warn_ms": 20}}, format="json"
        )
        assert reply.status_code == 200, reply.content
        assert client.get(self.url).json()["thresholds"]["rtt_warn_ms"] == 20

    def test_beat_refreshes_every_enabled_mesh(self) -> None:
        off = Mesh.objects.create(name="off", kind="mesh", enabled=False)
        assert refresh_snapshots() == Mesh.objects.filter(enabled=True).count()
        assert isinstance(cache.get(grid_key(self.mesh)), bytes)
        assert cache.get(grid_key(off)) is None
