"""The analysis API: one path in depth, a mesh as a grid, findings; and the modes the page
and the grid show."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

from django.urls import reverse

from analysis.api.serializers import PathAnalysisSerializer
from analysis.choices import Diagnosis, FindingMetric, RttModeVerdict
from analysis.models import Finding, RunAnalysis, SweepModes
from analysis.services import shaping
from analysis.services.grid import mesh_grid
from analysis.services.paths import path_report
from analysis.services.run_analyses import analyze_recent
from analysis.services.sweep_modes import path_modes_now, sweep_modes_near
from analysis.tests.services.fixtures import MIB, T0, facts, flow_sweep, pings, snapshot, throughput_run, udp_run
from fathom.testing import FathomTestCase
from meshes.models import Mesh, MeshMember


class AnalysisApiTests(FathomTestCase):
    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=1), 300, 7.9)
        throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        analyze_recent(now=T0 + timedelta(minutes=5))

    def path_url(self, **params: Any) -> str:
        query = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **params}
        return reverse("analysis-path") + "?" + "&".join(f"{key}={value}" for key, value in query.items())

    def test_path_report(self) -> None:
        response = self.user_client(self.outsider).get(self.path_url(goal_bps=1e10))
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["runs"][0]["diagnosis"] == Diagnosis.RECEIVE_WINDOW
        assert body["ceilings_now"]["at_min_rtt"]["limit"] == "receive_window"
        assert {item["setting"] for item in body["advice"]} >= {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
        plan = body["capacity_plan"]
        assert plan["daily_volume_bytes"] == 13 * 2**40 and plan["backlog_grows"] is False
        assert plan["shared_ceiling_bps"] is None  # no link speed in the host facts
        assert body["modes"]["verdict"] == RttModeVerdict.INSUFFICIENT
        assert body["path_label"] == {
            "diagnosis": "receive_window",
            "agreeing_runs": 1,
            "runs": 1,
            "share": 1.0,
            "summary": "receive window (1 of 1 runs)",
        }

    def test_a_policed_path_is_labelled_by_its_runs_consensus_with_the_policer_rate_in_the_advice(self) -> None:
        latest = RunAnalysis.objects.get()
        retuned = {**latest.inputs, "receiver": {**latest.inputs["receiver"], "tcp_rmem_max_bytes": 4 * MIB}}
        # Three earlier runs with the same options and tuning, called a policer; before them a
        # run on other tuning, and older runs behind it: those are another series.
        for hours, diagnosis, inputs in (
            (1, Diagnosis.POLICER, latest.inputs),
            (2, Diagnosis.POLICER, latest.inputs),
            (3, Diagnosis.POLICER, latest.inputs),
            (4, Diagnosis.CAPACITY, retuned),
            (5, Diagnosis.CAPACITY, latest.inputs),
            (6, Diagnosis.CAPACITY, latest.inputs),
        ):
            RunAnalysis.objects.create(
                run_id=uuid.uuid4(),
                started_at=T0 - timedelta(hours=hours),
                source=self.athens,
                destination=self.frankfurt,
                streams=1,
                options_key=latest.options_key,
                rate_bps=60e6 + hours * 1e6,
                ceiling_bps=3e9,
                limit="receive_window",
                diagnosis=diagnosis,
                ceilings={},
                inputs=inputs,
                interval_stats={},
                evidence={},
            )
        # Another stream count is another series: it does not vote.
        RunAnalysis.objects.create(
            run_id=uuid.uuid4(),
            started_at=T0 - timedelta(minutes=5),
            source=self.athens,
            destination=self.frankfurt,
            streams=8,
            options_key="P8/w0/cubic",
            rate_bps=1e9,
            ceiling_bps=3e9,
            limit="link",
            diagnosis=Diagnosis.CAPACITY,
            ceilings={},
            inputs={},
            interval_stats={},
            evidence={},
        )
        # Paced UDP at 100 Mbit/s, one forward (iperf3 -R from the far end), one the other way.
        udp_run(self.frankfurt, self.athens, T0 - timedelta(hours=2), 100e6, 90e6, 10.0, reverse=True)
        udp_run(self.frankfurt, self.athens, T0 - timedelta(hours=3), 100e6, 20e6, 80.0)
        with mock.patch("django.utils.timezone.now", return_value=T0 + timedelta(minutes=10)):
            report = path_report(
                self.athens, self.frankfurt, goal_bps=1e9, daily_volume_bytes=13 * 2**40, runs_limit=20
            )
        assert report.path_label is not None and report.path_label.summary == "policer (3 of 4 runs)"
        body = PathAnalysisSerializer(shaping.path_analysis(self.athens, self.frankfurt, report)).data
        assert body["path_label"]["diagnosis"] == Diagnosis.POLICER and body["path_label"]["share"] == 0.75
        first = body["advice"][0]
        assert (first["kind"], first["setting"], first["value"]) == (
            "estimate",
            "policer rate",
            "about 90.0 Mbit/s, an estimate",
        )
        assert "1 paced UDP run offering 100.0 Mbit/s" in first["reason"]
        plan = body["capacity_plan"]
        assert plan["rate_bps"] == 62e6 and plan["shared_ceiling_bps"] == 90e6
        assert plan["streams_needed"] == 2 and "more only share it" in plan["reason"]

    def test_modes_now_come_from_the_newest_sweep_no_throughput_run_disturbed(self) -> None:
        quiet = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=10), 7.8, 11.9)
        # The newest sweep ran during the throughput run at T0: its queue hid the slow member.
        flow_sweep(self.athens, self.frankfurt, T0 + timedelta(seconds=1), 9.0, 9.0)
        analyze_recent(now=T0 + timedelta(minutes=5))
        assert SweepModes.objects.count() == 2
        with mock.patch("django.utils.timezone.now", return_value=T0 + timedelta(minutes=10)):
            modes = shaping.path_modes(path_modes_now(self.athens, self.frankfurt, None))
        assert modes["sweep_run_id"] == quiet.id and modes["verdict"] == RttModeVerdict.ECMP
        assert len(modes["modes"]) == 2 and modes["sweeps"] == 2

    def test_a_one_mode_sweep_holds_the_ecmp_modes_on_the_page_the_grid_and_the_ceilings(self) -> None:
        """One lab sweep in 16 hashes at most one flow onto the slow member: the modes stand
        until one-mode sweeps in a row make chance the worse explanation (after one 12:4
        sweep, the fourth: analysis.modes.held_probability)."""
        mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=mesh, agent=self.athens)
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt)
        ecmp = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=30), 7.8, 11.9)
        first = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=15), 7.8, 7.8)
        analyze_recent(now=T0 + timedelta(minutes=5))

        def seen(now: datetime) -> tuple[dict[str, Any], dict[str, Any], SweepModes | None]:
            with mock.patch("django.utils.timezone.now", return_value=now):
                modes = shaping.path_modes(path_modes_now(self.athens, self.frankfurt, None))
                (cell,) = [
                    c for c in shaping.mesh_grid(mesh_grid(mesh))["cells"] if c["source"]["id"] == str(self.athens.pk)
                ]
            return modes, cell, sweep_modes_near(self.athens, self.frankfurt, now)

        modes, cell, near = seen(T0 + timedelta(minutes=10))
        assert modes["sweep_run_id"] == ecmp.id and modes["verdict"] == RttModeVerdict.ECMP
        assert modes["held_by_sweeps"] == 1 and "still stand" in modes["choice"]
        assert [round(mode["rtt_ms"]) for mode in modes["modes"]] == [8, 12]
        assert cell["mode_count"] == 2 and cell["rtt_mode_verdict"] == RttModeVerdict.ECMP
        assert near is not None and near.run_id == ecmp.id

        later = [flow_sweep(self.athens, self.frankfurt, T0 + timedelta(minutes=m), 7.8, 7.8) for m in (15, 25)]
        analyze_recent(now=T0 + timedelta(minutes=30))
        modes, _cell, _near = seen(T0 + timedelta(minutes=30))
        assert modes["sweep_run_id"] == ecmp.id and modes["held_by_sweeps"] == 3

        last = flow_sweep(self.athens, self.frankfurt, T0 + timedelta(minutes=35), 7.8, 7.8)
        analyze_recent(now=T0 + timedelta(minutes=40))
        modes, cell, near = seen(T0 + timedelta(minutes=40))
        assert modes["sweep_run_id"] == last.id and modes["verdict"] == RttModeVerdict.SINGLE
        assert modes["held_by_sweeps"] == 0 and "gone" in modes["choice"]
        assert cell["mode_count"] == 1 and cell["rtt_mode_verdict"] == RttModeVerdict.SINGLE
        assert near is not None and near.run_id == last.id
        assert first.id not in {sweep.id for sweep in later}

    def test_path_report_rejects_bad_queries(self) -> None:
        client = self.user_client(self.outsider)
        assert client.get(self.path_url(goal_bps="fast")).status_code == 400
        assert client.get(self.path_url(daily_volume_bytes=0)).status_code == 400
        assert client.get(self.path_url(unexpected=1)).status_code == 400
        unknown = reverse("analysis-path") + f"?source={uuid.uuid4()}&destination={self.frankfurt.pk}"
        assert client.get(unknown).status_code == 400
        same = reverse("analysis-path") + f"?source={self.athens.pk}&destination={self.athens.pk}"
        assert client.get(same).status_code == 400
        assert self.client.get(self.path_url()).status_code == 403

    def test_path_without_runs(self) -> None:
        RunAnalysis.objects.all().delete()
        body = self.user_client(self.outsider).get(self.path_url()).json()
        assert body["ceilings_now"] is None and body["runs"] == [] and body["advice"] == []
        assert body["capacity_plan"]["backlog_grows"] is None

    def test_mesh_grid(self) -> None:
        mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=mesh, agent=self.athens)
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt)
        client = self.user_client(self.outsider)
        with self.assertNumQueries(13):  # session, user, mesh, members, tests, agents, 7 analysis queries
            response = client.get(reverse("analysis-mesh-grid", args=["pair"]))
        assert response.status_code == 200
        cells = {(cell["source"]["name"], cell["destination"]["name"]): cell for cell in response.json()["cells"]}
        assert set(cells) == {("athens", "frankfurt"), ("frankfurt", "athens")}
        cell = cells[("athens", "frankfurt")]
        assert cell["diagnosis"] == Diagnosis.RECEIVE_WINDOW and 0.9 < cell["fraction_of_ceiling"] <= 1.0
        assert cells[("frankfurt", "athens")]["rate_bps"] is None
        assert client.get(reverse("analysis-mesh-grid", args=["nope"])).status_code == 404

    def test_findings_list_filters_and_validates(self) -> None:
        Finding.objects.create(
            source=self.athens,
            destination=self.frankfurt,
            metric=FindingMetric.RTT,
            started_at=T0,
            detected_at=T0,
            direction="up",
            baseline=40,
            current=45,
            magnitude=5,
            unit="ms",
        )
        client = self.user_client(self.outsider)
        assert len(client.get(reverse("analysis-findings") + "?state=open").json()) == 1
        assert client.get(reverse("analysis-findings") + "?metric=loss").json() == []
        assert client.get(reverse("analysis-findings") + "?metric=bogus").status_code == 400
        assert client.get(reverse("analysis-findings") + "?source=nope").status_code == 400
