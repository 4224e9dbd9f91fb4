"""An agent reports results only on the paths it was asked to measure: its plan's, or a slot
planned for it. Anything else refuses the batch, naming each refused result."""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta
from typing import Any, ClassVar
from unittest import mock

from django.utils import timezone

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase, load_example
from inventory.models import Agent
from measurements.models import PingSample, Run
from meshes.choices import MeshKind
from meshes.models import IssuedPlan, Mesh, MeshMember, MeshTest
from meshes.tests.test_slot_service import EXAMPLE_SLOT_OK, throughput_slot

RESULTS_URL = "/api/v1/agent/results/"


def ping_to(peer_id: str | None, target: str = "198.18.1.2") -> dict[str, Any]:
    """The ping-ok example's result, as a new run to another peer or external target."""
    result: dict[str, Any] = copy.deepcopy(load_example("valid/ping-ok.json")["results"][0])
    return {**result, "id": str(uuid.uuid4()), "peer_id": peer_id, "target": target}


class ResultPathsCase(FathomTestCase):
    geneva: ClassVar[Agent]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.geneva = Agent.objects.create(name="geneva", address="198.18.3.1", credential_sha256="0" * 64)
        # Only athens <-> frankfurt pings, and athens pings one external host.
        Mesh.objects.filter(name="default").update(enabled=False)
        pair = Mesh.objects.create(name="pair", kind=MeshKind.MESH)
        MeshMember.objects.create(mesh=pair, agent=cls.athens)
        MeshMember.objects.create(mesh=pair, agent=cls.frankfurt)
        MeshTest.objects.create(mesh=pair, name="ping", test_type="ping", interval_s=60)
        web = Mesh.objects.create(name="web", kind=MeshKind.LIST, targets=["192.0.2.80"])
        MeshMember.objects.create(mesh=web, agent=cls.athens)
        MeshTest.objects.create(mesh=web, name="ping", test_type="ping", interval_s=60)

    def post(self, *results: dict[str, Any]) -> Any:
        client = self.agent_client(self.athens, self.athens_credential)
        return client.post(RESULTS_URL, {"schema_version": 1, "results": list(results)}, format="json")


class ResultPathTests(ResultPathsCase):
    def test_results_on_planned_paths_are_stored(self) -> None:
        reply = self.post(ping_to(str(self.frankfurt.pk)), ping_to(None, "192.0.2.80"))
        assert reply.status_code == 200, reply.content
        assert Run.objects.count() == 2

    def test_a_path_outside_the_plan_refuses_the_batch_naming_each_refused_result(self) -> None:
        planned = ping_to(str(self.frankfurt.pk))
        reply = self.post(planned, ping_to(str(self.geneva.pk)), ping_to(None, "203.0.113.9"))
        assert reply.status_code == 400
        errors = reply.json()["errors"]
        assert [error["path"] for error in errors] == ["results/1/peer_id", "results/2/target"], errors
        assert errors[0]["message"] == f"path athens -> {self.geneva.pk}: no ping test on it in this agent's plan"
        assert "203.0.113.9" in errors[1]["message"]
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0

    def test_a_test_type_the_path_does_not_run_is_refused(self) -> None:
        batch = load_example("valid/throughput-ok.json")  # frankfurt's path has no throughput test
        reply = self.agent_client(self.athens, self.athens_credential).post(RESULTS_URL, batch, format="json")
        assert reply.status_code == 400 and "no throughput test" in json.dumps(reply.json()["errors"])
        assert Run.objects.count() == 0

    def test_a_run_in_a_slot_planned_for_the_agent_is_accepted_after_its_test_went(self) -> None:
        throughput_slot(self.athens, self.frankfurt, EXAMPLES_RECORDED_AT, EXAMPLE_SLOT_OK)
        batch = load_example("valid/throughput-ok.json")
        reply = self.agent_client(self.athens, self.athens_credential).post(RESULTS_URL, batch, format="json")
        assert reply.status_code == 200, reply.content

    def test_a_path_to_itself_is_refused(self) -> None:
        reply = self.post(ping_to(str(self.athens.pk)))
        assert reply.status_code == 400 and reply.json()["errors"][0]["path"] == "results/0/peer_id"


