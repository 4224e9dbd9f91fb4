"""Findings against the real database: every rule over a path's history, stored with their
life cycle (opened, cleared, folded, annotated) and idempotent on recompute."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from django.test import override_settings

from analysis.changes.episodes import Direction, Episode, Metric
from analysis.choices import Diagnosis, FindingKind, FindingMetric, FindingState, RttModeVerdict
from analysis.models import Finding, SweepModes
from analysis.services.findings import detect_findings, reconcile_findings
from analysis.services.inputs import path_loss
from analysis.services.run_analyses import analyze_recent
from analysis.tests.services.fixtures import (
    MIB,
    T0,
    analysis_row,
    facts,
    flow_sweep,
    member,
    pings,
    ramp_run,
    snapshot,
    throughput_run,
)
from fathom.testing import FathomTestCase
from measurements.choices import TestType as Kind
from measurements.models import PingSample, Run
from meshes.choices import SlotState
from meshes.models import Slot

# What the slow rule would have said of a step from 3 to 2 Gbit/s (the contract's ThroughputSlowEvidence).
SLOW_EVIDENCE: dict[str, object] = {
    "before_from": (T0 - timedelta(days=12)).isoformat(), "before_points": 48,
    "after_to": (T0 + timedelta(days=4)).isoformat(), "after_points": 16,
    "p_value": 1e-9, "before_median_bps": 3e9, "after_median_bps": 2e9,
    "skipped_nonpositive": 0, "skipped_nonfinite": 0,
}  # fmt: skip


@override_settings(ANALYSIS_RTT_WINDOW_S=60, ANALYSIS_RTT_BASELINE_S=3600)
class FindingTests(FathomTestCase):
    def test_an_rtt_step_is_one_finding_that_clears(self) -> None:
        pings(self.athens, self.frankfurt, T0, 360, 40.0)  # an hour at 40 ms
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1), 60, 45.0)  # then 10 min at 45 ms
        now = T0 + timedelta(hours=1, minutes=10)
        assert detect_findings(self.athens, self.frankfurt, now=now) == 1
        assert detect_findings(self.athens, self.frankfurt, now=now) == 0  # idempotent
        finding = Finding.objects.get()
        assert finding.metric == FindingMetric.RTT and finding.state == FindingState.OPEN
        assert finding.direction == "up" and 4.5 < finding.magnitude < 5.5
        assert abs((finding.started_at - (T0 + timedelta(hours=1))).total_seconds()) <= 120
        pings(self.athens, self.frankfurt, now, 60, 40.0)
        detect_findings(self.athens, self.frankfurt, now=now + timedelta(minutes=10))
        finding.refresh_from_db()
        assert finding.state == FindingState.CLEARED and finding.cleared_at is not None
        assert Finding.objects.count() == 1

    def test_pings_answered_during_the_pairs_own_throughput_test_are_no_rtt_shift(self) -> None:
        # The test's queue (or a policer's drops) is not the path: a lab CI run alarmed on
        # +0.5 ms while the control path's iperf3 ran at 120 Mbit/s beside its pings.
        pings(self.athens, self.frankfurt, T0, 360, 40.0)
        loaded_from = T0 + timedelta(hours=1)
        pings(self.athens, self.frankfurt, loaded_from, 60, 45.0)
        run = throughput_run(self.frankfurt, self.athens, loaded_from - timedelta(seconds=1), 1e9)  # either way
        Run.objects.filter(id=run.id).update(ended_at=loaded_from + timedelta(minutes=10))
        assert detect_findings(self.athens, self.frankfurt, now=loaded_from + timedelta(minutes=10)) == 0
        assert not Finding.objects.exists()

    def test_pings_answered_in_a_throughput_slot_not_yet_reported_are_no_rtt_shift(self) -> None:
        # The run reaches the server only after the test: a pass in between must already
        # leave its pings out (a lab CI run paged +2.2 ms in the middle of the path's iperf3).
        pings(self.athens, self.frankfurt, T0, 360, 40.0)
        loaded_from = T0 + timedelta(hours=1)
        pings(self.athens, self.frankfurt, loaded_from, 60, 45.0)
        slot = Slot.objects.create(
            source=self.frankfurt, destination=self.athens, test_type=Kind.THROUGHPUT,
            period_start=loaded_from, start_at=loaded_from - timedelta(seconds=1),
            end_at=loaded_from + timedelta(minutes=10),
        )  # fmt: skip
        now = loaded_from + timedelta(minutes=10)
        assert detect_findings(self.athens, self.frankfurt, now=now) == 0
        # A slot the planner found no time for never ran: its pings are the path's.
        Slot.objects.filter(pk=slot.pk).update(state=SlotState.UNSCHEDULABLE)
        assert detect_findings(self.athens, self.frankfurt, now=now) == 1

    def test_pings_answered_while_either_agent_tests_with_a_third_are_no_rtt_shift(self) -> None:
        # athens' test to a third agent fills athens' access link, which the athens ->
        # frankfurt pings cross: that queue is Fathom's own load, not the path's.
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        pings(self.athens, self.frankfurt, T0, 360, 40.0)
        loaded_from = T0 + timedelta(hours=1)
        pings(self.athens, self.frankfurt, loaded_from, 60, 45.0)
        run = throughput_run(self.athens, lisbon, loaded_from - timedelta(seconds=1), 1e9)
        Run.objects.filter(id=run.id).update(ended_at=loaded_from + timedelta(minutes=10))
        assert detect_findings(self.athens, self.frankfurt, now=loaded_from + timedelta(minutes=10)) == 0
        assert not Finding.objects.exists()
        # Without that test the same pings are a shift: the rule itself still sees it.
        Run.objects.filter(id=run.id).delete()
        assert detect_findings(self.athens, self.frankfurt, now=loaded_from + timedelta(minutes=10)) == 1

    def test_pings_lost_during_the_pairs_own_throughput_test_are_not_the_paths_loss(self) -> None:
        pings(self.athens, self.frankfurt, T0, 200, 40.0)
        loaded_from, run_id = T0 + timedelta(hours=1), uuid.uuid4()
        # One ping run, a sample a second: lost while the 13 s test runs, answered after it.
        PingSample.objects.bulk_create(
            PingSample(
                time=loaded_from + timedelta(seconds=index), run_id=run_id, sample_index=index,
                source_id=self.athens.pk, destination_id=self.frankfurt.pk, seq=index,
                rtt_ms=None if index < 12 else 40.0,
            )
            for index in range(20)
        )  # fmt: skip
        throughput_run(self.athens, self.frankfurt, loaded_from - timedelta(seconds=1), 1e8)
        loss = path_loss(self.athens.pk, self.frankfurt.pk, T0, loaded_from + timedelta(minutes=1))
        assert (loss.sent, loss.lost) == (208, 0), loss  # 12 lost during the test, left out

    def test_a_throughput_drop_with_a_tuning_change_is_an_annotation(self) -> None:
        snapshot(self.frankfurt, T0 - timedelta(days=30), facts(16 * MIB))
        for index in range(20):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 3e9 * (1 + 0.01 * (index % 3)))
        changed_at = T0 + timedelta(hours=6 * 20 - 1)
        snapshot(self.frankfurt, changed_at, facts(6 * MIB))
        for index in range(20, 24):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 2e9)
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=7))
        finding = Finding.objects.get(metric=FindingMetric.THROUGHPUT)
        assert finding.direction == "down" and -0.4 < finding.magnitude < -0.25
        assert finding.kind == FindingKind.ANNOTATION
        assert "net.ipv4.tcp_rmem" in finding.annotation and "frankfurt" in finding.annotation

    def test_a_throughput_drop_alone_is_an_alarm(self) -> None:
        for index in range(20):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 3e9 * (1 + 0.01 * (index % 3)))
        for index in range(20, 24):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), 2e9)
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=7))
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
        episode = Episode(
            metric=Metric.THROUGHPUT, rule="throughput_slow", started_at=T0,
            detected_at=T0 + timedelta(days=1), cleared_at=T0 + timedelta(days=4),
            direction=Direction.DOWN, baseline=3e9, current=2e9, magnitude=-0.33, evidence=SLOW_EVIDENCE,
        )  # fmt: skip
        reconcile_findings(self.athens, self.frankfurt, FindingMetric.THROUGHPUT, [episode], T0)
        assert list(Finding.objects.values_list("pk", flat=True)) == [first.pk]

    def test_an_episode_folding_an_open_finding_into_a_cleared_one_keeps_one_finding(self) -> None:
        """A second drop on a path whose recomputed episode now spans both: the open one is
        folded into the first, not closed after its deletion (which failed every analysis pass
        of the path and kept it open)."""
        first = Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.THROUGHPUT, state="cleared",
            started_at=T0, detected_at=T0, cleared_at=T0 + timedelta(days=1), direction="down",
            baseline=3e9, current=2e9, magnitude=-0.33, unit="relative",
        )  # fmt: skip
        Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.THROUGHPUT,
            started_at=T0 + timedelta(days=2), detected_at=T0 + timedelta(days=2), direction="down",
            baseline=3e9, current=2e9, magnitude=-0.33, unit="relative",
        )  # fmt: skip
        episode = Episode(
            metric=Metric.THROUGHPUT, rule="throughput_slow", started_at=T0,
            detected_at=T0 + timedelta(days=1), cleared_at=T0 + timedelta(days=4),
            direction=Direction.DOWN, baseline=3e9, current=2e9, magnitude=-0.33, evidence=SLOW_EVIDENCE,
        )  # fmt: skip
        reconcile_findings(self.athens, self.frankfurt, FindingMetric.THROUGHPUT, [episode], T0 + timedelta(days=5))
        (kept,) = Finding.objects.all()
        assert kept.pk == first.pk and kept.state == FindingState.CLEARED
        assert kept.cleared_at == T0 + timedelta(days=4)

    def test_a_drop_after_an_open_rise_clears_the_rise_and_opens_a_drop(self) -> None:
        """A path that got faster (an open "up" finding) and then drops: the drop is its own
        open finding in its own direction, which the default throughput rule pages for; the
        rise is cleared where the drop began (one open finding per path and metric)."""
        rise = Episode(
            metric=Metric.THROUGHPUT, rule="throughput_slow", started_at=T0, detected_at=T0 + timedelta(days=1),
            cleared_at=None, direction=Direction.UP, baseline=2e9, current=3e9, magnitude=0.5, evidence=SLOW_EVIDENCE,
        )  # fmt: skip
        reconcile_findings(self.athens, self.frankfurt, FindingMetric.THROUGHPUT, [rise], T0 + timedelta(days=2))
        (up,) = Finding.objects.all()
        assert up.state == FindingState.OPEN and up.direction == "up"
        drop = Episode(
            metric=Metric.THROUGHPUT, rule="throughput_fast", started_at=T0 + timedelta(days=5),
            detected_at=T0 + timedelta(days=5, hours=12), cleared_at=None, direction=Direction.DOWN,
            baseline=3e9, current=2e9, magnitude=-0.33, evidence=SLOW_EVIDENCE,
        )  # fmt: skip
        for _ in range(2):  # and a recompute changes nothing
            reconcile_findings(
                self.athens, self.frankfurt, FindingMetric.THROUGHPUT, [rise, drop], T0 + timedelta(days=6)
            )
            found = list(Finding.objects.order_by("started_at").values_list("pk", "direction", "state", "cleared_at"))
            assert found[0] == (up.pk, "up", FindingState.CLEARED, T0 + timedelta(days=5))
            assert found[1][1:] == ("down", FindingState.OPEN, None) and len(found) == 2

    def test_an_open_finding_no_rule_confirms_is_cleared_not_before_it_started(self) -> None:
        finding = Finding.objects.create(
            source=self.athens, destination=self.frankfurt, metric=FindingMetric.RTT,
            started_at=T0 + timedelta(hours=2), detected_at=T0 + timedelta(hours=2),
            direction="up", baseline=40, current=45, magnitude=5, unit="ms",
        )  # fmt: skip
        reconcile_findings(self.athens, self.frankfurt, FindingMetric.RTT, [], T0)
        finding.refresh_from_db()
        assert finding.state == FindingState.CLEARED and finding.cleared_at == finding.started_at

    def test_runs_on_the_slow_ecmp_member_are_not_a_drop(self) -> None:
        """Members at 23 and 31 ms, 3:1, window-limited: runs at 90-97% of their own member's
        ceiling. Four slow-member runs in a row are not a regression; a real cut still is."""
        fast, slow = 1.02e9, 1.02e9 * 23 / 31
        for index in range(40):
            on_slow = index % 4 == 3 or 20 <= index < 24
            ceiling = slow if on_slow else fast
            rate = ceiling * (0.9 + 0.07 * ((index * 7) % 5) / 4)
            at = T0 + timedelta(hours=6 * index)
            ceilings = member(2 if on_slow else 1, ceiling / fast, ceiling)
            analysis_row(self.athens, self.frankfurt, at, rate, ceiling_bps=ceiling, ceilings=ceilings)
        assert detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=11)) == 0
        for index in range(40, 42):  # a 40% cut, both runs on the fast member
            at = T0 + timedelta(hours=6 * index)
            analysis_row(self.athens, self.frankfurt, at, 0.56e9, ceiling_bps=fast, ceilings=member(1, 1.0, fast))
        assert detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=11)) == 1
        finding = Finding.objects.get()
        assert finding.detected_at == T0 + timedelta(hours=6 * 41)  # the second run after the cut
        assert -0.45 < finding.magnitude < -0.35 and finding.evidence["member_scaled"] == 13

    def test_policed_runs_are_not_scaled_by_their_member(self) -> None:
        """A policer holds every member at its rate: a policed run on the slow member is no
        faster in fast-member terms (scaling it made the next fast-member run read as a cut)."""
        for index in range(40):
            slow = index % 5 >= 2  # most runs on the slow member, as in the lab corpus's c012
            ceilings = member(2 if slow else 1, 0.53 if slow else 1.0, 2e9)
            at = T0 + timedelta(hours=6 * index)
            rate = 35e6 * (1 + 0.01 * (index % 4))
            analysis_row(self.athens, self.frankfurt, at, rate, ceilings=ceilings, diagnosis=Diagnosis.POLICER)
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=11))
        assert not Finding.objects.filter(metric=FindingMetric.THROUGHPUT).exists()

    def test_a_policers_rate_cut_is_found_by_the_ramp_beside_a_low_run(self) -> None:
        """TCP under the policer saws 25-41 Mbit/s, which no TCP rule pages on; the ramps measure
        50 Mbit/s, then 37 beside a low run: one finding, from the policer-rate rule."""
        sawing = [40e6, 30e6, 36e6, 25e6, 38e6, 28e6, 33e6, 41e6, 27e6, 35e6] * 3
        for index, rate in enumerate(sawing):
            at = T0 + timedelta(hours=6 * index)
            analysis_row(self.athens, self.frankfurt, at, rate, diagnosis=Diagnosis.POLICER)
        policed = [(40e6, 40e6, 0.0), (60e6, 50e6, 16.7), (90e6, 50.2e6, 44.2)]
        for day in range(7):
            ramp_run(self.athens, self.frankfurt, T0 + timedelta(hours=24 * day + 3), policed)
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=7, hours=12))
        assert not Finding.objects.filter(metric=FindingMetric.THROUGHPUT).exists()
        # The policer drops to 37 Mbit/s: a low run, then the ramp it asks for.
        cut_at = T0 + timedelta(hours=6 * len(sawing))
        analysis_row(self.athens, self.frankfurt, cut_at, 24e6, diagnosis=Diagnosis.POLICER)
        ramp_run(self.athens, self.frankfurt, cut_at + timedelta(hours=6), [(40e6, 37e6, 7.5), (60e6, 37.1e6, 38.2)])
        detect_findings(self.athens, self.frankfurt, now=cut_at + timedelta(hours=7))
        finding = Finding.objects.get(metric=FindingMetric.THROUGHPUT)
        assert finding.rules == ["policer_ramp"] and finding.state == FindingState.OPEN
        assert finding.started_at == cut_at and finding.detected_at == cut_at + timedelta(hours=6)
        assert finding.baseline == pytest.approx(50.2e6) and finding.current == pytest.approx(37.1e6)
        assert finding.evidence["tcp_rate_bps"] == 24e6

    def test_a_new_path_alarms_on_its_first_day(self) -> None:
        for index, rate in enumerate([3.8e9, 3.85e9, 2.2e9, 2.25e9]):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), rate, ceiling_bps=4e9)
        assert detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=1)) == 1
        finding = Finding.objects.get()
        assert finding.evidence["prior"] == "ceilings" and finding.detected_at == T0 + timedelta(hours=18)

    def test_ping_moving_to_another_ecmp_member_is_compared_within_it(self) -> None:
        flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=5), 23.0, 31.0)
        pings(self.athens, self.frankfurt, T0, 360, 23.1)
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1), 60, 31.1)
        analyze_recent(now=T0 + timedelta(hours=1, minutes=10))
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(hours=1, minutes=10))
        assert not Finding.objects.filter(metric=FindingMetric.RTT).exists()

    def test_ping_on_a_member_only_an_earlier_sweep_of_the_day_showed_is_an_annotation(self) -> None:
        """A member of 1 in 16 forms a mode in one sweep in seven: the newest sweep need not show
        the member a ping run took, the day's sweeps together do."""
        self._sweeps(T0 - timedelta(hours=3), 4, [(23.0, 8), (31.0, 6), (35.0, 2)])
        self._sweeps(T0 - timedelta(hours=1), 4, [(23.0, 10), (31.0, 6)])
        pings(self.athens, self.frankfurt, T0, 360, 23.1)
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1), 60, 35.1)
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(hours=1, minutes=10))
        finding = Finding.objects.get(metric=FindingMetric.RTT)
        assert finding.kind == FindingKind.ANNOTATION
        assert "to member 3 (35.0 ms)" in finding.annotation

    def test_a_member_slowing_down_is_found_on_an_ecmp_path(self) -> None:
        flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=5), 23.0, 31.0)
        pings(self.athens, self.frankfurt, T0, 360, 23.1)
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1), 30, 31.1)
        # The fast member 5 ms slower: 28 ms is no member of the path, so it is a shift.
        pings(self.athens, self.frankfurt, T0 + timedelta(hours=1, minutes=30), 120, 28.1)
        analyze_recent(now=T0 + timedelta(hours=2))
        detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(hours=2))
        finding = Finding.objects.get(metric=FindingMetric.RTT)
        assert finding.kind == FindingKind.ALARM
        assert finding.magnitude is not None and 4.5 < finding.magnitude < 5.5

    def test_one_sample_series_yield_nothing(self) -> None:
        analysis_row(self.athens, self.frankfurt, T0, 3e9)
        pings(self.athens, self.frankfurt, T0, 1, 40.0)
        assert detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(hours=1)) == 0
        assert not Finding.objects.exists()

    def _sweeps(self, start: datetime, count: int, modes: list[tuple[float, int]]) -> None:
        """Stored sweep analyses (as analysis.services.sweep_modes writes them), every 15 minutes."""
        SweepModes.objects.bulk_create(
            SweepModes(
                run_id=uuid.uuid4(),
                started_at=start + timedelta(minutes=15 * index),
                source=self.athens,
                destination=self.frankfurt,
                verdict=RttModeVerdict.ECMP,
                base_rtt_ms=modes[0][0],
                mode_count=len(modes),
                analysis={
                    "verdict": "ecmp",
                    "flows_used": 16,
                    "modes": [{"rtt_ms": rtt + 0.01 * (index % 3), "flow_count": flows} for rtt, flows in modes],
                },
            )
            for index in range(count)
        )

    def test_an_ecmp_member_moving_is_a_finding_in_ms(self) -> None:
        self._sweeps(T0, 100, [(23.0, 12), (31.0, 4)])
        self._sweeps(T0 + timedelta(minutes=15 * 100), 3, [(23.0, 12), (33.5, 4)])
        now = T0 + timedelta(minutes=15 * 103)
        assert detect_findings(self.athens, self.frankfurt, now=now) == 1
        finding = Finding.objects.get(metric=FindingMetric.ECMP)
        assert finding.rules == ["ecmp_member_moved"] and finding.unit == "ms"
        assert finding.magnitude == pytest.approx(2.5, abs=0.05)
        assert finding.evidence["member"] == 2
        assert detect_findings(self.athens, self.frankfurt, now=now) == 0

    def test_stable_ecmp_members_give_no_finding(self) -> None:
        self._sweeps(T0, 200, [(23.0, 12), (31.0, 4)])
        assert detect_findings(self.athens, self.frankfurt, now=T0 + timedelta(days=2, hours=2)) == 0


class MetricSubsetTests(FathomTestCase):
    def test_rules_of_other_metrics_neither_run_nor_touch_their_findings(self) -> None:
        for index, rate in enumerate([3.8e9, 3.85e9, 2.2e9, 2.25e9]):
            analysis_row(self.athens, self.frankfurt, T0 + timedelta(hours=6 * index), rate, ceiling_bps=4e9)
        now = T0 + timedelta(days=1)
        assert detect_findings(self.athens, self.frankfurt, now=now, metrics=frozenset({FindingMetric.RTT})) == 0
        assert not Finding.objects.exists()
        assert detect_findings(self.athens, self.frankfurt, now=now) == 1
        # An RTT-only pass leaves the open throughput finding as it is.
        ping_rules = frozenset({FindingMetric.RTT, FindingMetric.LOSS})
        detect_findings(self.athens, self.frankfurt, now=now, metrics=ping_rules)
        assert Finding.objects.get().state == FindingState.OPEN
