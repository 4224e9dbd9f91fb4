from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.test import override_settings
from django.utils import timezone

from core import contract
from fathom.testing import FathomTestCase
from inventory.choices import AgentKind
from inventory.models import Agent
from inventory.services import revoke_agent
from meshes.models import Mesh, MeshMember, MeshTest, Slot
from meshes.services.slot_planning import plan_exclusive_slots

PLAN_URL = "/api/v1/agent/plan/"


class PlanTests(FathomTestCase):
    """The default mesh (every agent, perfSONAR's regular tests) as each agent sees it."""

    # Throughput every 6 h with a 6 h horizon: a period starting within the planning lead
    # (90 s) is not in [now + lead, now + horizon), which the beat's previous pass covered in
    # production but not in a fresh test database (a CI run drew one: athens had no slot).
    # Twice the interval always holds a period of each direction.
    @override_settings(SLOT_HORIZON_S=12 * 3600)
    def test_default_mesh_plan_has_the_background_tests_and_the_agents_slots(self) -> None:
        plan_exclusive_slots(seed=1)
        reply = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL)
        assert reply.status_code == 200
        plan = reply.json()
        assert plan["schema_version"] == 1 and plan["agent_id"] == str(self.athens.pk)
        assert plan["valid_until"] > plan["generated_at"]
        tests = {test["type"]: test for test in plan["tests"]}
        assert sorted(tests) == ["flowsweep", "ping", "trace"]
        assert tests["ping"] == {
            "id": f"default/ping:{self.frankfurt.pk}",
            "type": "ping",
            "interval_s": 300,
            "peer": {"id": str(self.frankfurt.pk), "name": "frankfurt", "address": "198.18.2.1"},
            "spec": {"count": 10, "interval_s": 1.0, "size_bytes": 56, "ttl": None},
        }
        assert tests["flowsweep"]["spec"]["flows"] == 16 and tests["trace"]["interval_s"] == 1800
        # Throughput is never a periodic test: it comes as slots the server planned.
        assert all(slot["type"] == "throughput" for slot in plan["slots"])
        mine = Slot.objects.filter(source=self.athens, start_at__lte=timezone.now() + timedelta(days=1))
        assert [slot["id"] for slot in plan["slots"]] == [str(slot.id) for slot in mine.order_by("start_at")]
        assert plan["slots"] and plan["slots"][0]["peer"]["name"] == "frankfurt"
        assert plan["slots"][0]["spec"]["duration_s"] == 20
        # What the agent receives fits the contract, each test's and slot's options included.
        assert not list(contract.validator("plan.v1.schema.json").iter_errors(plan))

    def test_unchanged_plan_is_304_and_changes_when_the_mesh_does(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        etag = client.get(PLAN_URL)["ETag"]
        unchanged = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert unchanged.status_code == 304 and unchanged.content == b""
        self.enroll("geneva", "198.18.3.1")
        changed = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert changed.status_code == 200 and changed["ETag"] != etag
        assert {test["peer"]["name"] for test in changed.json()["tests"]} == {"frankfurt", "geneva"}

    def test_revoked_peers_and_disabled_meshes_leave_the_plan(self) -> None:
        revoke_agent(self.frankfurt)
        plan = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL).json()
        assert plan["tests"] == [] and plan["slots"] == []

    def test_a_disabled_mesh_plans_nothing(self) -> None:
        Mesh.objects.filter(name="default").update(enabled=False)
        plan = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL).json()
        assert plan["tests"] == []

    def test_stale_etag_gets_the_current_plan(self) -> None:
        reply = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL, HTTP_IF_NONE_MATCH='"stale"')
        assert reply.status_code == 200 and reply.json()["tests"]

    def test_plans_need_agent_credentials(self) -> None:
        assert self.client.get(PLAN_URL).status_code in (401, 403)
        assert self.user_client(self.owner).get(PLAN_URL).status_code in (401, 403)

    def test_the_plan_lists_the_slots_that_load_the_agent_or_its_peers(self) -> None:
        """A ping or sweep between two agents that overlaps an exclusive test on either of them
        sees that test's queue: the plan names those times so the agent can move the run."""
        geneva, _ = self.enroll("geneva", "198.18.3.1")
        now = timezone.now()

        def slot(source: Agent, destination: Agent, start_s: float, **fields: str) -> Slot:
            start = now + timedelta(seconds=start_s)
            return Slot.objects.create(
                source=source, destination=destination, test_type="throughput",
                period_start=start, start_at=start, end_at=start + timedelta(seconds=40), **fields,
            )  # fmt: skip

        peers = slot(self.frankfurt, geneva, 120)  # athens pings both: its paths to them are loaded
        mine = slot(self.athens, geneva, 300)
        slot(self.frankfurt, geneva, 600, state="unschedulable")  # it never runs
        slot(self.frankfurt, geneva, -7200)  # over before this hour
        slot(self.frankfurt, geneva, 3 * 3600)  # beyond the hour listed
        client = self.agent_client(self.athens, self.athens_credential)
        reply = client.get(PLAN_URL)
        plan = reply.json()
        assert [window["start_at"] for window in plan["loaded_windows"]] == [
            peers.start_at.isoformat(),
            mine.start_at.isoformat(),
        ]
        assert plan["loaded_windows"][0] == {
            "start_at": peers.start_at.isoformat(),
            "end_at": peers.end_at.isoformat(),
            "agent_ids": [str(self.frankfurt.pk), str(geneva.pk)],
        }
        assert not list(contract.validator("plan.v1.schema.json").iter_errors(plan))
        # A slot's result arriving does not change the plan; a newly planned one does.
        Slot.objects.filter(pk=peers.pk).update(state="ok")
        assert client.get(PLAN_URL, HTTP_IF_NONE_MATCH=reply["ETag"]).status_code == 304
        slot(geneva, self.frankfurt, 900)
        assert client.get(PLAN_URL, HTTP_IF_NONE_MATCH=reply["ETag"]).status_code == 200