class ResultsUnderAnEarlierPlanTests(ResultPathsCase):
    """A result is judged by the plan it was measured under (its plan_version, as issued to
    this agent), not only by the plan in force when it arrives: an agent that spooled results
    through an outage or a mesh edit loses none of what it was asked to measure."""

    # ping-ok.json's run started 2 h before EXAMPLES_RECORDED_AT.
    def serve_plan(self, issued_at: datetime = EXAMPLES_RECORDED_AT - timedelta(hours=3)) -> str:
        reply = self.agent_client(self.athens, self.athens_credential).get("/api/v1/agent/plan/")
        assert reply.status_code == 200, reply.content
        version: str = reply.json()["version"]
        IssuedPlan.objects.filter(agent=self.athens, version=version).update(
            issued_at=issued_at, last_served_at=issued_at
        )
        return version

    def measured_under(self, version: str, peer_id: str | None, target: str = "198.18.1.2") -> dict[str, Any]:
        return {**ping_to(peer_id, target), "plan_version": version}

    def test_a_result_measured_before_its_test_was_removed_is_stored(self) -> None:
        version = self.serve_plan()
        Mesh.objects.filter(name__in=["pair", "web"]).update(enabled=False)
        reply = self.post(
            self.measured_under(version, str(self.frankfurt.pk)), self.measured_under(version, None, "192.0.2.80")
        )
        assert reply.status_code == 200, reply.content
        assert Run.objects.count() == 2

    def test_serving_the_same_plan_again_records_it_once(self) -> None:
        first = self.serve_plan(timezone.now())
        assert self.serve_plan(timezone.now()) == first
        assert IssuedPlan.objects.filter(agent=self.athens).count() == 1

    def test_a_plan_version_never_issued_to_the_agent_does_not_vouch(self) -> None:
        self.serve_plan()
        Mesh.objects.filter(name="pair").update(enabled=False)
        reply = self.post(self.measured_under("f" * 32, str(self.frankfurt.pk)))
        assert reply.status_code == 400 and "no ping test on it" in reply.json()["errors"][0]["message"]

    def test_another_agents_plan_does_not_vouch(self) -> None:
        version = self.serve_plan()
        IssuedPlan.objects.filter(agent=self.athens).update(agent=self.frankfurt)
        Mesh.objects.filter(name="pair").update(enabled=False)
        reply = self.post(self.measured_under(version, str(self.frankfurt.pk)))
        assert reply.status_code == 400

    def test_a_result_from_before_the_plan_was_issued_is_refused(self) -> None:
        version = self.serve_plan(issued_at=EXAMPLES_RECORDED_AT - timedelta(hours=1))
        Mesh.objects.filter(name="pair").update(enabled=False)
        reply = self.post(self.measured_under(version, str(self.frankfurt.pk)))
        assert reply.status_code == 400 and Run.objects.count() == 0

    def test_a_path_the_plan_never_had_is_refused(self) -> None:
        version = self.serve_plan()
        reply = self.post(self.measured_under(version, str(self.geneva.pk)))
        assert reply.status_code == 400 and reply.json()["errors"][0]["path"] == "results/0/peer_id"

    def test_a_revoked_peer_is_refused_whatever_plan_the_result_was_measured_under(self) -> None:
        version = self.serve_plan()
        Agent.objects.filter(pk=self.frankfurt.pk).update(revoked_at=timezone.now())
        reply = self.post(self.measured_under(version, str(self.frankfurt.pk)))
        assert reply.status_code == 400
        assert reply.json()["errors"][0]["message"].endswith("is revoked")
        assert Run.objects.count() == 0

    def test_a_batch_its_plan_vouches_for_does_not_read_the_agents_meshes(self) -> None:
        # Every upload of a 500-agent fleet takes this path: the issued plan answers it.
        version = self.serve_plan()
        with mock.patch("meshes.services.refusals.mesh_paths", side_effect=AssertionError("the mesh was read")):
            reply = self.post(self.measured_under(version, str(self.frankfurt.pk)))
        assert reply.status_code == 200, reply.content
