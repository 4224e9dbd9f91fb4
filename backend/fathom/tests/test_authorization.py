"""Who may call what: every API endpoint and method against every kind of caller.

The table below classifies each (path, method) of the OpenAPI schema by the least role that
may call it. The test asserts that the table covers the schema exactly (a new endpoint with no
row fails here) and then calls every endpoint as each caller: those below the row's role must
be refused (401 or 403) and those at or above it must get past authorization (any other
status; a 400 for the empty body is fine). Each call runs in a savepoint rolled back after it,
so one caller's DELETE does not change what the next one sees.
"""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar

from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.choices import TokenScope
from accounts.services import create_api_token
from alerts.models import Channel, Incident, Rule, Silence
from analysis.models import Finding
from fathom.schema import built_schema
from fathom.testing import FathomTestCase
from inventory.services import create_enrollment_token

PUBLIC, AGENT, SESSION, VIEWER, OPERATOR, ADMIN = "public", "agent", "session", "viewer", "operator", "admin"
# A perfSONAR node's archive token only: no caller in this table holds one.
NODE = "node"

# (path, method) -> the least role that may call it. "agent": agent credentials only.
ACCESS: dict[tuple[str, str], str] = {
    ("/api/v1/health/", "GET"): PUBLIC,
    ("/api/v1/auth/csrf/", "GET"): PUBLIC,
    ("/api/v1/auth/login/", "POST"): PUBLIC,
    ("/api/v1/agents/enroll/", "POST"): PUBLIC,
    ("/api/v1/agent/host-facts/", "PUT"): AGENT,
    ("/api/v1/agent/plan/", "GET"): AGENT,
    ("/api/v1/agent/results/", "POST"): AGENT,
    ("/api/v1/auth/logout/", "POST"): VIEWER,
    ("/api/v1/auth/me/", "GET"): VIEWER,
    # A session's own password: an API token may not change it (refused as if signed out).
    ("/api/v1/auth/password/", "POST"): SESSION,
    ("/api/v1/choices/", "GET"): VIEWER,
    ("/api/v1/paths/", "GET"): VIEWER,
    ("/api/v1/paths/history/", "GET"): VIEWER,
    ("/api/v1/paths/rtt/", "GET"): VIEWER,
    ("/api/v1/paths/latency/", "GET"): VIEWER,
    ("/api/v1/paths/runs/", "GET"): VIEWER,
    ("/api/v1/paths/routes/", "GET"): VIEWER,
    ("/api/v1/targets/", "GET"): VIEWER,
    ("/api/v1/targets/rtt/", "GET"): VIEWER,
    ("/api/v1/targets/latency/", "GET"): VIEWER,
    ("/api/v1/targets/runs/", "GET"): VIEWER,
    ("/api/v1/targets/routes/", "GET"): VIEWER,
    ("/api/v1/slots/", "GET"): VIEWER,
    ("/api/v1/slots/utilization/", "GET"): VIEWER,
    ("/api/v1/analysis/findings/", "GET"): VIEWER,
    ("/api/v1/analysis/findings/{id}/changes/", "GET"): VIEWER,
    ("/api/v1/analysis/meshes/{name}/grid/", "GET"): VIEWER,
    ("/api/v1/analysis/path/", "GET"): VIEWER,
    ("/api/v1/analysis/path/timeline/", "GET"): VIEWER,
    ("/api/v1/analysis/paths/", "GET"): VIEWER,
    ("/api/v1/analysis/paths/spark/", "GET"): VIEWER,
    ("/api/v1/alerts/summary/", "GET"): VIEWER,
    # Personal API tokens: everyone manages their own (the {id} is the caller's own token).
    ("/api/v1/api-tokens/", "GET"): VIEWER,
    # Tokens are made from a session: a token that made tokens would outlive its own end.
    ("/api/v1/api-tokens/", "POST"): SESSION,
    ("/api/v1/api-tokens/{id}/", "DELETE"): VIEWER,
    # Meshes: everyone reads, operators change.
    ("/api/v1/meshes/", "GET"): VIEWER,
    ("/api/v1/meshes/", "POST"): OPERATOR,
    ("/api/v1/meshes/{name}/", "GET"): VIEWER,
    ("/api/v1/meshes/{name}/", "PUT"): OPERATOR,
    ("/api/v1/meshes/{name}/", "PATCH"): OPERATOR,
    ("/api/v1/meshes/{name}/", "DELETE"): OPERATOR,
    ("/api/v1/meshes/preview/", "POST"): OPERATOR,
    ("/api/v1/meshes/{name}/history/", "GET"): VIEWER,
    ("/api/v1/meshes/{name}/revert/", "POST"): OPERATOR,
    # Agents and their enrolment: operators.
    ("/api/v1/agents/", "GET"): VIEWER,
    ("/api/v1/agents/{id}/", "GET"): VIEWER,
    ("/api/v1/agents/{id}/", "PATCH"): OPERATOR,
    ("/api/v1/agents/{id}/revoke/", "POST"): OPERATOR,
    ("/api/v1/agents/{id}/decommission/", "POST"): OPERATOR,
    ("/api/v1/enrollment-tokens/", "GET"): OPERATOR,
    ("/api/v1/enrollment-tokens/", "POST"): OPERATOR,
    ("/api/v1/enrollment-tokens/{id}/", "DELETE"): OPERATOR,
    # Incidents and silences: operators act on them.
    ("/api/v1/alerts/incidents/", "GET"): VIEWER,
    ("/api/v1/alerts/incidents/{id}/", "GET"): VIEWER,
    ("/api/v1/alerts/incidents/{id}/acknowledge/", "POST"): OPERATOR,
    ("/api/v1/alerts/incidents/{id}/resolve/", "POST"): OPERATOR,
    ("/api/v1/alerts/silences/", "GET"): VIEWER,
    ("/api/v1/alerts/silences/", "POST"): OPERATOR,
    ("/api/v1/alerts/silences/{id}/", "GET"): VIEWER,
    ("/api/v1/alerts/silences/{id}/expire/", "POST"): OPERATOR,
    # Rules and channels are settings: admins.
    ("/api/v1/alerts/rules/", "GET"): VIEWER,
    ("/api/v1/alerts/rules/", "POST"): ADMIN,
    ("/api/v1/alerts/rules/{id}/", "GET"): VIEWER,
    ("/api/v1/alerts/rules/{id}/", "PUT"): ADMIN,
    ("/api/v1/alerts/rules/{id}/", "PATCH"): ADMIN,
    ("/api/v1/alerts/rules/{id}/", "DELETE"): ADMIN,
    ("/api/v1/alerts/channels/", "GET"): VIEWER,
    ("/api/v1/alerts/channels/", "POST"): ADMIN,
    ("/api/v1/alerts/channels/{id}/", "GET"): VIEWER,
    ("/api/v1/alerts/channels/{id}/", "PUT"): ADMIN,
    ("/api/v1/alerts/channels/{id}/", "PATCH"): ADMIN,
    ("/api/v1/alerts/channels/{id}/", "DELETE"): ADMIN,
    ("/api/v1/alerts/channels/{id}/test/", "POST"): ADMIN,
    # People and the audit log: admins.
    ("/api/v1/people/", "GET"): ADMIN,
    ("/api/v1/people/", "POST"): ADMIN,
    ("/api/v1/people/{id}/", "GET"): ADMIN,
    ("/api/v1/people/{id}/", "PATCH"): ADMIN,
    ("/api/v1/audit/", "GET"): ADMIN,
    # perfSONAR nodes: everyone reads, operators register, change, check and remove them; the
    # archive token is an operator's secret; the archiver's push needs a node's own token.
    ("/api/v1/perfsonar/nodes/", "GET"): VIEWER,
    ("/api/v1/perfsonar/nodes/", "POST"): OPERATOR,
    ("/api/v1/perfsonar/nodes/{name}/", "GET"): VIEWER,
    ("/api/v1/perfsonar/nodes/{name}/", "PATCH"): OPERATOR,
    ("/api/v1/perfsonar/nodes/{name}/", "DELETE"): OPERATOR,
    ("/api/v1/perfsonar/nodes/{name}/check/", "POST"): OPERATOR,
    ("/api/v1/perfsonar/nodes/{name}/tasks/", "GET"): VIEWER,
    ("/api/v1/perfsonar/nodes/{name}/archive-token/", "GET"): OPERATOR,
    ("/api/v1/perfsonar/nodes/{name}/archive-token/", "POST"): OPERATOR,
    ("/api/v1/perfsonar/archive/", "POST"): NODE,
    ("/api/v1/perfsonar/psconfig/import/", "POST"): OPERATOR,
    ("/api/v1/perfsonar/psconfig/{mesh}.json", "GET"): VIEWER,
}

