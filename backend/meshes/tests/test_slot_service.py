from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar

from django.utils import timezone

from fathom.testing import FathomTestCase, load_example
from inventory.models import Agent
from inventory.services import revoke_agent
from meshes import slots
from meshes.models import Mesh, MeshMember, MeshTest, Slot
from meshes.services.outcomes import expire_overdue_slots
from meshes.services.slot_planning import plan_exclusive_slots

RESULTS_URL = "/api/v1/agent/results/"
# The slot ids the contract examples name.
EXAMPLE_SLOT_OK = "5d0c3e8a-1f2b-4c6d-9e7f-8a9b0c1d2e3f"
EXAMPLE_SLOT_MISSED = "5d0c3e8a-1f2b-4c6d-9e7f-8a9b0c1d2e40"


def placements(rows: list[Slot]) -> list[slots.Placement]:
    return [
        slots.Placement(
            str(row.mesh_test_id),
            str(row.source_id),
            str(row.destination_id),
            row.period_start.timestamp(),
            row.start_at.timestamp(),
            row.end_at.timestamp(),
        )
        for row in rows
    ]


def throughput_slot(source: Agent, destination: Agent, start: datetime, slot_id: str | None = None) -> Slot:
    """A planned 30 s throughput slot whose period and run start at `start`."""
    fields = {"id": slot_id} if slot_id else {}
    return Slot.objects.create(
        **fields,
        source=source,
        destination=destination,
        test_type="throughput",
        period_start=start,
        start_at=start,
        end_at=start + timedelta(seconds=30),
    )


