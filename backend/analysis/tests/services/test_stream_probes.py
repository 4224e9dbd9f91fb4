"""A single stream far below its ceilings gets a run of several streams in its next slot, the
agent's plan carries it within the contract, and the comparison comes back on the path
report; the probe never votes in the path's label nor reads as a throughput change."""

from __future__ import annotations

from datetime import timedelta

from django.test import override_settings
from django.utils import timezone

from analysis.choices import Diagnosis
from analysis.models import RunAnalysis
from analysis.services.paths import path_report
from analysis.services.run_analyses import analyze_throughput_run
from analysis.services.stream_probes import latest_streams_probe, request_streams_probe
from analysis.tests.services.fixtures import throughput_run
from core import contract
from fathom.testing import FathomTestCase
from history.buckets import MINUTE
from history.marks import Mark, mark
from history.models import Kind, ThroughputMinute
from history.refresh import refresh
from inventory.models import Agent
from measurements.models import Run
from meshes.choices import SlotState
from meshes.models import MeshTest, Slot
from meshes.probes import PROBE_STREAMS

PLAN_URL = "/api/v1/agent/plan/"


class StreamsProbeTests(FathomTestCase):
    ingest_now = None

    def setUp(self) -> None:
        self.now = timezone.now().replace(microsecond=0)
        self.test = MeshTest.objects.get(mesh__name="default", name="throughput")

    def single_runs(self, rate_bps: float, count: int = 3, ceiling_bps: float = 100e6) -> list[Run]:
        """athens -> frankfurt's analysed single-stream runs, the newest an hour ago."""
        runs = []
        for index in range(count):
            run = throughput_run(self.athens, self.frankfurt, self.now - timedelta(hours=1 + index), rate_bps)
            RunAnalysis.objects.create(
                run_id=run.id, started_at=run.started_at, source=self.athens, destination=self.frankfurt,
                streams=1, rate_bps=rate_bps, ceiling_bps=ceiling_bps, limit="receive_window",
                diagnosis=Diagnosis.BELOW_CEILINGS, ceilings={}, inputs={}, interval_stats={}, evidence={},
            )  # fmt: skip
            runs.append(run)
        return runs

    def slot(self, client: Agent, peer: Agent, in_s: int, **spec: object) -> Slot:
        start = self.now + timedelta(seconds=in_s)
        return Slot.objects.create(
            mesh_test=self.test, source=client, destination=peer, test_type="throughput", period_start=start,
            start_at=start, end_at=start + timedelta(seconds=30),
            spec={"duration_s": 20, "omit_s": 0, "parallel": 1, "window_bytes": 0, "reverse": False, "udp": False,
                  "bitrate_bps": 0, "congestion": "cubic", "mss": 0, "fq_rate_bps": 0, "port": 0,
                  "path_rtt_ms": 20.0, **spec},
        )  # fmt: skip

    def probe_run(self, rate_bps: float, ago_s: int = 600) -> Run:
        run = throughput_run(self.athens, self.frankfurt, self.now - timedelta(seconds=ago_s), rate_bps)
        Run.objects.filter(id=run.id).update(params={**run.params, "parallel": PROBE_STREAMS, "streams_probe": True})
        run.refresh_from_db()
        return run

    def test_the_next_tcp_slot_in_the_datas_direction_becomes_a_probe_the_plan_carries(self) -> None:
        self.single_runs(8e6)  # 8 of 100 Mbit/s: far below
        too_soon = self.slot(self.athens, self.frankfurt, 30)  # inside the planning lead
        ramp = self.slot(self.athens, self.frankfurt, 200, ramp_bps=[1_000_000, 2_000_000, 4_000_000], udp=True)
        other_way = self.slot(self.frankfurt, self.athens, 300)
        probe = self.slot(self.athens, self.frankfurt, 400)
        client = self.agent_client(self.athens, self.athens_credential)
        etag = client.get(PLAN_URL)["ETag"]
        outcome = request_streams_probe(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id == str(probe.pk), outcome
        probe.refresh_from_db()
        spec = probe.spec
        assert (spec["parallel"], spec["streams_probe"], spec["duration_s"]) == (PROBE_STREAMS, True, 20)
        for untouched in (too_soon, ramp, other_way):
            untouched.refresh_from_db()
            assert "streams_probe" not in untouched.spec
        reply = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert reply.status_code == 200
        body = reply.json()
        assert not list(contract.validator("plan.v1.schema.json").iter_errors(body))
        assert [slot["spec"]["streams_probe"] for slot in body["slots"] if slot["id"] == str(probe.pk)] == [True]
        # Asked again: planned already; once it ran, not again within the interval.
        assert request_streams_probe(self.athens, self.frankfurt, self.now).reason == "a probe is already planned"
        measured = self.probe_run(30e6, ago_s=0)
        Slot.objects.filter(pk=probe.pk).update(state=SlotState.OK, run_id=measured.id)
        assert request_streams_probe(self.athens, self.frankfurt, self.now).reason == "a probe ran in the last 24 h"

    def test_a_probe_that_measured_nothing_is_tried_again_up_to_three_times(self) -> None:
        self.single_runs(8e6)
        failed = self.slot(self.athens, self.frankfurt, -700, streams_probe=True, parallel=PROBE_STREAMS)
        Slot.objects.filter(pk=failed.pk).update(state=SlotState.FAILED, reason="iperf3: unable to connect")
        self.slot(self.athens, self.frankfurt, 300)
        retry = request_streams_probe(self.athens, self.frankfurt, self.now)
        assert retry.slot_id is not None, retry
        # That one was missed, and a third ran the slot's earlier single stream (its client had
        # fetched the plan before the change): three that measured nothing, none until the next
        # interval (a host that cannot run several streams is not asked in every slot).
        Slot.objects.filter(pk=retry.slot_id).update(start_at=self.now - timedelta(seconds=400), state=SlotState.MISSED)
        stale = self.slot(self.athens, self.frankfurt, -100, streams_probe=True, parallel=PROBE_STREAMS)
        single = throughput_run(self.athens, self.frankfurt, stale.start_at, 8e6)
        Slot.objects.filter(pk=stale.pk).update(state=SlotState.OK, run_id=single.id)
        self.slot(self.athens, self.frankfurt, 400)
        outcome = request_streams_probe(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id is None and outcome.reason == (
            "3 probes failed in the last 24 h; the latest: the agent ran the slot's earlier test:"
            " it had fetched its plan before the change"
        ), outcome
        self.now += timedelta(hours=25)
        self.single_runs(8e6)
        tomorrow = self.slot(self.athens, self.frankfurt, 200)
        assert request_streams_probe(self.athens, self.frankfurt, self.now).slot_id == str(tomorrow.pk)

    def test_no_probe_near_the_ceiling_without_runs_or_when_off(self) -> None:
        self.slot(self.athens, self.frankfurt, 400)
        assert request_streams_probe(self.athens, self.frankfurt, self.now).reason.startswith("fewer than 3")
        self.single_runs(90e6)
        assert "not far below" in request_streams_probe(self.athens, self.frankfurt, self.now).reason
        with override_settings(STREAMS_PROBE_EVERY_H=0):
            assert "off" in request_streams_probe(self.athens, self.frankfurt, self.now).reason
        assert not Slot.objects.filter(spec__has_key="streams_probe").exists()

    def test_a_probe_is_compared_never_analysed_as_the_paths_run(self) -> None:
        self.single_runs(8e6)
        probe = self.probe_run(30e6)
        # Not a run of the path: no analysis row, so no vote in its label and no "jump".
        assert analyze_throughput_run(probe) is None
        assert not RunAnalysis.objects.filter(run_id=probe.id).exists()
        found = latest_streams_probe(self.athens, self.frankfurt, self.now)
        assert found is not None and found.run.id == probe.id and found.verdict.kind == "per_flow", found
        # The other direction has no probe; an older single-stream baseline than a day is none.
        assert latest_streams_probe(self.frankfurt, self.athens, self.now) is None
        report = path_report(self.athens, self.frankfurt, goal_bps=None, daily_volume_bytes=2**40, runs_limit=10)
        assert report.streams_probe is not None and report.streams_probe.verdict.kind == "per_flow"
        assert report.path_label is not None and report.path_label.diagnosis is Diagnosis.BELOW_CEILINGS
        self.client.force_login(self.owner)
        reply = self.client.get(
            "/api/v1/analysis/path/", {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)}
        )
        assert reply.status_code == 200, reply.content
        shown = reply.json()["streams_probe"]
        assert (shown["kind"], shown["streams"], shown["single_runs"]) == ("per_flow", PROBE_STREAMS, 3), shown

    def test_a_probe_is_left_out_of_the_throughput_rollups(self) -> None:
        self.now = MINUTE.floor(self.now) + timedelta(seconds=10)  # both runs in one minute
        single = self.single_runs(8e6, count=1)[0]
        probe = self.probe_run(30e6, ago_s=3600 - 30)  # the single run's minute
        minute = MINUTE.floor(single.started_at)
        assert MINUTE.floor(probe.started_at) == minute
        mark(MINUTE, [Mark(Kind.THROUGHPUT, self.athens.pk, self.frankfurt.pk, 4, minute)])
        refresh(self.now + timedelta(minutes=5))
        row = ThroughputMinute.objects.get(source_id=self.athens.pk, bucket=minute)
        assert (row.runs_ok, row.median_bps) == (1, 8e6)
