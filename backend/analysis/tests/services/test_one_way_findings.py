"""One-way delay and loss findings from latency sessions: each direction of a path judged on its
own, named by its direction, from trusted clocks only for delay and unloaded intervals only."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.test import override_settings

from analysis.choices import FindingMetric, FindingState
from analysis.models import Finding
from analysis.services.finding_text import finding_summary
from analysis.services.findings import detect_findings
from analysis.services.run_analyses import recently_received_metrics
from analysis.tests.services.fixtures import T0
from analysis.tests.services.fixtures import latency_sessions as sessions
from fathom.testing import FathomTestCase
from measurements.models import Run

MINUTE = timedelta(minutes=1)
STEP_AT = T0 + timedelta(hours=1)
NOW = STEP_AT + timedelta(minutes=10)
ONE_WAY = frozenset({FindingMetric.ONE_WAY_DELAY, FindingMetric.ONE_WAY_LOSS})


@override_settings(ANALYSIS_RTT_WINDOW_S=60, ANALYSIS_RTT_BASELINE_S=3600)
class OneWayFindingTests(FathomTestCase):
    def test_a_forward_delay_step_is_a_finding_of_that_direction_only(self) -> None:
        sessions(self.athens, self.frankfurt, T0, 60)
        sessions(self.athens, self.frankfurt, STEP_AT, 10, forward_ms=25.0)
        assert detect_findings(self.athens, self.frankfurt, now=NOW, metrics=ONE_WAY) == 1
        assert detect_findings(self.athens, self.frankfurt, now=NOW, metrics=ONE_WAY) == 0  # idempotent
        # frankfurt -> athens is the sessions' backward direction, which did not move.
        assert detect_findings(self.frankfurt, self.athens, now=NOW, metrics=ONE_WAY) == 0
        finding = Finding.objects.get()
        assert (finding.source_id, finding.destination_id) == (self.athens.pk, self.frankfurt.pk)
        assert finding.metric == FindingMetric.ONE_WAY_DELAY and finding.state == FindingState.OPEN
        assert finding.direction == "up" and 4.5 < finding.magnitude < 5.5 and finding.unit == "ms"
        summary = finding_summary(finding, "athens → frankfurt", ("athens", "frankfurt"))
        assert summary.startswith("One-way delay up 5.0 ms from athens to frankfurt"), summary

    def test_a_backward_loss_step_is_a_finding_of_the_reverse_path(self) -> None:
        sessions(self.athens, self.frankfurt, T0, 60)
        sessions(self.athens, self.frankfurt, STEP_AT, 10, backward_lost=60)  # 10 % of the answers
        assert detect_findings(self.athens, self.frankfurt, now=NOW, metrics=ONE_WAY) == 0
        assert detect_findings(self.frankfurt, self.athens, now=NOW, metrics=ONE_WAY) == 1
        finding = Finding.objects.get()
        assert (finding.source_id, finding.destination_id) == (self.frankfurt.pk, self.athens.pk)
        assert finding.metric == FindingMetric.ONE_WAY_LOSS and finding.unit == "pp"
        assert 9 < finding.magnitude < 11
        summary = finding_summary(finding, "frankfurt → athens", ("frankfurt", "athens"))
        assert summary.startswith("Loss up 10.00 pp from frankfurt to athens"), summary

    def test_a_path_with_sessions_both_ways_is_judged_on_its_own_sessions(self) -> None:
        # frankfurt's own sessions say its forward direction is steady; athens's backward
        # figures for the same direction are not read.
        sessions(self.frankfurt, self.athens, T0, 70)
        sessions(self.athens, self.frankfurt, T0, 60)
        sessions(self.athens, self.frankfurt, STEP_AT, 10, backward_ms=9.0)
        assert detect_findings(self.frankfurt, self.athens, now=NOW, metrics=ONE_WAY) == 0

    def test_untrusted_clocks_give_no_delay_and_loaded_intervals_no_finding_at_all(self) -> None:
        sessions(self.athens, self.frankfurt, T0, 60)
        # The step in delay only where the reflector's clock is not synchronised...
        sessions(self.athens, self.frankfurt, STEP_AT, 10, forward_ms=25.0, reflector_synchronized=False)
        # ...and in delay and loss only under Fathom's own throughput test.
        sessions(self.frankfurt, self.athens, T0, 60)
        sessions(self.frankfurt, self.athens, STEP_AT, 10, forward_ms=25.0, forward_lost=120, own_load=True)
        assert detect_findings(self.athens, self.frankfurt, now=NOW) == 0
        assert detect_findings(self.frankfurt, self.athens, now=NOW) == 0
        assert not Finding.objects.exists()

    def test_a_latency_run_rechecks_both_directions_of_its_path(self) -> None:
        started = NOW - 2 * MINUTE
        Run.objects.create(
            id=uuid.uuid4(), started_at=started, ended_at=started + MINUTE, source_id=self.athens.pk,
            destination_id=self.frankfurt.pk, target="198.18.2.1", test_type="latency", test_id="latency",
            status="ok", received_at=NOW - MINUTE,
        )  # fmt: skip
        found = recently_received_metrics(NOW - 5 * MINUTE, NOW)
        assert found == {
            (self.athens.pk, self.frankfurt.pk, 4): set(ONE_WAY),
            (self.frankfurt.pk, self.athens.pk, 4): set(ONE_WAY),
        }