class SlotServiceTests(FathomTestCase):
    geneva: ClassVar[Agent]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.geneva, _ = cls.enroll("geneva", "198.18.3.1")
        Mesh.objects.filter(name="default").delete()
        # Two meshes that share agents, each with a busy throughput schedule.
        for name, members in (("first", [cls.athens, cls.frankfurt, cls.geneva]), ("second", [cls.athens, cls.geneva])):
            mesh = Mesh.objects.create(name=name)
            MeshMember.objects.bulk_create(MeshMember(mesh=mesh, agent=agent) for agent in members)
            MeshTest.objects.create(
                mesh=mesh, name="tput", test_type="throughput", spec={"duration_s": 10}, interval_s=300, slip_s=300
            )

    def test_no_agent_is_ever_in_two_exclusive_slots_at_once_across_meshes(self) -> None:
        # The count of 5-minute periods between 90 s and 6 h ahead depends on where in a period
        # the planning starts: pinned 2.5 minutes into one, where the wall clock would put it anywhere.
        period = 300
        now = datetime.fromtimestamp(timezone.now().timestamp() // period * period + 150, tz=UTC)
        planning = plan_exclusive_slots(now=now, seed=7)
        rows = list(Slot.objects.filter(state="planned"))
        # 6 + 2 paths; 5-minute periods starting from 90 s ahead to 6 h ahead.
        assert planning.placed == len(rows) and 8 * 71 <= len(rows) <= 8 * 72 and planning.unschedulable == 0
        assert min(row.start_at for row in rows) >= planning.planned_from + timedelta(seconds=90)
        assert slots.count_overlaps(placements(rows)) == 0
        assert all(row.end_at - row.start_at == timedelta(seconds=10 + 2 + 8) for row in rows)
        assert all(row.period_start <= row.start_at <= row.period_start + timedelta(seconds=300) for row in rows)

    def test_extending_the_horizon_keeps_what_is_planned_and_adds_no_duplicates(self) -> None:
        now = timezone.now()
        plan_exclusive_slots(now=now, seed=1)
        first = set(Slot.objects.values_list("id", "start_at"))
        plan_exclusive_slots(now=now + timedelta(minutes=30), seed=2)
        after = list(Slot.objects.all())
        assert first <= {(row.id, row.start_at) for row in after}
        periods = [(row.mesh_test_id, row.source_id, row.destination_id, row.period_start) for row in after]
        assert len(periods) == len(set(periods))
        assert slots.count_overlaps(placements(after)) == 0

    def test_runs_that_cannot_fit_are_recorded_with_the_reason(self) -> None:
        MeshTest.objects.filter(mesh__name="second").update(spec={"duration_s": 200}, interval_s=300, slip_s=0)
        planning = plan_exclusive_slots(seed=3)
        assert planning.unschedulable > 0
        failed = Slot.objects.filter(state="unschedulable").first()
        assert failed is not None and "exclusive time" in failed.reason
        assert str(self.athens.pk) not in failed.reason and ("athens" in failed.reason or "geneva" in failed.reason)

    def test_results_settle_their_slots_and_silence_becomes_missed(self) -> None:
        now = timezone.now()
        for slot_id in (EXAMPLE_SLOT_OK, EXAMPLE_SLOT_MISSED):
            throughput_slot(self.athens, self.frankfurt, now, slot_id)
        client = self.agent_client(self.athens, self.athens_credential)
        assert client.post(RESULTS_URL, load_example("valid/throughput-ok.json"), format="json").status_code == 200
        assert (
            client.post(RESULTS_URL, load_example("valid/throughput-failed-missed.json"), format="json").status_code
            == 200
        )
        ok, missed = Slot.objects.get(pk=EXAMPLE_SLOT_OK), Slot.objects.get(pk=EXAMPLE_SLOT_MISSED)
        # A failed run reported after the one that worked does not erase it.
        assert ok.state == "ok" and ok.run_id is not None
        assert missed.state == "missed" and "not running" in missed.reason
        silent = throughput_slot(self.athens, self.geneva, now - timedelta(hours=2))
        assert expire_overdue_slots(now) == 1
        silent.refresh_from_db()
        assert silent.state == "missed" and "no result from the agent" in silent.reason

    def test_a_result_of_another_path_or_test_type_does_not_settle_a_slot(self) -> None:
        now = timezone.now()
        # The example result's peer is frankfurt, not geneva.
        throughput_slot(self.athens, self.geneva, now, EXAMPLE_SLOT_OK)
        client = self.agent_client(self.athens, self.athens_credential)
        assert client.post(RESULTS_URL, load_example("valid/throughput-ok.json"), format="json").status_code == 200
        assert Slot.objects.get(pk=EXAMPLE_SLOT_OK).state == "planned"

    def test_a_slot_of_another_agent_is_not_settled_by_a_stranger(self) -> None:
        now = timezone.now()
        throughput_slot(self.frankfurt, self.athens, now, EXAMPLE_SLOT_OK)
        client = self.agent_client(self.athens, self.athens_credential)
        assert client.post(RESULTS_URL, load_example("valid/throughput-ok.json"), format="json").status_code == 200
        assert Slot.objects.get(pk=EXAMPLE_SLOT_OK).state == "planned"

    def test_utilization_shows_each_agents_exclusive_time_and_the_horizon(self) -> None:
        plan_exclusive_slots(seed=5)
        reply = self.user_client(self.outsider).get("/api/v1/slots/utilization/")
        assert reply.status_code == 200
        body = reply.json()
        assert 5.9 * 3600 < body["horizon_s"] <= 6 * 3600
        rows = {row["agent"]: row for row in body["agents"]}
        # athens: 4 paths in "first" (2 peers x 2 directions) + 2 in "second", 20 s per 300 s each.
        assert abs(rows["athens"]["demand"] - 6 * 20 / 300) < 1e-6
        assert abs(rows["athens"]["utilization"] - rows["athens"]["demand"]) < 0.02
        # Periods start between the planning lead (90 s) and the horizon's end: 71 or 72 of
        # them per path, as the paths' offsets fall against the clock; a run may slip past the
        # end and is not counted there. So 70 to 72 per path, whatever the time of day.
        assert 4 * 70 <= rows["frankfurt"]["slots_planned"] <= 4 * 72

    def test_slot_list_filters_and_refuses_bad_queries(self) -> None:
        plan_exclusive_slots(seed=5)
        client = self.user_client(self.outsider)
        reply = client.get("/api/v1/slots/", {"agent": "frankfurt", "limit": "10"})
        assert reply.status_code == 200 and len(reply.json()) == 10
        assert all("frankfurt" in (row["source_agent"], row["destination_agent"]) for row in reply.json())
        assert client.get("/api/v1/slots/", {"state": "exploded"}).status_code == 400
        assert client.get("/api/v1/slots/", {"limit": "0"}).status_code == 400
        with self.assertNumQueries(3):  # session, user, slots joined with agents and tests
            client.get("/api/v1/slots/", {"limit": "100"})
        assert Agent.objects.count() == 3


class AgentChangeReplanTests(FathomTestCase):
    def test_an_enrolled_agent_gets_slots_and_a_revoked_one_loses_them(self) -> None:
        # The default throughput test runs every 6 h, as long as the horizon: a path's one period
        # falls in the planning lead (90 s of 6 h) now and then and has no slot yet. Hourly, each
        # path has five or six periods in the horizon whatever the clock says.
        MeshTest.objects.filter(mesh__name="default", test_type="throughput").update(interval_s=3600, slip_s=3600)
        with self.captureOnCommitCallbacks(execute=True):
            geneva, _ = self.enroll("geneva", "198.18.3.1")
        assert Slot.objects.filter(source=geneva, state="planned").exists()
        assert Slot.objects.filter(destination=geneva, state="planned").exists()
        with self.captureOnCommitCallbacks(execute=True):
            revoke_agent(geneva)
        assert not Slot.objects.filter(source=geneva, state="planned").exists()
        assert not Slot.objects.filter(destination=geneva, state="planned").exists()
        assert Slot.objects.filter(source=self.athens, destination=self.frankfurt, state="planned").exists()


class MeshEditSlotTests(FathomTestCase):
    """What a mesh edit does to slots already planned."""

    def setUp(self) -> None:
        self.client_operator = self.user_client(self.operator)
        reply = self.client_operator.post(
            "/api/v1/meshes/",
            {
                "name": "pair",
                "members": [{"agent": "athens"}, {"agent": "frankfurt"}],
                "tests": [{"name": "tput", "test_type": "throughput", "interval_s": 600, "slip_s": 600}],
            },
            format="json",
        )
        assert reply.status_code == 201, reply.content
        now = timezone.now()
        # A run of the current period: its period began, its start has not come.
        current = Slot.objects.filter(mesh_test__mesh__name="pair", source=self.athens).first()
        assert current is not None
        self.current: Slot = current
        Slot.objects.filter(pk=self.current.pk).update(
            period_start=now - timedelta(minutes=5),
            start_at=now + timedelta(minutes=3),
            end_at=now + timedelta(minutes=4),
        )

    def test_an_edit_keeps_the_current_periods_run_of_paths_that_remain(self) -> None:
        reply = self.client_operator.patch("/api/v1/meshes/pair/", {"description": "edited"}, format="json")
        assert reply.status_code == 200
        assert Slot.objects.filter(pk=self.current.pk, state="planned").exists()

    def test_a_removed_member_loses_its_current_run_too(self) -> None:
        reply = self.client_operator.patch("/api/v1/meshes/pair/", {"members": [{"agent": "athens"}]}, format="json")
        assert reply.status_code == 200
        assert not Slot.objects.filter(pk=self.current.pk).exists()
        assert not Slot.objects.filter(mesh_test__mesh__name="pair", state="planned").exists()

    def test_a_removed_test_leaves_no_slot_behind_and_none_in_any_plan(self) -> None:
        reply = self.client_operator.patch("/api/v1/meshes/pair/", {"tests": []}, format="json")
        assert reply.status_code == 200
        assert (
            not Slot.objects.filter(state="planned", start_at__gt=timezone.now())
            .exclude(mesh_test__mesh__name="default")
            .exists()
        )
        plan = self.agent_client(self.athens, self.athens_credential).get("/api/v1/agent/plan/").json()
        assert all(slot["test_id"].startswith("default/") for slot in plan["slots"])
