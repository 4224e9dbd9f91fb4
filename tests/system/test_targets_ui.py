"""External targets (issue 15 item 4) on the real stack: a list mesh has the agent sys-a ping
a host that runs no agent; its results are stored against the target, the targets API lists
the pair with its RTT, and in Chromium the Paths page's "External targets" table links to the
target's own page with its RTT chart and recent runs."""

from __future__ import annotations

import pytest

from .conftest import SYSTEST_NET, Stack, wait_for

MESH = "outside"
# Loopback answers every 127/8 address, and no agent listens on this one.
TARGET = f"{SYSTEST_NET}.250"
TARGET_PINGS = (
    "SELECT count(*) FROM measurements_run"
    " WHERE destination_id IS NULL AND target = %s AND test_type = 'ping' AND status = 'ok'"
)


@pytest.mark.browser
def test_a_list_meshs_target_has_a_row_and_a_page(stack: Stack) -> None:
    a = stack.agents[0]
    http = stack.session()
    mesh = {
        "name": MESH,
        "kind": "list",
        "members": [{"agent": a.name}],
        "targets": [TARGET],
        "tests": [{"name": "rtt", "test_type": "ping", "interval_s": 10, "spec": {"count": 5, "interval_s": 0.2}}],
    }
    reply = http.post(f"{stack.url}/api/v1/meshes/", json=mesh, timeout=30)
    assert reply.status_code == 201, reply.text
    try:
        wait_for(f"{a.name}'s pings of {TARGET} stored", lambda: stack.query(TARGET_PINGS, TARGET)[0][0] >= 2, 90)
        listed = http.get(f"{stack.url}/api/v1/targets/", timeout=10).json()
        row = next(item for item in listed["targets"] if item["target"] == TARGET)
        assert row["source"]["name"] == a.name and "ping" in row["test_types"], row
        assert row["rtt_median_ms"] is not None and row["rtt_median_ms"] < 10, row

        seen = stack.browser_check("target-page", FATHOM_SOURCE_NAME=a.name, FATHOM_TARGET=TARGET)
        assert TARGET in seen["heading"] and seen["points"] >= 1 and seen["runRows"] >= 2, seen
        assert "ping" in seen["rowText"], seen
    finally:
        http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=10)
