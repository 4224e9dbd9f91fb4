"""Schema fuzzing (issue 17): schemathesis generates requests for every operation of the
committed OpenAPI schema, valid and invalid, and sends them to the real application (in
process, on the test database) as an agent, as a signed-in viewer, as a stranger and with an
admin's read-write API token (so every write is tried with bad input too). No response may be
a 5xx, and every response must match what the schema says of it. Each operation gets the most
examples as the caller it serves (an agent for the agent API, the admin token for the rest)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from fathom.wsgi import application
from inventory.services import create_enrollment_token, enroll_agent

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
SCHEMA = schemathesis.openapi.from_path(OPENAPI)
SCHEMA.app = application
# For the callers an operation refuses: hypothesis' examples only, without the coverage phase's
# thousands of boundary cases per operation (the caller it serves gets those).
REFUSED = schemathesis.openapi.from_path(
    OPENAPI, config=schemathesis.config.SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
)
REFUSED.app = application
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
EXAMPLES_PER_OPERATION = 5


def viewer_credentials() -> dict[str, Any]:
    """A signed-in user without staff rights: a session cookie and a CSRF pair."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("fuzz-viewer", password="fuzz-viewer-pass-1234")
    client = Client()
    client.force_login(user)
    csrf = _get_new_csrf_string()
    return {
        "cookies": {"sessionid": client.cookies["sessionid"].value, "csrftoken": csrf},
        "headers": {"X-CSRFToken": csrf},
    }


def admin_token_credentials() -> dict[str, Any]:
    """An admin's read-write API token: every operation, writes included, gets past its role."""
    from django.contrib.auth import get_user_model

    from accounts.choices import TokenScope
    from accounts.services import create_api_token

    admin = get_user_model().objects.create_superuser("fuzz-admin", password="fuzz-admin-pass-1234")
    token = create_api_token(admin, "fuzz", TokenScope.WRITE, None).plaintext
    return {"headers": {"Authorization": f"Bearer {token}"}, "cookies": {}}


def agent_credentials() -> dict[str, Any]:
    issued = create_enrollment_token(3600, "fuzz")
    enrolled = enroll_agent(issued.plaintext, "fuzz-agent", "198.18.9.1", "test")
    return {"headers": {"Authorization": f"Agent {enrolled.agent.pk}:{enrolled.credential}"}, "cookies": {}}


@pytest.fixture(autouse=True)
def connections_kept_open() -> Iterator[None]:
    """The test database lives in one transaction: a request's end must not close it (what
    Django's own test client does, for a WSGI client it does not know)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def as_role(request: pytest.FixtureRequest, db: None) -> dict[str, Any]:
    role: str = request.param
    if role == "viewer":
        return viewer_credentials()
    if role == "agent":
        return agent_credentials()
    if role == "admin token":
        return admin_token_credentials()
    return {"headers": {}, "cookies": {}}


# The agent API (/api/v1/agent/...) and the rest, which people and their tokens call.
AGENT_API = r"^/api/v1/agent/"
AGENT_OPERATIONS = SCHEMA.include(path_regex=AGENT_API)
USER_OPERATIONS = SCHEMA.exclude(path_regex=AGENT_API)
SERVED = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)
# Callers other than the one an operation serves are mostly refused before its handler reads
# the request, so fewer examples find what there is to find (a viewer's reads do reach it,
# and the admin token's examples read the same).
REFUSED_SETTINGS = settings(SERVED, max_examples=3)


def call(case: Any, as_role: dict[str, Any]) -> None:
    case.call_and_validate(headers=as_role["headers"], cookies=as_role["cookies"], checks=CHECKS)


@pytest.mark.parametrize("as_role", ["admin token"], indirect=True)
@USER_OPERATIONS.parametrize()
@SERVED
def test_no_request_gets_a_server_error_or_an_undocumented_answer(case: Any, as_role: dict[str, Any]) -> None:
    call(case, as_role)


@pytest.mark.parametrize("as_role", ["agent"], indirect=True)
@AGENT_OPERATIONS.parametrize()
@SERVED
def test_no_agent_request_gets_a_server_error_or_an_undocumented_answer(case: Any, as_role: dict[str, Any]) -> None:
    call(case, as_role)


@pytest.mark.parametrize("as_role", ["anonymous", "viewer", "agent"], indirect=True)
@REFUSED.exclude(path_regex=AGENT_API).parametrize()
@REFUSED_SETTINGS
def test_other_callers_of_the_user_api_get_no_server_error(case: Any, as_role: dict[str, Any]) -> None:
    call(case, as_role)


@pytest.mark.parametrize("as_role", ["anonymous", "viewer", "admin token"], indirect=True)
@REFUSED.include(path_regex=AGENT_API).parametrize()
@REFUSED_SETTINGS
def test_other_callers_of_the_agent_api_get_no_server_error(case: Any, as_role: dict[str, Any]) -> None:
    call(case, as_role)


@pytest.mark.parametrize(
    ("as_role", "path", "expected"),
    [("viewer", "/api/v1/agents/", 200), ("agent", "/api/v1/agent/plan/", 200), ("anonymous", "/api/v1/agents/", 403)],
    indirect=["as_role"],
)
def test_the_fuzzed_roles_are_who_they_claim(as_role: dict[str, Any], path: str, expected: int) -> None:
    """The fuzzing above reaches past authentication: each role's credentials work."""
    client = Client(headers=as_role["headers"])
    for name, value in as_role["cookies"].items():
        client.cookies[name] = value
    assert client.get(path).status_code == expected