class LatencyPlanTests(FathomTestCase):
    """A latency test is planned like a ping (each directed path from its source); the plan of
    the path's destination admits the source to its TWAMP-light reflector."""

    def latency_mesh(self, name: str, **fields: object) -> Mesh:
        mesh = Mesh.objects.create(name=name, **fields)
        MeshTest.objects.create(
            mesh=mesh, name="owd", test_type="latency", spec={"port": 8620, "report_interval_s": 30}, interval_s=30
        )
        return mesh

    def plan(self, agent: Agent, credential: str) -> dict[str, Any]:
        reply = self.agent_client(agent, credential).get(PLAN_URL)
        assert reply.status_code == 200
        plan: dict[str, Any] = reply.json()
        assert not list(contract.validator("plan.v1.schema.json").iter_errors(plan))
        return plan

    def test_each_end_runs_a_session_and_admits_the_other(self) -> None:
        self.latency_mesh("owd", all_agents=True)
        plan = self.plan(self.athens, self.athens_credential)
        [test] = [test for test in plan["tests"] if test["type"] == "latency"]
        assert test == {
            "id": f"owd/owd:{self.frankfurt.pk}",
            "type": "latency",
            "interval_s": 30,  # back to back: one result each report_interval_s
            "peer": {"id": str(self.frankfurt.pk), "name": "frankfurt", "address": "198.18.2.1"},
            "spec": {
                "packet_interval_s": 0.1, "packet_timeout_s": 2, "size_bytes": 41, "dscp": 0, "port": 8620,
                "report_interval_s": 30,
            },
        }  # fmt: skip
        assert plan["twamp_peers"] == [{"address": "198.18.2.1", "port": 8620}]
        assert self.plan(self.frankfurt, self.frankfurt_credential)["twamp_peers"] == [
            {"address": "198.18.1.1", "port": 8620}
        ]

    def test_a_one_way_mesh_plans_one_session_and_only_its_destination_admits(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        before = client.get(PLAN_URL)
        assert before.json()["twamp_peers"] == []
        mesh = self.latency_mesh("owd", kind="disjoint", unidirectional=True)
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt, side="a")
        MeshMember.objects.create(mesh=mesh, agent=self.athens, side="b")
        # athens runs nothing new, but its reflector admits frankfurt: a new plan.
        after = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=before["ETag"])
        assert after.status_code == 200 and after["ETag"] != before["ETag"]
        assert after.json()["tests"] == before.json()["tests"]
        assert after.json()["twamp_peers"] == [{"address": "198.18.2.1", "port": 8620}]
        frankfurt = self.plan(self.frankfurt, self.frankfurt_credential)
        assert [test["peer"]["name"] for test in frankfurt["tests"] if test["type"] == "latency"] == ["athens"]
        assert frankfurt["twamp_peers"] == []
        # The port it sends to is the one admitted.
        MeshTest.objects.filter(mesh=mesh).update(spec={"report_interval_s": 30})
        again = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=after["ETag"])
        assert again.status_code == 200 and again.json()["twamp_peers"] == [{"address": "198.18.2.1", "port": 862}]
        mesh.delete()
        assert client.get(PLAN_URL)["ETag"] == before["ETag"]

    def test_no_session_runs_towards_a_perfsonar_node_but_a_nodes_test_is_admitted(self) -> None:
        self.latency_mesh("owd", all_agents=True)
        self.enroll("geneva", "198.18.3.1")
        Agent.objects.filter(pk=self.frankfurt.pk).update(kind=AgentKind.PERFSONAR)
        plan = self.plan(self.athens, self.athens_credential)
        # A node's twampd answers only sessions set up over TWAMP-Control.
        assert [test["peer"]["name"] for test in plan["tests"] if test["type"] == "latency"] == ["geneva"]
        assert plan["twamp_peers"] == [
            {"address": "198.18.2.1", "port": 8620},
            {"address": "198.18.3.1", "port": 8620},
        ]

    def test_an_agents_path_to_a_node_admits_the_node_that_measures_it(self) -> None:
        # athens towards a node only: the node's twping reports the way back (perfsonar app).
        mesh = self.latency_mesh("owd", kind="disjoint", unidirectional=True)
        Agent.objects.filter(pk=self.frankfurt.pk).update(kind=AgentKind.PERFSONAR)
        MeshMember.objects.create(mesh=mesh, agent=self.athens, side="a")
        MeshMember.objects.create(mesh=mesh, agent=self.frankfurt, side="b")
        plan = self.plan(self.athens, self.athens_credential)
        assert not [test for test in plan["tests"] if test["type"] == "latency"]
        assert plan["twamp_peers"] == [{"address": "198.18.2.1", "port": 8620}]

    def test_a_list_meshs_session_goes_to_each_targets_own_reflector(self) -> None:
        frankfurt_before = self.plan(self.frankfurt, self.frankfurt_credential)
        mesh = self.latency_mesh("routers", kind="list", targets=["Router1.Example.NET", "198.18.9.9"])
        MeshMember.objects.create(mesh=mesh, agent=self.athens, side="a")
        plan = self.plan(self.athens, self.athens_credential)
        sessions = [test for test in plan["tests"] if test["type"] == "latency"]
        # The device's reflector at the spec's port, the target as the mesh spells it (results
        # come back with it, and ingest stores one spelling).
        assert [(test["id"], test["peer"], test["spec"]["port"], test["interval_s"]) for test in sessions] == [
            ("routers/owd:Router1.Example.NET",
             {"id": None, "name": "Router1.Example.NET", "address": "Router1.Example.NET"}, 8620, 30),
            ("routers/owd:198.18.9.9", {"id": None, "name": "198.18.9.9", "address": "198.18.9.9"}, 8620, 30),
        ]  # fmt: skip
        # No Fathom reflector is involved: nobody is admitted, and the other agent's plan is as it was.
        assert plan["twamp_peers"] == []
        frankfurt = self.plan(self.frankfurt, self.frankfurt_credential)
        assert frankfurt["version"] == frankfurt_before["version"] and frankfurt["twamp_peers"] == []
