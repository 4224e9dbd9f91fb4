"""A policed path gets a paced UDP ramp in its next exclusive slot, the agent's plan carries
it within the contract, and the ramp it reports becomes the policer's rate in the advice."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.test import override_settings
from django.utils import timezone

from analysis.choices import Diagnosis
from analysis.models import RunAnalysis
from analysis.policer import EstimateBasis, ramp_steps
from analysis.services.paths import consensus, path_policer, path_report, udp_runs
from analysis.services.ramp_runs import latest_ramp
from analysis.services.ramps import request_policer_ramp
from analysis.tests.services.fixtures import MIB, facts, ramp_run, snapshot, throughput_run
from core import contract
from fathom.testing import FathomTestCase
from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.models import Run
from meshes.choices import SlotState
from meshes.models import MeshTest, Slot
from meshes.ramps import MIN_RAMP_STEPS, RAMP_OMIT_S, RAMP_STEP_S, steps_fitting

PLAN_SCHEMA = "plan.v1.schema.json"
PLAN_URL = "/api/v1/agent/plan/"


class PolicerRampTests(FathomTestCase):
    ingest_now = None

    def setUp(self) -> None:
        self.now = timezone.now().replace(microsecond=0)
        self.test = MeshTest.objects.get(mesh__name="default", name="throughput")

    def policed(self, runs: int = 3, rate_bps: float = 30e6, sender: Agent | None = None) -> None:
        """The path athens -> frankfurt (or from `sender`) labelled a policer by its last runs."""
        sender = sender or self.athens
        receiver = self.frankfurt if sender == self.athens else self.athens
        for index in range(runs):
            self.analysed(sender, receiver, 6 * (index + 1), rate_bps)

    def analysed(self, sender: Agent, receiver: Agent, ago_h: float, rate_bps: float) -> None:
        """A TCP run of the path `ago_h` hours ago, analysed as policed."""
        run = throughput_run(sender, receiver, self.now - timedelta(hours=ago_h), rate_bps)
        RunAnalysis.objects.create(
            run_id=run.id, started_at=run.started_at, source=sender,
            destination=receiver, streams=1, rate_bps=rate_bps, ceiling_bps=100e6, limit="receive_window",
            diagnosis=Diagnosis.POLICER, ceilings={}, inputs={}, interval_stats={}, evidence={},
        )  # fmt: skip

    def slot(self, client: Agent, peer: Agent, in_s: int, *, seconds: int = 30, reverse: bool = False) -> Slot:
        start = self.now + timedelta(seconds=in_s)
        return Slot.objects.create(
            mesh_test=self.test, source=client, destination=peer, test_type="throughput", period_start=start,
            start_at=start, end_at=start + timedelta(seconds=seconds),
            spec={"duration_s": 20, "omit_s": 0, "parallel": 1, "window_bytes": 0, "reverse": reverse, "udp": False,
                  "bitrate_bps": 0, "congestion": "cubic", "mss": 0, "fq_rate_bps": 0, "port": 0, "path_rtt_ms": 120.0},
        )  # fmt: skip

    def ramp_run(self, steps: list[tuple[float, float, float]], *, ago_h: float = 1) -> Run:
        return ramp_run(self.athens, self.frankfurt, self.now - timedelta(hours=ago_h), steps)

    def test_the_next_slot_in_the_datas_direction_becomes_a_ramp_the_plan_carries(self) -> None:
        self.policed()
        too_soon = self.slot(self.athens, self.frankfurt, 30)  # inside the planning lead
        other_way = self.slot(self.frankfurt, self.athens, 200)  # frankfurt sends
        reverse = self.slot(self.frankfurt, self.athens, 300, reverse=True)  # athens sends, frankfurt is the client
        later = self.slot(self.athens, self.frankfurt, 400)
        client = self.agent_client(self.frankfurt, self.frankfurt_credential)
        etag = client.get(PLAN_URL)["ETag"]
        outcome = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id == str(reverse.pk), outcome
        for untouched in (too_soon, other_way, later):
            untouched.refresh_from_db()
            assert "ramp_bps" not in untouched.spec
        reverse.refresh_from_db()
        spec = reverse.spec
        # 30 s hold 6 steps of 2 s after 1 s omitted; from 0.75x the TCP rate up to 6x it.
        assert spec["ramp_bps"] == outcome.rates_bps and len(outcome.rates_bps) == 6
        assert outcome.rates_bps[0] == 22_500_000 and outcome.rates_bps[-1] == 180_000_000
        assert (spec["udp"], spec["bitrate_bps"], spec["reverse"], spec["parallel"]) == (True, 22_500_000, True, 1)
        assert (spec["duration_s"], spec["omit_s"], spec["congestion"]) == (RAMP_STEP_S, RAMP_OMIT_S, "")
        # The client's plan changes and carries the ramp within the contract.
        reply = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert reply.status_code == 200
        body = reply.json()
        assert not list(contract.validator(PLAN_SCHEMA).iter_errors(body))
        assert [slot["spec"].get("ramp_bps") for slot in body["slots"] if slot["id"] == str(reverse.pk)] == [
            outcome.rates_bps
        ]
        # Asked again: the ramp is planned already, nothing else changes.
        again = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert again.slot_id is None and again.reason == "a ramp is already planned"
        later.refresh_from_db()
        assert "ramp_bps" not in later.spec

    def ramp_slot(self, in_s: int, state: SlotState = SlotState.PLANNED, reason: str = "") -> Slot:
        slot = self.slot(self.athens, self.frankfurt, in_s)
        Slot.objects.filter(pk=slot.pk).update(
            spec={**slot.spec, "ramp_bps": [1_000_000, 2_000_000, 4_000_000]}, state=state, reason=reason
        )
        slot.refresh_from_db()
        return slot

    def test_a_ramp_under_way_is_awaited_and_a_failed_one_tried_again_up_to_three_times(self) -> None:
        self.policed()
        ramp = self.ramp_slot(-600)
        self.slot(self.athens, self.frankfurt, 200)
        # Started ten minutes ago, no result yet: under way.
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp is under way"
        # It failed (a lost datagram, a busy moment): the next slot tries again.
        Slot.objects.filter(pk=ramp.pk).update(state=SlotState.FAILED, reason="ramp step 2 of 3 (2 Mbit/s): timeout")
        retry = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert retry.slot_id is not None and len(retry.rates_bps) >= MIN_RAMP_STEPS, retry
        # That one was missed, and a third ran the slot's old TCP test (its agent's plan was
        # older than the ramp): three ramps that measured nothing, so none until the next interval
        # (a host that cannot run one, an iperf3 without pacing, is not asked in every slot).
        Slot.objects.filter(pk=retry.slot_id).update(start_at=self.now - timedelta(seconds=400), state=SlotState.MISSED)
        stale = self.ramp_slot(-200, SlotState.OK)
        tcp_run = throughput_run(self.athens, self.frankfurt, stale.start_at, 30e6)
        Slot.objects.filter(pk=stale.pk).update(run_id=tcp_run.id)
        self.slot(self.athens, self.frankfurt, 300)
        outcome = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id is None and outcome.reason == (
            "3 ramps failed in the last 24 h; the latest: the agent ran the slot's earlier test:"
            " it had fetched its plan before the change"
        ), outcome
        tomorrow = self.slot(self.athens, self.frankfurt, 25 * 3600 + 200)
        later = request_policer_ramp(self.athens, self.frankfurt, self.now + timedelta(hours=25))
        assert later.slot_id == str(tomorrow.pk), later

    def test_a_ramp_that_measured_is_not_counted_as_failed(self) -> None:
        self.policed()
        # Two failed, then one measured, and it lost nothing below a policer above its top:
        # the climb goes on, the failures before it do not stop it.
        for ago in (-900, -700):
            self.ramp_slot(ago, SlotState.FAILED, "timeout")
        measured = self.ramp_slot(-500, SlotState.OK)
        run = self.ramp_run([(22.5e6, 22.5e6, 0.0), (80e6, 80e6, 0.0), (180e6, 180e6, 0.0)], ago_h=0.1)
        Slot.objects.filter(pk=measured.pk).update(run_id=run.id)
        self.slot(self.athens, self.frankfurt, 200)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).slot_id is not None

    def test_a_recent_ramp_is_the_policers_rate_and_no_other_is_asked_for(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        self.ramp_run([(60e6, 60e6, 0.0), (90e6, 89.5e6, 0.5), (135e6, 90.2e6, 33.2), (200e6, 89.8e6, 55.1)])
        estimate = latest_ramp(self.athens, self.frankfurt, self.now)
        assert estimate is not None and estimate.basis is EstimateBasis.UDP_RAMP and estimate.rate_bps == 90.2e6
        agreed = consensus(RunAnalysis.objects.filter(source=self.athens).latest("started_at"))
        assert agreed is not None and path_policer(self.athens, self.frankfurt, agreed) == estimate
        # The ramp is not also read as one paced UDP run at its average rate.
        assert udp_runs(self.athens, self.frankfurt, self.now) == []
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"
        # Nor is it a ramp of the other direction.
        assert latest_ramp(self.frankfurt, self.athens, self.now) is None

    def test_a_run_below_the_paths_median_after_the_ramp_asks_for_another_at_once(self) -> None:
        # TCP under a policer scatters (20 % here): a run below the median is worth a ramp.
        for index, rate in enumerate((40e6, 30e6, 36e6, 25e6, 38e6, 28e6, 33e6, 41e6, 27e6)):
            self.analysed(self.athens, self.frankfurt, 6 * (index + 1), rate)
        self.ramp_run([(60e6, 60e6, 0.0), (90e6, 89.5e6, 0.5), (135e6, 90.2e6, 33.2)], ago_h=3)
        slot = self.slot(self.athens, self.frankfurt, 200)
        # The newest run (6 h ago) came before the ramp: nothing new to confirm.
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"
        # A run at the path's median since the ramp is no suspect either.
        self.analysed(self.athens, self.frankfurt, 1, 34e6)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"
        # One below it is: the next slot measures the policer (and confirms a drop, or clears it).
        self.analysed(self.athens, self.frankfurt, 0.5, 24e6)
        outcome = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id == str(slot.pk), outcome
        assert outcome.reason.endswith("(the newest run lay below the path's recent median)"), outcome.reason

    def test_the_path_report_advises_with_the_measured_rate(self) -> None:
        self.policed()
        self.ramp_run([(60e6, 60e6, 0.0), (135e6, 90.2e6, 33.2), (200e6, 89.8e6, 55.1)])
        report = path_report(self.athens, self.frankfurt, goal_bps=1e9, daily_volume_bytes=2**40, runs_limit=20)
        estimate = next(item for item in report.advice if item.kind == "estimate")
        assert estimate.value == "about 90.2 Mbit/s, an estimate" and "paced UDP ramp" in estimate.reason

    def test_a_ramp_that_lost_nothing_is_followed_by_a_higher_one_up_to_four(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        # TCP gets 30 Mbit/s through a 400 Mbit/s policer: the first ramp's top, 180, lost nothing.
        self.ramp_run([(22.5e6, 22.5e6, 0.0), (80e6, 80e6, 0.0), (180e6, 180e6, 0.0)], ago_h=2)
        climb = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert climb.rates_bps[0] == 135_000_000 and climb.rates_bps[-1] == 1_080_000_000, climb
        Slot.objects.update(spec={})
        # Four ramps in the interval: no fifth, even if the last still lost nothing.
        for hours in (1.5, 1.0, 0.5):
            self.ramp_run([(135e6, 135e6, 0.0), (380e6, 380e6, 0.0)], ago_h=hours)
        self.slot(self.athens, self.frankfurt, 300)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"

    def test_a_ramp_whose_slow_steps_lost_too_is_a_lower_bound_and_not_followed(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        # 20% lost at 10 Mbit/s, below a 50 Mbit/s plateau: the path was losing more than the excess.
        self.ramp_run([(10e6, 8e6, 20.0), (100e6, 50e6, 50.0), (200e6, 50e6, 75.0)])
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"
        report = path_report(self.athens, self.frankfurt, goal_bps=1e9, daily_volume_bytes=2**40, runs_limit=20)
        estimate = next(item for item in report.advice if item.kind == "estimate")
        assert estimate.value == "at least 50.0 Mbit/s, an estimate", estimate
        assert "the 10.0 Mbit/s step lost 20% too" in estimate.reason

    def test_a_ramp_that_reached_the_link_is_not_followed(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        self.ramp_run([(22.5e6, 22.5e6, 0.0), (80e6, 80e6, 0.0), (180e6, 180e6, 0.0)])
        # Both hosts report a 200 Mbit/s NIC: the ramp's 180 Mbit/s top was at the link already.
        for agent in (self.athens, self.frankfurt):
            body = facts(6 * MIB)
            nic = {"name": "eth0", "mtu": 1500, "speed_mbps": 200, "addresses": [f"{agent.address}/24"]}
            body["interfaces"] = [nic]
            snapshot(agent, self.now - timedelta(days=2), body)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == "a ramp ran in the last 24 h"

    def test_an_old_ramp_asks_for_a_new_one_and_an_expired_one_is_not_read(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        self.ramp_run([(60e6, 60e6, 0.0), (135e6, 90.2e6, 33.2), (200e6, 89.8e6, 55.1)], ago_h=25)
        assert latest_ramp(self.athens, self.frankfurt, self.now) is not None
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).slot_id is not None
        assert latest_ramp(self.athens, self.frankfurt, self.now + timedelta(days=31)) is None

    def test_no_ramp_unless_the_runs_agree_on_a_policer(self) -> None:
        self.slot(self.athens, self.frankfurt, 200)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).reason == (
            "the path's runs do not agree on a policer"
        )
        self.policed(runs=1)
        for index in range(2):
            RunAnalysis.objects.create(
                run_id=uuid.uuid4(), started_at=self.now - timedelta(minutes=10 * (index + 1)), source=self.athens,
                destination=self.frankfurt, streams=1, rate_bps=30e6, ceiling_bps=1e9, limit="receive_window",
                diagnosis=Diagnosis.LOSS, ceilings={}, inputs={}, interval_stats={}, evidence={},
            )  # fmt: skip
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).slot_id is None
        assert not Slot.objects.filter(spec__has_key="ramp_bps").exists()

    def test_no_slot_that_holds_a_ramp_means_no_ramp(self) -> None:
        self.policed()
        short = self.slot(self.athens, self.frankfurt, 200, seconds=MIN_RAMP_STEPS * 3 - 1)
        outcome = request_policer_ramp(self.athens, self.frankfurt, self.now)
        assert outcome.slot_id is None and "holds 3 ramp steps" in outcome.reason
        short.refresh_from_db()
        assert "ramp_bps" not in short.spec
        # A slot that is no longer planned (the agent already reported it) is not rewritten either.
        done = self.slot(self.athens, self.frankfurt, 300)
        Slot.objects.filter(pk=done.pk).update(state=SlotState.OK)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).slot_id is None

    def test_a_perfsonar_node_never_gets_a_ramp(self) -> None:
        self.policed()
        Agent.objects.filter(pk=self.frankfurt.pk).update(kind=AgentKind.PERFSONAR)
        self.slot(self.athens, self.frankfurt, 200)
        assert request_policer_ramp(self.athens, self.frankfurt, self.now).slot_id is None

    @override_settings(POLICER_RAMP_EVERY_H=0)
    def test_ramps_can_be_switched_off(self) -> None:
        self.policed()
        self.slot(self.athens, self.frankfurt, 200)
        assert "off" in request_policer_ramp(self.athens, self.frankfurt, self.now).reason


def test_malformed_ramp_steps_are_left_out_not_read_as_zero() -> None:
    summary: dict[str, Any] = {
        "ramp": [
            {"offered_bps": 60e6, "receiver_bits_per_s": 60e6, "lost_percent": 0.0},
            {"offered_bps": "fast", "receiver_bits_per_s": 1.0, "lost_percent": 0.0},
            {"offered_bps": 90e6, "receiver_bits_per_s": None, "lost_percent": 1.0},
            {"offered_bps": 120e6, "receiver_bits_per_s": 9e7, "lost_percent": 250.0},
            {"offered_bps": True, "receiver_bits_per_s": 9e7, "lost_percent": 1.0},
            "not a step",
        ]
    }
    assert [step.offered_bps for step in ramp_steps(summary)] == [60e6]
    assert ramp_steps({"ramp": "no"}) == [] and ramp_steps(None) == []


def test_a_long_path_holds_fewer_steps_in_the_same_slot() -> None:
    start = timezone.now()

    def held(seconds: int, spec: Any) -> int:
        return steps_fitting(Slot(start_at=start, end_at=start + timedelta(seconds=seconds), spec=spec))

    # 16 s: five steps of 3 s on a short path, three on tigo-jive's 310 ms (each step's
    # connect and result exchange take round trips).
    assert held(16, {"path_rtt_ms": 0.5}) == 5 and held(16, {"path_rtt_ms": 310.0}) == 3
    assert held(16, {}) == 5 and held(16, {"path_rtt_ms": "slow"}) == 5 and held(16, None) == 5
    assert held(600, {}) == 6  # never more than MAX_RAMP_STEPS
