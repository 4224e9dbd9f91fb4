"""Operators rename, revoke and decommission agents; each change is audited with it, and bad
input changes nothing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any, ClassVar

from django.utils import timezone

from audit.models import AuditEntry
from fathom.testing import FathomTestCase
from inventory.models import Agent, HostFactsSnapshot
from inventory.services import create_enrollment_token, decommission_agent, revoke_agent
from measurements.models import Run
from meshes.models import Mesh, MeshMember
from meshes.services.paths import mesh_paths

ENROLL_URL = "/api/v1/agents/enroll/"
PLAN_URL = "/api/v1/agent/plan/"


def state(value: Any) -> dict[str, Any]:
    """An audit entry's before or after, which the test expects to be there."""
    assert isinstance(value, dict), value
    return value


class AgentChangeTests(FathomTestCase):
    backbone: ClassVar[Mesh]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.backbone = Mesh.objects.create(name="backbone")
        MeshMember.objects.create(mesh=cls.backbone, agent=cls.athens)
        MeshMember.objects.create(mesh=cls.backbone, agent=cls.frankfurt)

    def url(self, agent: Agent, action: str = "") -> str:
        return f"/api/v1/agents/{agent.pk}/{action + '/' if action else ''}"

    def entries(self) -> list[AuditEntry]:
        return list(AuditEntry.objects.filter(object_type="agent").order_by("id"))

    def test_rename_keeps_the_agent_and_is_audited(self) -> None:
        reply = self.user_client(self.operator).patch(self.url(self.athens), {"name": "athens-2"}, format="json")
        assert reply.status_code == 200, reply.content
        assert reply.json()["id"] == str(self.athens.pk) and reply.json()["name"] == "athens-2"
        assert MeshMember.objects.filter(agent=self.athens).exists()
        assert self.agent_client(self.athens, self.athens_credential).get(PLAN_URL).status_code == 200
        [entry] = self.entries()
        assert (entry.action, entry.object_key, entry.object_repr) == ("rename", str(self.athens.pk), "athens-2")
        assert entry.actor_name == "operator" and entry.via == "session"
        assert entry.before == {
            "name": "athens",
            "address": "198.18.1.1",
            "other_addresses": [],
            "revoked_at": None,
            "decommissioned_at": None,
        }
        assert entry.changes == {"name": ["athens", "athens-2"]}
        same = self.user_client(self.operator).patch(self.url(self.athens), {"name": "athens-2"}, format="json")
        assert same.status_code == 200 and len(self.entries()) == 1, "a rename to its own name records nothing"

    def test_bad_renames_are_field_errors_and_change_nothing(self) -> None:
        decommission_agent(self.frankfurt)
        client = self.user_client(self.operator)
        cases: list[tuple[Any, str, str]] = [
            ({"name": "frankfurt"}, "name", "decommissioned agent"),
            ({"name": "Bad Name"}, "name", "1-63 characters"),
            ({"name": ""}, "name", ""),
            ({}, "name", "give a name or an address"),
            ({"name": "athens-2", "credential": "x"}, "credential", "unknown field"),
            ({"name": "athens-2", "address": "127.0.0.1"}, "address", "loopback"),  # no half-done rename
        ]
        for body, field, message in cases:
            reply = client.patch(self.url(self.athens), body, format="json")
            assert reply.status_code == 400, body
            assert message in reply.json()[field][0], reply.json()
        self.enroll("geneva", "198.18.3.1")
        taken = client.patch(self.url(self.athens), {"name": "geneva"}, format="json")
        assert taken.status_code == 400 and taken.json() == {"name": ["an agent named 'geneva' already exists"]}
        frozen = client.patch(self.url(self.frankfurt), {"name": "frankfurt-2"}, format="json")
        assert frozen.status_code == 400 and "keeps its name" in frozen.json()["name"][0]
        assert client.put(self.url(self.athens), {"name": "x"}, format="json").status_code == 405
        assert client.delete(self.url(self.athens)).status_code == 405
        self.athens.refresh_from_db()
        assert self.athens.name == "athens" and not self.entries()

    def test_viewers_and_agents_may_not_change_agents(self) -> None:
        viewer = self.user_client(self.outsider)
        assert viewer.get(self.url(self.athens)).status_code == 200
        assert viewer.patch(self.url(self.athens), {"name": "x"}, format="json").status_code == 403
        for action in ("revoke", "decommission"):
            assert viewer.post(self.url(self.athens, action)).status_code == 403
            assert self.client.post(self.url(self.athens, action)).status_code == 403
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.post(self.url(self.athens, "decommission")).status_code == 403
        self.athens.refresh_from_db()
        assert self.athens.revoked_at is None and not self.entries()

    def test_revoke_is_audited_once(self) -> None:
        client = self.user_client(self.operator)
        first = client.post(self.url(self.athens, "revoke"))
        assert first.status_code == 200 and first.json()["status"]["value"] == "revoked"
        again = client.post(self.url(self.athens, "revoke"))
        assert again.status_code == 200 and again.json()["revoked_at"] == first.json()["revoked_at"]
        [entry] = self.entries()
        assert entry.action == "revoke" and state(entry.before)["revoked_at"] is None
        assert state(entry.after)["revoked_at"] == first.json()["revoked_at"]
        assert list(entry.changes) == ["revoked_at"]

    def test_decommission_retires_the_agent_and_keeps_its_history(self) -> None:
        facts_at = timezone.now()
        HostFactsSnapshot.objects.create(agent=self.athens, collected_at=facts_at, facts={}, digest="x")
        Run.objects.create(
            id=uuid.uuid4(), started_at=facts_at - timedelta(minutes=1), ended_at=facts_at, source_id=self.athens.pk,
            destination_id=self.frankfurt.pk, target="198.18.2.1", test_type="ping", test_id="t", status="ok",
        )  # fmt: skip
        agent_client = self.agent_client(self.athens, self.athens_credential)
        assert agent_client.get(PLAN_URL).status_code == 200
        reply = self.user_client(self.operator).post(self.url(self.athens, "decommission"))
        assert reply.status_code == 200, reply.content
        body = reply.json()
        assert body["status"] == {"value": "decommissioned", "label": "Decommissioned", "color": "#424a53"}
        assert body["decommissioned_at"] is not None and body["revoked_at"] == body["decommissioned_at"]
        # Its next poll is refused; it is in no mesh and on no path; its history stays.
        assert agent_client.get(PLAN_URL).status_code == 401
        assert not MeshMember.objects.filter(agent=self.athens).exists()
        assert MeshMember.objects.filter(agent=self.frankfurt).exists()
        assert all(self.athens not in (path.source, path.destination) for path in mesh_paths())
        assert HostFactsSnapshot.objects.filter(agent=self.athens).exists()
        assert Run.objects.filter(source_id=self.athens.pk).exists()
        [entry] = self.entries()
        assert entry.action == "decommission" and entry.object_repr == "athens"
        assert sorted(entry.changes) == ["decommissioned_at", "revoked_at"]
        again = self.user_client(self.operator).post(self.url(self.athens, "decommission"))
        assert again.status_code == 200 and len(self.entries()) == 1

    def test_a_revoked_agent_may_be_decommissioned(self) -> None:
        revoke_agent(self.athens)
        revoked_at = self.athens.revoked_at
        reply = self.user_client(self.operator).post(self.url(self.athens, "decommission"))
        assert reply.status_code == 200 and reply.json()["status"]["value"] == "decommissioned"
        self.athens.refresh_from_db()
        assert self.athens.revoked_at == revoked_at and self.athens.decommissioned_at is not None
        [entry] = self.entries()
        assert list(entry.changes) == ["decommissioned_at"]
        assert self.user_client(self.operator).post(self.url(self.athens, "revoke")).status_code == 200
        assert len(self.entries()) == 1

    def test_decommissioned_status_wins(self) -> None:
        Agent.objects.filter(pk=self.athens.pk).update(last_seen_at=timezone.now())
        decommission_agent(self.athens)
        listed = {a["name"]: a for a in self.user_client(self.outsider).get("/api/v1/agents/").json()}
        assert listed["athens"]["status"]["value"] == "decommissioned"
        assert listed["frankfurt"]["decommissioned_at"] is None

    def test_a_decommissioned_name_is_never_enrolled_again(self) -> None:
        bound = create_enrollment_token(600, agent_name="athens", rekey=True)
        fresh = create_enrollment_token(600)
        decommission_agent(self.athens)
        for token in (bound.plaintext, fresh.plaintext):
            body = {"token": token, "name": "athens", "address": "198.18.1.1"}
            reply = self.client.post(ENROLL_URL, body, format="json")
            assert reply.status_code == 403 and "decommissioned agent" in reply.json()["detail"]
        self.athens.refresh_from_db()
        assert self.athens.decommissioned_at is not None
