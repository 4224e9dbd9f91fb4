"""Shared test fixtures: fixed users per role and enrolled agents, built once per class."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, ClassVar
from unittest import mock

from django.contrib.auth.models import User
from rest_framework.test import APIClient, APITestCase

from alerts.defaults import ensure_default_rules
from core import contract
from inventory.models import Agent
from inventory.services import create_enrollment_token, digest, enroll_agent, new_secret
from meshes.models import Mesh, MeshMember, MeshTest
from meshes.services.defaults import ensure_default_mesh

CONTRACT_EXAMPLES = contract.EXAMPLES_DIR / "result-batch"
# The peer the shared contract examples name.
EXAMPLE_PEER_ID = "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f"
# The day the contract examples were recorded. Ingest refuses times older than the raw
# retention, so it judges the examples against this moment, not the wall clock, or they
# would age out of the accepted window as the suite grows old.
EXAMPLES_RECORDED_AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def load_example(relative: str) -> Any:
    return json.loads((CONTRACT_EXAMPLES / relative).read_text())


def add_latency_mesh(spec: dict[str, Any] | None = None) -> Mesh:
    """A mesh of every agent with a latency test (the default mesh has none: a continuous
    test is not every install's choice), so agents may report latency results."""
    spec = spec or {}
    mesh = Mesh.objects.create(name="latency", all_agents=True)
    interval_s = spec.get("report_interval_s", 60)
    MeshTest.objects.create(mesh=mesh, name="latency", test_type="latency", spec=spec, interval_s=interval_s)
    return mesh


def add_list_mesh(name: str, agent: Agent, targets: list[str], test_type: str, spec: dict[str, Any]) -> Mesh:
    """A list mesh of one agent measuring targets (devices without an agent) with one test,
    for tests of apps below meshes, which may not import it."""
    mesh = Mesh.objects.create(name=name, kind="list", targets=targets)
    MeshMember.objects.create(mesh=mesh, agent=agent)
    interval_s = spec.get("report_interval_s", 60) if test_type == "latency" else 300
    MeshTest.objects.create(mesh=mesh, name=test_type, test_type=test_type, spec=spec, interval_s=interval_s)
    return mesh


class FathomTestCase(APITestCase):
    """owner (superuser), operator (staff), outsider (no rights); agents athens and frankfurt.

    Ingest's clock reads `ingest_now` (the contract examples' day); None: the wall clock.
    """

    ingest_now: ClassVar[datetime | None] = EXAMPLES_RECORDED_AT

    owner: ClassVar[User]
    operator: ClassVar[User]
    outsider: ClassVar[User]
    athens: ClassVar[Agent]
    athens_credential: ClassVar[str]
    frankfurt: ClassVar[Agent]
    frankfurt_credential: ClassVar[str]

    @classmethod
    def setUpTestData(cls) -> None:
        cls.owner = User.objects.create_superuser("owner", password="owner-pass-1234")
        cls.operator = User.objects.create_user("operator", password="operator-pass-1234", is_staff=True)
        cls.outsider = User.objects.create_user("outsider", password="outsider-pass-1234")
        # A TransactionTestCase elsewhere may have flushed what the migrations created.
        ensure_default_mesh()
        ensure_default_rules()
        cls.athens, cls.athens_credential = cls.enroll("athens", "198.18.1.1")
        # frankfurt carries the id the contract examples use as their peer.
        cls.frankfurt_credential = new_secret()
        cls.frankfurt = Agent.objects.create(
            id=EXAMPLE_PEER_ID,
            name="frankfurt",
            address="198.18.2.1",
            credential_sha256=digest(cls.frankfurt_credential),
        )
        cls.frankfurt.refresh_from_db()  # pk as a UUID, not the string it was created with

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if cls.ingest_now is not None:
            patcher = mock.patch("measurements.ingest.clock", return_value=cls.ingest_now)
            patcher.start()
            cls.addClassCleanup(patcher.stop)

    @classmethod
    def enroll(cls, name: str, address: str) -> tuple[Agent, str]:
        issued = create_enrollment_token(3600, f"test {name}")
        enrollment = enroll_agent(issued.plaintext, name, address, "test")
        return enrollment.agent, enrollment.credential

    def agent_client(self, agent: Agent, credential: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Agent {agent.pk}:{credential}")
        return client

    def user_client(self, user: User, enforce_csrf: bool = False) -> APIClient:
        client = APIClient(enforce_csrf_checks=enforce_csrf)
        client.force_login(user)
        return client
