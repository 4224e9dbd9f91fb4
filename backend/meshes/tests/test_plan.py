from __future__ import annotations

from fathom.testing import FathomTestCase
from inventory.services import revoke_agent

PLAN_URL = "/api/v1/agent/plan/"


class PlanTests(FathomTestCase):
    def test_full_mesh_ping_plan(self) -> None:
        reply = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL)
        assert reply.status_code == 200
        plan = reply.json()
        assert plan["schema_version"] == 1 and plan["agent_id"] == str(self.athens.pk)
        assert plan["valid_until"] > plan["generated_at"]
        assert plan["tests"] == [
            {
                "id": f"ping:{self.frankfurt.pk}",
                "type": "ping",
                "interval_s": 60,
                "peer": {"id": str(self.frankfurt.pk), "name": "frankfurt", "address": "198.18.2.1"},
                "spec": {"count": 10, "interval_s": 1.0, "size_bytes": 56, "ttl": None},
            }
        ]
        assert reply["ETag"] == f'"{plan["version"]}"'

    def test_unchanged_plan_is_304_and_changes_when_the_mesh_does(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        etag = client.get(PLAN_URL)["ETag"]
        unchanged = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert unchanged.status_code == 304 and unchanged.content == b""
        self.enroll("geneva", "198.18.3.1")
        changed = client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag)
        assert changed.status_code == 200 and changed["ETag"] != etag
        assert {test["peer"]["name"] for test in changed.json()["tests"]} == {"frankfurt", "geneva"}

    def test_revoked_peers_leave_the_plan(self) -> None:
        revoke_agent(self.frankfurt)
        plan = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL).json()
        assert plan["tests"] == []

    def test_stale_etag_gets_the_current_plan(self) -> None:
        reply = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL, HTTP_IF_NONE_MATCH='"stale"')
        assert reply.status_code == 200 and reply.json()["tests"]
