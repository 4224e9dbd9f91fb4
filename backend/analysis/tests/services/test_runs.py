"""Throughput runs and flow sweeps analysed against the real database: ceilings from the
host-facts history, what each run's inputs rest on, and the incremental task."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from unittest import mock

from django.test import override_settings

from analysis.choices import Diagnosis, FindingMetric, RttModeVerdict
from analysis.models import AnalysisPass, RunAnalysis, SweepModes
from analysis.services import run_analyses as run_service
from analysis.services.findings import ALL_METRICS
from analysis.services.inputs import path_loss
from analysis.services.run_analyses import analyze_range, analyze_recent, new_data_window, recently_received_metrics
from analysis.tests.services.fixtures import (
    MIB,
    T0,
    analysis_row,
    facts,
    flow_sweep,
    pings,
    snapshot,
    throughput_run,
)
from fathom.testing import FathomTestCase
from inventory.models import Agent, HostFactsSnapshot
from measurements.models import PingSample, Run, ThroughputInterval


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
        progress = analyze_recent(now=T0 + timedelta(hours=3))
        assert progress.throughput_runs == 1 and progress.sweeps == 1
        analysis = RunAnalysis.objects.get(run_id=run.id)
        assert analysis.diagnosis == Diagnosis.RECEIVE_WINDOW
        assert analysis.ceilings["buffers"]["receive_bytes"] == 6 * MIB
        assert analysis.ceiling_bps is not None and 0.9 < 3.05e9 / analysis.ceiling_bps <= 1.0
        per_mode = [mode["ceiling_bps"] for mode in analysis.ceilings["per_mode"]]
        assert len(per_mode) == 2 and per_mode[0] > 3.0e9 and 2.0e9 < per_mode[1] < 2.3e9
        # The flow's 7.9 ms minimum lies on the fast member: judged unscaled.
        assert analysis.ceilings["member"] == {
            "index": 1, "count": 2, "rtt_ms": analysis.ceilings["at_min_rtt"]["rtt_ms"],
            "ceiling_bps": analysis.ceiling_bps, "scale": 1.0,
        }  # fmt: skip
        assert analysis.inputs["receiver"]["tcp_rmem_max_bytes"] == 6 * MIB
        sweep = SweepModes.objects.get()
        assert sweep.verdict == RttModeVerdict.ECMP and sweep.mode_count == 2
        # Idempotent: a second pass finds nothing new to do; a recompute rewrites the same values.
        again = analyze_recent(now=T0 + timedelta(hours=3))
        assert again.throughput_runs == 0 and again.sweeps == 0
        before = RunAnalysis.objects.values("ceilings", "diagnosis", "rate_bps", "evidence").get()
        analyze_range(T0 - timedelta(hours=1), T0 + timedelta(hours=1), only_missing=False)
        assert RunAnalysis.objects.values("ceilings", "diagnosis", "rate_bps", "evidence").get() == before
        assert RunAnalysis.objects.count() == 1

    def test_a_run_on_the_slow_member_knows_its_member_and_scale(self) -> None:
        flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=5), 7.8, 11.9)
        run = throughput_run(self.athens, self.frankfurt, T0, 2.0e9, min_rtt_us=12000, mean_rtt_us=12400)
        analyze_recent(now=T0 + timedelta(hours=3))
        member = RunAnalysis.objects.get(run_id=run.id).ceilings["member"]
        assert (member["index"], member["count"]) == (2, 2) and abs(member["rtt_ms"] - 11.9) < 0.2
        # Window-limited at both members: the ceiling scales with 1/RTT.
        assert abs(member["scale"] - 7.8 / 11.9) < 0.03

    def test_reverse_runs_are_analysed_in_the_direction_the_data_flowed(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9, reverse=True)
        analyze_recent(now=T0 + timedelta(minutes=5))
        analysis = RunAnalysis.objects.get(run_id=run.id)
        assert (analysis.source_id, analysis.destination_id) == (self.frankfurt.pk, self.athens.pk)

    def test_missing_facts_and_tcp_info_give_unknown_terms_not_a_crash(self) -> None:
        HostFactsSnapshot.objects.all().delete()
        Agent.objects.filter(pk__in=[self.athens.pk, self.frankfurt.pk]).update(host_facts=None)
        PingSample.objects.all().delete()
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9, min_rtt_us=0, mean_rtt_us=0, snd_wnd=None)
        analyze_recent(now=T0 + timedelta(minutes=5))
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
        assert analyze_recent(now=ended + timedelta(seconds=60)).throughput_runs == 0
        with override_settings(ANALYSIS_SETTLE_S=30):
            assert analyze_recent(now=ended + timedelta(seconds=60)).throughput_runs == 1

    def test_failed_runs_and_runs_to_unknown_peers_are_skipped(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e9)
        Run.objects.filter(id=run.id).update(status="failed")
        assert analyze_recent(now=T0 + timedelta(minutes=5)).throughput_runs == 0
        assert not RunAnalysis.objects.exists()


class RunInputTests(FathomTestCase):
    """What the review of the first version found: each case once went wrong."""

    def setUp(self) -> None:
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))

    def analyse(self, run: Run) -> RunAnalysis:
        analyze_recent(now=T0 + timedelta(minutes=10))
        return RunAnalysis.objects.get(run_id=run.id)

    def test_a_retune_minutes_after_the_run_does_not_rewrite_it(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 3.05e9)
        snapshot(self.frankfurt, T0 + timedelta(minutes=5), facts(64 * MIB))
        assert self.analyse(run).ceilings["buffers"]["receive_bytes"] == 6 * MIB

    def test_udp_runs_are_not_analysed_as_tcp(self) -> None:
        run = throughput_run(self.athens, self.frankfurt, T0, 1e8)
        Run.objects.filter(id=run.id).update(params={"udp": True, "bitrate_bps": 100_000_000})
        analyze_recent(now=T0 + timedelta(minutes=10))
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
        original = run_service.analyze_throughput_run

        def failing(run: Run, agents: Any = None) -> RunAnalysis | None:
            if run.id == broken.id:
                raise RuntimeError("boom")
            return original(run, agents)

        with (
            self.assertLogs("analysis.services", "ERROR"),
            mock.patch.object(run_service, "analyze_throughput_run", failing),
        ):
            analyze_recent(now=T0 + timedelta(minutes=10))
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
        few = path_loss(self.athens.pk, self.frankfurt.pk, T0 - timedelta(hours=6), T0)
        assert few.fraction is None and "too few" in few.source
        pings(self.athens, self.frankfurt, T0 - timedelta(hours=2), 200, 7.9)
        outage = uuid.uuid4()
        PingSample.objects.bulk_create(
            PingSample(
                time=T0 - timedelta(minutes=30, seconds=-index),
                run_id=outage,
                sample_index=index,
                source_id=self.athens.pk,
                destination_id=self.frankfurt.pk,
                seq=index,
                rtt_ms=None,
            )
            for index in range(10)
        )
        loss = path_loss(self.athens.pk, self.frankfurt.pk, T0 - timedelta(hours=6), T0)
        assert loss.fraction == 0.0 and loss.sent == 250 and "1 ping runs lost entirely" in loss.source

    def test_a_loss_ceiling_the_run_beat_is_dropped(self) -> None:
        # 0.5% ping loss puts Mathis far below the 3 Gbit/s this flow carried: not random loss.
        PingSample.objects.bulk_create(
            PingSample(
                time=T0 - timedelta(hours=1, seconds=-index),
                run_id=uuid.UUID(int=index // 10 + 1),
                sample_index=index,
                source_id=self.athens.pk,
                destination_id=self.frankfurt.pk,
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


@override_settings(ANALYSIS_EVERY_S=600)
def test_paths_with_new_data_are_looked_back_on_over_two_task_intervals() -> None:
    """Analysis every 10 min must not look back only 2: paths in between would be skipped."""
    assert new_data_window() == timedelta(minutes=20)


@override_settings(ANALYSIS_EVERY_S=10)
def test_a_frequent_task_still_looks_back_two_minutes() -> None:
    assert new_data_window() == timedelta(minutes=2)


@override_settings(ANALYSIS_RTT_WINDOW_S=300, ANALYSIS_EVERY_S=60)
class RecheckedMetricsTests(FathomTestCase):
    """Each pass re-runs on a path only the rules its new data can change: at 500 agents
    every path has a new ping each minute, and the RTT and loss rules read complete 5-minute
    windows, so most passes need not run them at all."""

    BOUNDARY = datetime.fromtimestamp(T0.timestamp() // 300 * 300 + 3000, tz=UTC)

    def received(self, test_type: str, started: datetime, received: datetime) -> None:
        Run.objects.create(
            id=uuid.uuid4(), started_at=started, ended_at=started + timedelta(seconds=10), source_id=self.athens.pk,
            destination_id=self.frankfurt.pk, target=self.frankfurt.address, test_type=test_type, test_id=test_type,
            status="ok", received_at=received,
        )  # fmt: skip

    def metrics(self, now: datetime) -> set[FindingMetric]:
        found = recently_received_metrics(now - new_data_window(), now)
        return found.get((self.athens.pk, self.frankfurt.pk, 4), set())

    def test_pings_in_the_window_still_filling_change_nothing(self) -> None:
        now = self.BOUNDARY + timedelta(seconds=200)
        self.received("ping", now - timedelta(seconds=15), now - timedelta(seconds=5))
        assert self.metrics(now) == set()

    def test_a_window_closing_reruns_rtt_and_loss(self) -> None:
        now = self.BOUNDARY + timedelta(seconds=60)
        self.received("ping", now - timedelta(seconds=15), now - timedelta(seconds=5))
        assert self.metrics(now) == {FindingMetric.RTT, FindingMetric.LOSS}

    def test_a_late_ping_into_a_closed_window_reruns_rtt_and_loss(self) -> None:
        now = self.BOUNDARY + timedelta(seconds=200)
        self.received("ping", self.BOUNDARY - timedelta(hours=0.5), now - timedelta(seconds=5))
        assert self.metrics(now) == {FindingMetric.RTT, FindingMetric.LOSS}

    def test_each_test_type_reruns_its_own_rules(self) -> None:
        now = self.BOUNDARY + timedelta(seconds=200)
        self.received("trace", now - timedelta(seconds=30), now - timedelta(seconds=5))
        assert self.metrics(now) == {FindingMetric.ROUTE}
        self.received("throughput", now - timedelta(seconds=30), now - timedelta(seconds=5))
        assert self.metrics(now) == {FindingMetric.ROUTE, FindingMetric.THROUGHPUT}

    def test_a_recompute_runs_every_rule_on_its_paths(self) -> None:
        throughput_run(self.athens, self.frankfurt, T0, 1e9)
        recompute = partial(analyze_range, T0 - timedelta(hours=1), T0 + timedelta(hours=1), only_missing=False)
        assert self.rules_run_by(recompute) == [ALL_METRICS]

    def rules_run_by(self, work: Callable[[], object]) -> list[frozenset[FindingMetric]]:
        """The metrics each path's detect_findings was asked for while `work` ran."""
        checked: list[frozenset[FindingMetric]] = []

        def record(*args: Any, metrics: frozenset[FindingMetric], **kwargs: Any) -> int:
            checked.append(metrics)
            return 0

        with mock.patch.object(run_service, "detect_findings", record):
            work()
        return checked

    def checked_by_pass(self, now: datetime) -> list[frozenset[FindingMetric]]:
        return self.rules_run_by(partial(analyze_recent, now=now))

    def test_a_closed_window_is_judged_by_one_pass_not_every_pass_that_sees_it(self) -> None:
        ping_rules = frozenset({FindingMetric.RTT, FindingMetric.LOSS})
        first = self.BOUNDARY + timedelta(seconds=30)
        self.received("ping", first - timedelta(seconds=25), first - timedelta(seconds=12))
        assert self.checked_by_pass(first) == [ping_rules]
        second = first + timedelta(seconds=60)
        self.received("ping", second - timedelta(seconds=25), second - timedelta(seconds=12))
        assert self.checked_by_pass(second) == []  # the window closed at BOUNDARY was judged at `first`
        # A ping into that closed window arriving after `first` is new to it: judged again.
        self.received("ping", self.BOUNDARY - timedelta(seconds=40), second + timedelta(seconds=20))
        assert self.checked_by_pass(second + timedelta(seconds=60)) == [ping_rules]

    def test_without_a_known_last_pass_the_new_data_window_decides(self) -> None:
        now = self.BOUNDARY + timedelta(seconds=90)
        self.received("ping", now - timedelta(seconds=25), now - timedelta(seconds=12))
        assert self.checked_by_pass(now) == [frozenset({FindingMetric.RTT, FindingMetric.LOSS})]
        # A last pass from the future (a clock stepped back) is not trusted either.
        AnalysisPass.objects.update_or_create(pk=1, defaults={"judged_at": now + timedelta(hours=1)})
        assert self.checked_by_pass(now) == [frozenset({FindingMetric.RTT, FindingMetric.LOSS})]


class PurgeTests(FathomTestCase):
    @override_settings(RAW_RETENTION_DAYS=30, ANALYSIS_RETENTION_DAYS=180)
    def test_analyses_outlive_the_raw_data_and_go_at_their_own_retention(self) -> None:
        analysis_row(self.athens, self.frankfurt, T0 - timedelta(days=90), 3e9)  # raw data gone, analysis kept
        analysis_row(self.athens, self.frankfurt, T0 - timedelta(days=181), 3e9)  # past the analysis retention
        deleted = run_service.purge_expired(now=T0)
        assert deleted == 1
        assert list(RunAnalysis.objects.values_list("started_at", flat=True)) == [T0 - timedelta(days=90)]