RANK = {VIEWER: 0, OPERATOR: 1, ADMIN: 2}
SAFE = {"GET", "HEAD", "OPTIONS"}


def schema_endpoints() -> set[tuple[str, str]]:
    return {
        (path, method.upper())
        for path, operations in built_schema()["paths"].items()
        for method in operations
        if method in {"get", "post", "put", "patch", "delete"}
    }


class AuthorizationTableTests(FathomTestCase):
    """Callers: nobody, an agent, a viewer, an operator, an admin, an admin's read-only token
    and an operator's read-write token."""

    own_token_ids: ClassVar[dict[str, int]]
    read_token: ClassVar[str]
    write_token: ClassVar[str]
    ids: ClassVar[dict[str, str]]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        later = timezone.now() + timedelta(days=1)
        channel = Channel.objects.create(name="noc", kind="email", config={"to": ["noc@example.org"]})
        incident = Incident.objects.create(group_key="agent:athens", title="athens down")
        silence = Silence.objects.create(
            matchers=[{"name": "agent", "op": "=", "value": "athens"}],
            starts_at=timezone.now(),
            ends_at=later,
            created_by="operator",
            comment="works",
        )
        enrollment = create_enrollment_token(3600, "spare")
        finding = Finding.objects.create(
            source=cls.athens, destination=cls.frankfurt, metric="rtt", started_at=later, detected_at=later,
            direction="up", baseline=20.0, current=24.0, magnitude=4.0, unit="ms",
        )  # fmt: skip
        cls.ids = {
            "findings": str(finding.pk),
            "agents": str(cls.athens.pk),
            "channels": str(channel.pk),
            "incidents": str(incident.pk),
            "rules": str(Rule.objects.order_by("pk").values_list("pk", flat=True)[0]),
            "silences": str(silence.pk),
            "enrollment-tokens": str(enrollment.token.pk),
            "people": str(cls.outsider.pk),
        }
        cls.read_token = create_api_token(cls.owner, "read", TokenScope.READ, later).plaintext
        cls.write_token = create_api_token(cls.operator, "write", TokenScope.WRITE, later).plaintext
        cls.own_token_ids = {
            username: create_api_token(user, "own", TokenScope.READ, later).token.pk
            for username, user in (("outsider", cls.outsider), ("operator", cls.operator), ("owner", cls.owner))
        }

    def caller(self, name: str) -> tuple[APIClient, str | None, str | None]:
        """The client, the role it acts with, and its username (for its own API token)."""
        client = APIClient()
        if name == "agent":
            client.credentials(HTTP_AUTHORIZATION=f"Agent {self.athens.pk}:{self.athens_credential}")
            return client, AGENT, None
        if name == "read token (admin)":
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.read_token}")
            return client, ADMIN, "owner"
        if name == "write token (operator)":
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.write_token}")
            return client, OPERATOR, "operator"
        users = {"viewer": self.outsider, "operator": self.operator, "admin": self.owner}
        if name in users:
            client.force_login(users[name])
            return client, name, users[name].username
        return client, None, None

    def url(self, path: str, username: str | None) -> str:
        if "{name}" in path:
            return path.replace("{name}", "default")
        if "{mesh}" in path:
            return path.replace("{mesh}", "default")
        if "{id}" in path:
            collection = path.removeprefix("/api/v1/").removeprefix("alerts/").removeprefix("analysis/").split("/")[0]
            if collection == "api-tokens":
                return path.replace("{id}", str(self.own_token_ids.get(username or "", 0)))
            return path.replace("{id}", self.ids[collection])
        return path

    def expected(self, needed: str, role: str | None, method: str, caller: str) -> bool:
        if needed == PUBLIC:
            return True
        if needed == NODE:
            return False
        if needed == AGENT or role == AGENT:
            return needed == role
        if role is None:
            return False
        if needed == SESSION:
            return "token" not in caller
        if caller.startswith("read token") and method not in SAFE:
            return False
        return RANK[role] >= RANK[needed]

    def call(self, client: APIClient, method: str, url: str) -> int:
        savepoint = transaction.savepoint()
        try:
            reply = getattr(client, method.lower())(url, {}, format="json")
            return int(reply.status_code)
        finally:
            transaction.savepoint_rollback(savepoint)

    def test_the_table_covers_every_endpoint_of_the_schema(self) -> None:
        endpoints = schema_endpoints()
        assert sorted(endpoints - set(ACCESS)) == [], "endpoints with no row in ACCESS"
        assert sorted(set(ACCESS) - endpoints) == [], "rows in ACCESS for endpoints that are gone"

    def test_every_caller_against_every_endpoint(self) -> None:
        callers = [
            "nobody",
            "agent",
            "viewer",
            "operator",
            "admin",
            "read token (admin)",
            "write token (operator)",
        ]
        wrong: list[str] = []
        calls = 0
        for (path, method), needed in sorted(ACCESS.items()):
            for name in callers:
                client, role, username = self.caller(name)
                status = self.call(client, method, self.url(path, username))
                calls += 1
                allowed = status not in (401, 403)
                if status >= 500 or allowed != self.expected(needed, role, method, name):
                    want = "allowed" if self.expected(needed, role, method, name) else "refused"
                    wrong.append(f"{method} {path} as {name}: {status}, want {want}")
        assert wrong == [], "\n".join(wrong)
        assert calls == len(ACCESS) * len(callers)
