"""Fathom operated from the browser by people of each role (issue 13): an admin adds people, an
operator builds a mesh with its plan preview and enrols a real agent with a token made in the
UI, whose first result the operator then sees; a viewer is offered no change and refused one
by the API; an admin revokes the agent, which is refused at its next contact, finds that in
the audit log and makes a read-only API token that a script then uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from .conftest import SYSTEST_NET, Agent, Stack, free_port, log_path, wait_for

MESH = "ops-edge"
OPERATOR = {"username": "olga", "password": "olga-long-pass-42", "role": "operator"}
VIEWER = {"username": "victor", "password": "victor-long-pass-42", "role": "viewer"}


def as_person(person: dict[str, str]) -> dict[str, str]:
    return {"FATHOM_USER": person["username"], "FATHOM_PASSWORD": person["password"]}


@pytest.mark.browser
def test_people_of_each_role_operate_fathom_in_the_browser(stack: Stack, tmp_path: Path) -> None:
    a, b = stack.agents
    seen = stack.browser_check("operate-people", FATHOM_PEOPLE=json.dumps([OPERATOR, VIEWER]))
    assert seen["roles"] == {"olga": "operator", "victor": "viewer"}

    newcomer = Agent("sys-c", f"{SYSTEST_NET}.4", free_port(), tmp_path / "agent-c")
    http = stack.session()
    try:
        seen = stack.browser_check(
            "operate-mesh",
            **as_person(OPERATOR),
            FATHOM_MESH=MESH,
            FATHOM_MEMBERS=f"{a.name},{b.name}",
            FATHOM_NEW_AGENT=newcomer.name,
            FATHOM_NEW_ADDRESS=newcomer.address,
        )
        # The preview named both members; the saved mesh is what the editor showed.
        assert a.name in seen["previewText"] and b.name in seen["previewText"]
        mesh = http.get(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=10).json()
        assert sorted(m["agent"] for m in mesh["members"]) == [a.name, b.name]
        assert [(t["name"], t["test_type"], t["interval_s"]) for t in mesh["tests"]] == [("tput", "throughput", 3600)]
        history = http.get(f"{stack.url}/api/v1/meshes/{MESH}/history/", timeout=10).json()
        assert [(e["action"], e["actor_name"]) for e in history] == [("create", "olga")]

        # A real agent enrols with the token the page showed, and starts measuring.
        stack.enrol(newcomer, seen["token"])
        stack.start_agent(newcomer)
        wait_for(
            f"{newcomer.name}'s first ping to {a.name}",
            lambda: stack.query(
                "SELECT count(*) FROM measurements_run WHERE source_id = %s AND destination_id = %s",
                newcomer.agent_id,
                a.agent_id,
            )[0][0],
            90,
        )
        seen = stack.browser_check(
            "path-page", **as_person(OPERATOR), FATHOM_SOURCE_NAME=newcomer.name, FATHOM_DESTINATION_NAME=a.name
        )
        assert seen["points"] >= 1

        seen = stack.browser_check("operate-viewer", **as_person(VIEWER), FATHOM_MESH=MESH)
        assert seen["controls"]["meshEditor"] == {
            "save": 0,
            "preview": 0,
            "addTest": 0,
            "revert": 0,
            "nameEditable": False,
        }
        assert seen["controls"]["agents"] == {"enrol": 0, "revoke": 0, "rename": 0, "decommission": 0}
        assert "People" not in seen["controls"]["nav"] and "Audit" not in seen["controls"]["nav"]
        assert seen["api"]["status"] == 403

        seen = stack.browser_check("operate-revoke", FATHOM_AGENT=newcomer.name)
        # The audit page shows the revocation, and the token made on the Account page reads the
        # API but may not change it.
        assert any(newcomer.name in row and "admin" in row for row in seen["auditRows"])
        script = {"Authorization": f"Bearer {seen['token']}"}
        assert requests.get(f"{stack.url}/api/v1/paths/", headers=script, timeout=10).status_code == 200
        assert requests.delete(f"{stack.url}/api/v1/meshes/{MESH}/", headers=script, timeout=10).status_code == 403
        # Refused at its next contact: the agent says so, and its credential gets 401.
        log = log_path(f"agent-{newcomer.name}")
        wait_for("the revoked agent to be refused", lambda: "credential rejected" in log.read_text(), 60)
        reply = requests.get(
            f"{stack.url}/api/v1/agent/plan/",
            headers={"Authorization": f"Agent {newcomer.agent_id}:{newcomer.credential}"},
            timeout=10,
        )
        assert reply.status_code == 401

        audit = http.get(f"{stack.url}/api/v1/audit/", params={"limit": 50}, timeout=10).json()
        done = {(e["actor_name"], e["action"], e["object_type"]) for e in audit}
        assert {
            ("admin", "create", "person"),
            ("olga", "create", "mesh"),
            ("olga", "create", "enrollment_token"),
            ("admin", "revoke", "agent"),
        } <= done
    finally:
        process = stack.processes.pop(f"agent-{newcomer.name}", None)
        if process is not None:
            process.terminate()
            process.wait(timeout=15)
        http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=10)
