"""The analysis against the real database: run ceilings from host-facts history, sweep modes,
findings with their life cycle, the API and the recompute command."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any
from unittest import mock

from django.core.management import CommandError, call_command
from django.test import override_settings
from django.urls import reverse

from analysis import changes, services
from analysis.choices import Diagnosis, FindingKind, FindingMetric, FindingState, RttModeVerdict
from analysis.models import Finding, RunAnalysis, SweepModes
from fathom.testing import FathomTestCase
from inventory.models import Agent, HostFactsSnapshot
from measurements.models import FlowSample, PingSample, Run, ThroughputInterval
from meshes.models import Mesh, MeshMember

MIB = 2**20
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def facts(rmem_max: int, wmem_max: int = 4 * MIB, iperf3: str = "3.12") -> dict[str, Any]:
    return {
        "collected_at": T0.isoformat(),
        "kernel": "6.18.0-1-amd64",
        "iperf3_version": iperf3,
        "interfaces": [],
        "sysctls": {
            "net.ipv4.tcp_rmem": f"4096 87380 {rmem_max}",
            "net.ipv4.tcp_wmem": f"4096 16384 {wmem_max}",
            "net.ipv4.tcp_adv_win_scale": "1",
            "net.ipv4.tcp_congestion_control": "cubic",
        },
    }


def snapshot(agent: Agent, at: datetime, body: dict[str, Any]) -> None:
    HostFactsSnapshot.objects.create(agent=agent, collected_at=at, facts=body, digest=uuid.uuid4().hex)


def throughput_run(
    source: Agent,
    destination: Agent,
    at: datetime,
    rate_bps: float,
    *,
    min_rtt_us: int = 7900,
    mean_rtt_us: int = 8600,
    reverse: bool = False,
    snd_wnd: int | None = 3_300_000,
    snd_cwnd: int | None = 5_000_000,
    retransmits: int = 0,
) -> Run:
    run = Run.objects.create(
        id=uuid.uuid4(),
        started_at=at,
        ended_at=at + timedelta(seconds=13),
        agent_id=source.pk,
        peer_id=destination.pk,
        target=destination.address,
        test_type="throughput",
        test_id="tput",
        status="ok",
        params={"parallel": 1, "window_bytes": 0, "reverse": reverse, "congestion": "cubic", "mss": 0},
        summary={
            "receiver_bits_per_s": rate_bps,
            "min_rtt_us": min_rtt_us,
            "mean_rtt_us": mean_rtt_us,
            "max_snd_wnd": snd_wnd,
            "streams": 1,
            "reverse": reverse,
            "sender_congestion": "cubic",
            "iperf3_version": "3.12",
        },
    )
    ThroughputInterval.objects.bulk_create(
        ThroughputInterval(
            time=at + timedelta(seconds=second + 3),
            run_id=run.id,
            interval_index=second,
            agent_id=source.pk,
            peer_id=destination.pk,
            stream=5,
            start_s=second,
            end_s=second + 1,
            omitted=False,
            sender=True,
            bytes=int(rate_bps / 8),
            bits_per_s=rate_bps,
            retransmits=retransmits,
            snd_cwnd_bytes=snd_cwnd,
            snd_wnd_bytes=snd_wnd,
            rtt_us=mean_rtt_us,
            pmtu=9000,
        )
        for second in range(10)
    )
    return run


def pings(source: Agent, destination: Agent, start: datetime, count: int, rtt_ms: float, every_s: float = 10) -> None:
    run_id = uuid.uuid4()
    PingSample.objects.bulk_create(
        PingSample(
            time=start + timedelta(seconds=index * every_s),
            run_id=run_id,
            sample_index=index,
            agent_id=source.pk,
            peer_id=destination.pk,
            seq=index,
            rtt_ms=rtt_ms + (index % 3) * 0.01,
        )
        for index in range(count)
    )


def flow_sweep(source: Agent, destination: Agent, at: datetime, fast_ms: float, slow_ms: float) -> Run:
    run = Run.objects.create(
        id=uuid.uuid4(),
        started_at=at,
        ended_at=at + timedelta(seconds=2),
        agent_id=source.pk,
        peer_id=destination.pk,
        target=destination.address,
        test_type="flowsweep",
        test_id="sweep",
        status="ok",
    )
    samples = []
    for flow in range(16):
        base = slow_ms if flow % 4 == 3 else fast_ms
        for seq in range(10):
            samples.append(
                FlowSample(
                    time=at + timedelta(milliseconds=flow * 10 + seq),
                    run_id=run.id,
                    sample_index=flow * 10 + seq,
                    agent_id=source.pk,
                    peer_id=destination.pk,
                    flow=flow,
                    src_port=40000 + flow,
                    seq=seq,
                    rtt_ms=base + 0.01 * ((seq * 7 + flow) % 10),
                )
            )
    FlowSample.objects.bulk_create(samples)
    return run


class RunAnalysisTests(FathomTestCase):
    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=1), 300, 7.9)

    def test_default_buffers_are_receive_window_limited_and_history_keeps_the_old_tuning(self) -> None:
        flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=5), 7.8, 11.9)
        run = throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        # Retuned after the run: the run's ceilings must still use the 6 MiB it ran with.
        snapshot(self.frankfurt, T0 + timedelta(hours=2), facts(16 * MIB))
        progress = services.analyze_recent(now=T0 + timedelta(hours=3))
        assert progress.throughput_runs == 1 and progress.sweeps == 1
        analysis = RunAnalysis.objects.get(run_id=run.id)
        assert analysis.diagnosis == Diagnosis.RECEIVE_WINDOW
        assert analysis.ceilings["buffers"]["receive_bytes"] == 6 * MIB
        assert analysis.ceiling_bps is not None and 0.9 < 3.05e9 / analysis.ceiling_bps <= 1.0
        per_mode = [mode["ceiling_bps"] for mode in analysis.ceilings["per_mode"]]
        assert len(per_mode) == 2 and per_mode[0] > 3.0e9 and 2.0e9 < per_mode[1] < 2.3e9
        assert analysis.inputs["receiver"]["tcp_rmem_max_bytes"] == 6 * MIB
        sweep = SweepModes.objects.get()
        assert sweep.verdict == RttModeVerdict.ECMP and sweep.mode_count == 2
        # Idempotent: a second pass finds nothing new to do; a recompute rewrites the same values.
        again = services.analyze_recent(now=T0 + timedelta(hours=3))
        assert again.throughput_runs == 0 and again.sweeps == 0
        before = RunAnalysis.objects.values("ceilings", "diagnosis", "rate_bps", "evidence").get()
        services.analyze_range(T0 - timedelta(hours=1), T0 + timedelta(hours=1), only_missing=False)
        assert RunAnalysis.objects.values("ceilings", "diagnosis", "rate_bps", "evidence").get() == before
        assert RunAnalysis.objects.count() == 1

    def test_reverse_runs_are_analysed_in_the_direction_the_data_flowed(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9, reverse=True)
        services.analyze_recent(now=T0 + timedelta(minutes=5))
        analysis = RunAnalysis.objects.get(run_id=run.id)
        assert (analysis.source_id, analysis.destination_id) == (self.frankfurt.pk, self.athens.pk)

    def test_missing_facts_and_tcp_info_give_unknown_terms_not_a_crash(self) -> None:
        HostFactsSnapshot.objects.all().delete()
        Agent.objects.filter(pk__in=[self.athens.pk, self.frankfurt.pk]).update(host_facts=None)
        PingSample.objects.all().delete()
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9, min_rtt_us=0, mean_rtt_us=0, snd_wnd=None)
        services.analyze_recent(now=T0 + timedelta(minutes=5))
        analysis = RunAnalysis.objects.get(run_id=run.id)
        assert analysis.diagnosis == Diagnosis.UNKNOWN and analysis.ceiling_bps is None
        terms = analysis.ceilings["at_min_rtt"]["terms"]
        assert terms["receive_window"]["reason"] == "receive buffer size unknown"
        assert analysis.inputs["sources"]["sender_facts"] == "no host facts reported before the run"

    def test_a_run_waits_until_it_has_settled(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        ended = run.ended_at
        assert ended is not None
        # Ended 60 s ago: too early for the default 120 s, in time for 30 s.
        assert services.analyze_recent(now=ended + timedelta(seconds=60)).throughput_runs == 0
        with override_settings(ANALYSIS_SETTLE_S=30):
            assert services.analyze_recent(now=ended + timedelta(seconds=60)).throughput_runs == 1

    def test_failed_runs_and_runs_to_unknown_peers_are_skipped(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        Run.objects.filter(id=run.id).update(status="failed")
        assert services.analyze_recent(now=T0 + timedelta(minutes=5)).throughput_runs == 0
        assert not RunAnalysis.objects.exists()


class RunInputTests(FathomTestCase):
    """What the review of the first version found: each case once went wrong."""

    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))

    def analyse(self, run: Run) -> RunAnalysis:
        services.analyze_recent(now=T0 + timedelta(minutes=10))
        return RunAnalysis.objects.get(run_id=run.id)

    def test_a_retune_minutes_after_the_run_does_not_rewrite_it(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        snapshot(self.frankfurt, T0 + timedelta(minutes=5), facts(64 * MIB))
        assert self.analyse(run).ceilings["buffers"]["receive_bytes"] == 6 * MIB

    def test_udp_runs_are_not_analysed_as_tcp(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e8)
        Run.objects.filter(id=run.id).update(params={"udp": True, "bitrate_bps": 100_000_000})
        services.analyze_recent(now=T0 + timedelta(minutes=10))
        assert not RunAnalysis.objects.exists()

    def test_malformed_stored_json_is_unknown_not_a_crash(self) -> None:
        bad = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        Run.objects.filter(id=bad.id).update(summary=["not", "a", "dict"], params="nonsense")
        HostFactsSnapshot.objects.filter(agent=self.frankfurt).update(
            facts={"sysctls": "x", "interfaces": [1, True, {"addresses": "198.18.2.1"}]}
        )
        analysis = self.analyse(bad)
        assert analysis.rate_bps == 1e9  # from the intervals
        assert analysis.ceilings["at_min_rtt"]["terms"]["receive_window"]["rate_bps"] is None

    def test_reverse_as_a_string_is_not_reverse(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        Run.objects.filter(id=run.id).update(params={"reverse": "false"})
        assert self.analyse(run).source_id == self.athens.pk

    def test_a_run_that_fails_to_analyse_does_not_stop_the_others(self) -> None:
        good = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        broken = throughput_run(self.athens, self.frankfurt, T0 + timedelta(seconds=30), 1e9)
        original = services.analyze_throughput_run

        def failing(run: Run, agents: Any = None) -> RunAnalysis | None:
            if run.id == broken.id:
                raise RuntimeError("boom")
            return original(run, agents)

        with (
            self.assertLogs("analysis.services", "ERROR"),
            mock.patch.object(services, "analyze_throughput_run", failing),
        ):
            services.analyze_recent(now=T0 + timedelta(minutes=10))
        assert list(RunAnalysis.objects.values_list("run_id", flat=True)) == [good.id]

    def test_windows_and_in_flight_bytes_are_per_stream(self) -> None:
        # 4 streams x 0.5 Gbit/s at 8.6 ms: 0.54 MB in flight each, far below half of a 4 MiB
        # send buffer: the planning fraction stays, and the send term is 4 x 2 MiB / RTT.
        run = throughput_run(self.athens, self.frankfurt, T0, 2e9, snd_wnd=540_000)
        Run.objects.filter(id=run.id).update(summary={**run.summary, "streams": 4})
        analysis = self.analyse(run)
        assert analysis.ceilings["buffers"]["send_fraction"] == 0.5
        assert analysis.ceilings["buffers"]["receive_fraction_source"] != "observed max_snd_wnd"

    def test_loss_from_ping_needs_enough_samples_and_leaves_outages_out(self) -> None:
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=1), 50, 7.9)
        few = services.path_loss(self.athens.pk, self.frankfurt.pk, T0 - timedelta(hours=6), T0)
        assert few.fraction is None and "too few" in few.source
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=2), 200, 7.9)
        outage = uuid.uuid4()
        PingSample.objects.bulk_create(
            PingSample(
                time=T0 - timedelta(minutes=30, seconds=-index),
                run_id=outage,
                sample_index=index,
                agent_id=self.athens.pk,
                peer_id=self.frankfurt.pk,
                seq=index,
                rtt_ms=None,
            )
            for index in range(10)
        )
        loss = services.path_loss(self.athens.pk, self.frankfurt.pk, T0 - timedelta(hours=6), T0)
        assert loss.fraction == 0.0 and loss.sent == 250 and "1 ping runs lost entirely" in loss.source

    def test_a_loss_ceiling_the_run_beat_is_dropped(self) -> None:
        # 0.5% ping loss puts Mathis far below the 3 Gbit/s this flow carried: not random loss.
        PingSample.objects.bulk_create(
            PingSample(
                time=T0 - timedelta(hours=1, seconds=-index),
                run_id=uuid.UUID(int=index // 10 + 1),
                sample_index=index,
                agent_id=self.athens.pk,
                peer_id=self.frankfurt.pk,
                seq=index,
                rtt_ms=None if index % 200 == 5 else 7.9,
            )
            for index in range(400)
        )
        analysis = self.analyse(throughput_run(self.athens, self.frankfurt, T0, 3.05e9))
        assert analysis.ceilings["at_min_rtt"]["terms"]["loss"]["rate_bps"] is None
        assert analysis.inputs["loss_fraction"] is None and "contradicted" in analysis.inputs["loss_source"]

    def test_congestion_control_falls_back_to_the_sender_sysctl(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        Run.objects.filter(id=run.id).update(
            summary={**run.summary, "sender_congestion": ""}, params={**run.params, "congestion": ""}
        )
        assert self.analyse(run).inputs["congestion_control"] == "cubic"

    def test_reverse_runs_take_retransmits_from_the_summary(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e8, reverse=True)
        ThroughputInterval.objects.filter(run_id=run.id).update(sender=False, retransmits=None)
        Run.objects.filter(id=run.id).update(summary={**run.summary, "retransmits": 120, "sender_bytes": 125_000_000})
        stats = self.analyse(run).interval_stats
        assert stats["retransmits"] == 120 and stats["retransmit_rate"] > 0


def analysis_row(source: Agent, destination: Agent, at: datetime, rate_bps: float, iperf3: str = "3.12") -> None:
    RunAnalysis.objects.create(
        run_id=uuid.uuid4(),
        started_at=at,
        source=source,
        destination=destination,
        streams=1,
        rate_bps=rate_bps,
        ceiling_bps=4e9,
        limit="receive_window",
        diagnosis=Diagnosis.RECEIVE_WINDOW,
        ceilings={},
        inputs={},
        interval_stats={},
        evidence={},
        iperf3_version=iperf3,
    )


@override_settings(ANALYSIS_RTT_WINDOW_S=60, ANALYSIS_RTT_BASELINE_S=3600)
class FindingTests(FathomTestCase):
    def test_an_rtt_step_is_one_finding_that_clears(self) -> None:
        pings(self.athens, self.frankfurt, T0, 360, 40.0)  # an hour at 40 ms
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1), 60, 45.0)  # then 10 min at 45 ms
        now = T0 + timedelta(hours=1, minutes=10)
        assert services.detect_findings(self.athens, self.frankfurt, now=now) == 1
        assert services.detect_findings(self.athens, self.frankfurt, now=now) == 0  # idempotent
        finding = Finding.objects.get()
        assert finding.metric == FindingMetric.RTT and finding.state == FindingState.OPEN
        assert finding.direction == "up" and 4.5 < finding.magnitude < 5.5
        assert abs((finding.started_at - (T0 + timedelta(hours=1))).total_seconds()) <= 120
        pings(self.athens, self.frankfurt, now, 60, 40.0)
        services.detect_findings(self.athens, self.frankfurt, now=now + timedelta(minutes=10))
        finding.refresh_from_db()
        assert finding.state == FindingState.CLEARED and finding.cleared_at is not None
        assert Finding.objects.count() == 1

    def test_a_throughput_drop_with_a_tuning_change_is_an_annotation(self) -> None:
        snapshot(self.frankfurt, T0 - timedelta(days=30), facts(16 * MIB))
        for index in range(20):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 3e9 * (1 + 0.01 * (index % 3)))
        changed_at = T0 + timedelta(hours=6 * 20 - 1)
        snapshot(self.frankfurt, changed_at, facts(6 * MIB))
        for index in range(20, 24):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 2e9)
        services.detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=7))
        finding = Finding.objects.get(metric=FindingMetric.THROUGHPUT)
        assert finding.direction == "down" and -0.4 < finding.magnitude < -0.25
        assert finding.kind == FindingKind.ANNOTATION
        assert "net.ipv4.tcp_rmem" in finding.annotation and "frankfurt" in finding.annotation

    def test_a_throughput_drop_alone_is_an_alarm(self) -> None:
        for index in range(20):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 3e9 * (1 + 0.01 * (index % 3)))
        for index in range(20, 24):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 2e9)
        services.detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=7))
        finding = Finding.objects.get(metric=FindingMetric.THROUGHPUT)
        assert finding.kind == FindingKind.ALARM and finding.state == FindingState.OPEN

    def test_an_episode_spanning_two_cleared_findings_folds_them_into_one(self) -> None:
        first = Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.THROUGHPUT, state="cleared",
            started_at=T0, detected_at=T0, cleared_at=T0 + timedelta(days=1), direction="down",
            baseline=3e9, current=2e9, magnitude=-0.33, unit="relative",
        )  # fmt: skip
        Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.THROUGHPUT, state="cleared",
            started_at=T0 + timedelta(days=2), detected_at=T0 + timedelta(days=2), cleared_at=T0 + timedelta(days=3),
            direction="down", baseline=3e9, current=2e9, magnitude=-0.33, unit="relative",
        )  # fmt: skip
        episode = changes.Episode(
            metric=changes.Metric.THROUGHPUT, rule="throughput_slow", started_at=T0,
            detected_at=T0 + timedelta(days=1), cleared_at=T0 + timedelta(days=4),
            direction=changes.Direction.DOWN, baseline=3e9, current=2e9, magnitude=-0.33,
        )  # fmt: skip
        services.reconcile_findings(self.athens, self.frankfurt, FindingMetric.THROUGHPUT, [episode], T0)
        assert list(Finding.objects.values_list("pk", flat=True)) == [first.pk]

    def test_an_open_finding_no_rule_confirms_is_cleared_not_before_it_started(self) -> None:
        finding = Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.RTT,
            started_at=T0 + timedelta(hours=2), detected_at=T0 + timedelta(hours=2),
            direction="up", baseline=40, current=45, magnitude=5, unit="ms",
        )  # fmt: skip
        services.reconcile_findings(self.athens, self.frankfurt, FindingMetric.RTT, [], T0)
        finding.refresh_from_db()
        assert finding.state == FindingState.CLEARED and finding.cleared_at == finding.started_at

    def test_one_sample_series_yield_nothing(self) -> None:
        analysis_row(self.athens, self.frankfurt, T0, 3e9)
        pings(self.athens, self.frankfurt, T0, 1, 40.0)
        assert services.detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(hours=1)) == 0
        assert not Finding.objects.exists()


class AnalysisApiTests(FathomTestCase):
    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=1), 300, 7.9)
        throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        services.analyze_recent(now=T0 + timedelta(minutes=5))

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
        assert body["modes"]["verdict"] == RttModeVerdict.INSUFFICIENT

    def test_modes_now_come_from_the_newest_sweep_no_throughput_run_disturbed(self) -> None:
        quiet = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=10), 7.8, 11.9)
        # The newest sweep ran during the throughput run at T0: its queue hid the slow member.
        flow_sweep(self.athens, self.frankfurt, T0 + timedelta(seconds=1), 9.0, 9.0)
        services.analyze_recent(now=T0 + timedelta(minutes=5))
        assert SweepModes.objects.count() == 2
        with mock.patch("analysis.services.timezone.now", return_value=T0 + timedelta(minutes=10)):
            modes = services.path_modes_report(self.athens, self.frankfurt, None)
        assert modes["sweep_run_id"] == quiet.id and modes["verdict"] == RttModeVerdict.ECMP
        assert len(modes["modes"]) == 2 and modes["sweeps"] == 2

    def test_a_one_mode_sweep_holds_the_ecmp_modes_on_the_page_the_grid_and_the_ceilings(self) -> None:
        """One lab sweep in 16 hashes at most one flow onto the slow member: the modes stand
        until a second one in a row makes chance (0.4%) the worse explanation."""
        mesh = Mesh.objects.create(name="pair", kind="mesh")
        MeshMember.objects.create(mesh=mesh, agent=self.athens)
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt)
        ecmp = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=30), 7.8, 11.9)
        first = flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=15), 7.8, 7.8)
        services.analyze_recent(now=T0 + timedelta(minutes=5))

        def seen(now: datetime) -> tuple[dict[str, Any], dict[str, Any], SweepModes | None]:
            with mock.patch("analysis.services.timezone.now", return_value=now):
                modes = services.path_modes_report(self.athens, self.frankfurt, None)
                (cell,) = [c for c in services.mesh_grid(mesh)["cells"] if c["source"]["id"] == self.athens.pk]
            return modes, cell, services.sweep_modes_near(self.athens, self.frankfurt, now)

        modes, cell, near = seen(T0 + timedelta(minutes=10))
        assert modes["sweep_run_id"] == ecmp.id and modes["verdict"] == RttModeVerdict.ECMP
        assert modes["held_by_sweeps"] == 1 and "still stand" in modes["choice"]
        assert [round(mode["rtt_ms"]) for mode in modes["modes"]] == [8, 12]
        assert cell["mode_count"] == 2 and cell["rtt_mode_verdict"] == RttModeVerdict.ECMP
        assert near is not None and near.run_id == ecmp.id

        second = flow_sweep(self.athens, self.frankfurt, T0 + timedelta(minutes=15), 7.8, 7.8)
        services.analyze_recent(now=T0 + timedelta(minutes=20))
        modes, cell, near = seen(T0 + timedelta(minutes=20))
        assert modes["sweep_run_id"] == second.id and modes["verdict"] == RttModeVerdict.SINGLE
        assert modes["held_by_sweeps"] == 0 and "gone" in modes["choice"]
        assert cell["mode_count"] == 1 and cell["rtt_mode_verdict"] == RttModeVerdict.SINGLE
        assert near is not None and near.run_id == second.id
        assert first.id != second.id

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
        with self.assertNumQueries(10):  # session, user, mesh, members, agents, 5 analysis queries
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


class AnalyzeCommandTests(FathomTestCase):
    def test_recomputes_a_range(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        out = StringIO()
        call_command("analyze", "--since", "2026-11-20T11:00:00Z", "--until", "2026-11-20T13:00:00Z", stdout=out)
        assert "analysed 1 throughput runs" in out.getvalue()
        assert RunAnalysis.objects.count() == 1

    def test_bad_arguments(self) -> None:
        for args, message in [
            ((), "give --since or --hours"),
            (("--since", "yesterday"), "not an ISO 8601 time"),
            (("--since", "2026-11-20T11:00:00"), "time zone"),
            (("--hours", "-1"), "positive"),
            (("--since", "2026-11-20T11:00:00Z", "--hours", "1"), "not both"),
            (("--since", "2026-11-20T13:00:00Z", "--until", "2026-11-20T11:00:00Z"), "empty"),
        ]:
            with self.assertRaisesMessage(CommandError, message):
                call_command("analyze", *args, stdout=StringIO())
