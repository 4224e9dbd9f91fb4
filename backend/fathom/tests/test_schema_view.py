"""The OpenAPI schema endpoint: for signed-in users, built once; refused to strangers and agents."""

from __future__ import annotations

from fathom.schema import built_schema
from fathom.testing import FathomTestCase


class SchemaViewTests(FathomTestCase):
    def test_strangers_get_no_schema(self) -> None:
        assert self.client.get("/api/v1/schema/").status_code in (401, 403)

    def test_signed_in_users_get_it_built_once(self) -> None:
        built_schema.cache_clear()
        accept = "application/vnd.oai.openapi+json"
        first = self.user_client(self.outsider).get("/api/v1/schema/", HTTP_ACCEPT=accept)
        again = self.user_client(self.operator).get("/api/v1/schema/", HTTP_ACCEPT=accept)
        assert first.status_code == again.status_code == 200
        assert first.json()["openapi"].startswith("3.") and "/api/v1/auth/login/" in first.json()["paths"]
        assert first.json() == again.json()
        assert built_schema.cache_info().misses == 1

    def test_agents_get_no_schema(self) -> None:
        agent = self.agent_client(self.athens, self.athens_credential)
        assert agent.get("/api/v1/schema/").status_code in (401, 403)
