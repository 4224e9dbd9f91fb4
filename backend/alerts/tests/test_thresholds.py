"""Threshold rules on the last n runs of a path: RTT and loss read ping runs, and a ping run
taken while one of Fathom's own throughput tests loaded either host is passed over (it saw
the queue that test built), as the analysis passes it over."""

from __future__ import annotations

import uuid
from datetime import timedelta

from alerts.models import Rule
from alerts.services.conditions import load_world, threshold_conditions
from alerts.tests.helpers import T0, later
from analysis.services.own_load import overlaps_busy
from fathom.testing import FathomTestCase
from inventory.models import Agent
from measurements.models import Run
from meshes.models import Slot


class RttThresholdTests(FathomTestCase):
    def setUp(self) -> None:
        self.geneva, _ = self.enroll("geneva", "198.18.3.1")
        self.rule = Rule.objects.create(
            name="Slow RTT", kind="threshold", metric="rtt_p50", comparison="gt", value=30.0, k=2, n=3,
            severity="warning",
        )  # fmt: skip

    def ping(self, at_s: float, median_ms: float) -> None:
        Run.objects.create(
            id=uuid.uuid4(), started_at=later(at_s), ended_at=later(at_s + 2), source_id=self.athens.pk,
            destination_id=self.frankfurt.pk, target=self.frankfurt.address, test_type="ping", test_id="ping",
            status="ok", params={}, summary={"rtt_median_ms": median_ms, "loss_fraction": 0.0},
        )  # fmt: skip

    def throughput(self, source: Agent, destination: Agent, at_s: float, seconds: float = 20) -> None:
        Run.objects.create(
            id=uuid.uuid4(), started_at=later(at_s), ended_at=later(at_s + seconds), source_id=source.pk,
            destination_id=destination.pk, target=destination.address, test_type="throughput", test_id="tput",
            status="ok", params={}, summary={},
        )  # fmt: skip

    def firing(self) -> list[str]:
        return [condition.summary for condition in threshold_conditions([self.rule], load_world(later(600)))]

    def test_three_slow_runs_fire(self) -> None:
        for index in range(3):
            self.ping(-100 - index * 30, 20.0)
        for index in range(3):
            self.ping(index * 30, 40.0)
        assert self.firing() == ["RTT p50 (ms) > 30 in 3 of the last 3 runs on athens->frankfurt (latest 40.0)"]

    def test_runs_during_fathoms_own_throughput_tests_are_passed_over(self) -> None:
        for index in range(3):
            self.ping(-100 - index * 30, 20.0)
        for index in range(3):
            self.ping(index * 30, 40.0)
        # A test from athens to a third agent covers the first two slow runs; a slot planned
        # on frankfurt whose run has not been reported yet covers the third.
        self.throughput(self.athens, self.geneva, -5, seconds=40)
        Slot.objects.create(
            source=self.geneva, destination=self.frankfurt, test_type="throughput", period_start=T0,
            start_at=later(55), end_at=later(80),
        )  # fmt: skip
        assert self.firing() == []

    def test_a_test_that_ended_before_the_run_does_not_count(self) -> None:
        for index in range(3):
            self.ping(index * 30, 40.0)
        self.throughput(self.athens, self.geneva, -60, seconds=30)  # ended at -30 s
        assert len(self.firing()) == 1


def test_a_run_touching_a_span_only_at_its_end_is_not_busy() -> None:
    agent = uuid.uuid4()
    spans = {agent: [(T0, T0 + timedelta(seconds=10)), (T0 + timedelta(seconds=60), T0 + timedelta(seconds=70))]}
    assert overlaps_busy(spans, [agent], T0 + timedelta(seconds=5), T0 + timedelta(seconds=6))
    assert not overlaps_busy(spans, [agent], T0 + timedelta(seconds=10), T0 + timedelta(seconds=60))
    assert overlaps_busy(spans, [None, agent], T0 + timedelta(seconds=30), T0 + timedelta(seconds=61))
    assert not overlaps_busy(spans, [None, uuid.uuid4()], T0, T0 + timedelta(seconds=61))
