"""A perfSONAR node joins a Fathom mesh (issue 14), on the real stack: an operator adds the
fake pScheduler node (tests/fakes/pscheduler, real HTTPS, pinned certificate) on the Agents
page; a mesh pairs it with the real agent sys-a; Fathom creates the node's tasks, whose runs
come back by push; a throughput slot in each direction runs a real iperf3 between the node
and the one-off server sys-a opens for it; a run the node could not start shows on the path
page with pScheduler's reason; a pSConfig template's dry run shows what maps; deleting the
mesh deletes the tasks from the node."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fakes.pscheduler import FakePScheduler

from .conftest import ARTIFACTS, ROOT, SYSTEST_NET, Stack, wait_for

NODE = "ps-lisbon"
NODE_ADDRESS = f"{SYSTEST_NET}.9"
MESH = "ps-mixed"
REASON = "Run forbidden by limits"
PSCONFIG = ROOT / "backend" / "perfsonar" / "tests" / "fixtures" / "psconfig" / "psconfig-example-1-simple.json"


FAILED_WITH = "SELECT source_id::text, destination_id::text FROM measurements_run WHERE error LIKE %s"
PINGS_FROM = "SELECT id FROM measurements_run WHERE source_id = %s AND test_type = 'ping' AND status = 'ok'"
# What the slots with the node became, its throughput runs and its tasks: printed when the
# throughput wait times out, so a failure says where the chain broke.
NODE_SLOTS = (
    "SELECT s.source_id::text, s.destination_id::text, to_char(s.start_at, 'HH24:MI:SS'), s.state, s.reason"
    " FROM meshes_slot s WHERE s.source_id = %s OR s.destination_id = %s ORDER BY s.start_at"
)
NODE_THROUGHPUT_RUNS = (
    "SELECT source_id::text, destination_id::text, to_char(started_at, 'HH24:MI:SS'), status, left(error, 200)"
    " FROM measurements_run WHERE test_type = 'throughput' AND (source_id = %s OR destination_id = %s)"
    " ORDER BY started_at"
)
THROUGHPUT_PAIRS = (
    "SELECT DISTINCT source_id::text, destination_id::text FROM measurements_run"
    " WHERE test_type = 'throughput' AND status = 'ok'"
)


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_a_perfsonar_node_measures_with_an_agent_and_shows_in_the_ui(stack: Stack, tmp_path: Path) -> None:
    a = stack.agents[0]
    http = stack.session()
    with FakePScheduler(speed=1, live_iperf3=True, first_run_delay_s=0.5, hostname="ps-lisbon.example.net",
                        state_dir=tmp_path / "fake-ps") as node:  # fmt: skip
        node.force_runs("nonstart", REASON, count=1)  # the node's first run cannot start
        seen = stack.browser_check(
            "perfsonar-node",
            FATHOM_NODE_NAME=NODE,
            FATHOM_NODE_URL=node.base_url,
            FATHOM_NODE_ADDRESS=NODE_ADDRESS,
            FATHOM_NODE_PIN=node.fingerprint_sha256,
        )
        assert NODE in seen["rowText"]
        listed = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=10).json()
        assert listed["reachable"] is True and listed["api_level"] == 6 and listed["problems"] == []
        node_id = next(row["id"] for row in http.get(f"{stack.url}/api/v1/agents/", timeout=10).json()
                       if row["name"] == NODE)  # fmt: skip

        mesh = {
            "name": MESH,
            "kind": "mesh",
            "members": [{"agent": a.name}, {"agent": NODE}],
            "tests": [
                {"name": "rtt", "test_type": "ping", "interval_s": 10, "spec": {"count": 5, "interval_s": 0.2}},
                # Both directions in each 60 s period, each holding sys-a 25 s (3 s, margins and
                # pScheduler's run overhead): the slip must leave room for the second.
                {"name": "tput", "test_type": "throughput", "interval_s": 60, "slip_s": 45,
                 "spec": {"duration_s": 3}},
            ],
        }  # fmt: skip
        # The answer to the next task's POST is lost (a timeout): the task exists on the node,
        # and a later sync must find it by its reference rather than leave it orphaned.
        node.lose_task_answers(1)
        reply = http.post(f"{stack.url}/api/v1/meshes/", json=mesh, timeout=30)
        assert reply.status_code == 201, reply.text
        try:
            # The node's rtt task runs: the first run did not start (stored failed, with the
            # reason), the next ones come back by push.
            # (The node's first run of any task: towards sys-a or, in the default mesh, sys-b.)
            failed = wait_for("the node's non-started run stored", lambda: stack.query(FAILED_WITH, f"%{REASON}%"), 60)
            failed_path = f"/paths/{failed[0][0]}/{failed[0][1]}"
            wait_for("the node's pushed RTT results", lambda: stack.query(PINGS_FROM, node_id), 60)

            # A throughput slot each way, each a real iperf3 between the node and sys-a's window.
            def both_directions() -> bool:
                pairs = {(str(source), str(destination)) for source, destination in stack.query(THROUGHPUT_PAIRS)}
                return {(node_id, a.agent_id), (a.agent_id, node_id)} <= pairs

            if not a.agent_id:
                a.agent_id = str(stack.query("SELECT id FROM inventory_agent WHERE name = %s", a.name)[0][0])
            try:
                wait_for("throughput measured both ways between the node and sys-a", both_directions, 240, 2)
            except AssertionError as exc:
                tasks = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/tasks/", timeout=10).json()
                raise AssertionError(
                    f"{exc}\nnode {node_id}, sys-a {a.agent_id}"
                    f"\nslots: {stack.query(NODE_SLOTS, node_id, node_id)}"
                    f"\nruns: {stack.query(NODE_THROUGHPUT_RUNS, node_id, node_id)}"
                    f"\nthroughput tasks: {[t for t in tasks if t['test_type'] == 'throughput']}"
                    f"\npushes the node attempted: {len(node.archive_attempts())}"
                ) from exc
            tasks = http.get(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/tasks/", timeout=10).json()
            assert {task["test_type"] for task in tasks} >= {"ping", "throughput"}
            active = [task for task in tasks if task["state"] == "active"]
            assert all(task["url"].startswith(node.base_url) for task in active), active
            adopted = [task for task in tasks if task["reason"].startswith("created by a POST that got no answer")]
            assert len(adopted) == 1 and adopted[0]["url"].startswith(node.base_url), tasks
            assert node.archive_attempts(), "the node pushed nothing"

            stack.browser_check(
                "perfsonar-views",
                FATHOM_NODE_NAME=NODE,
                FATHOM_PATH_URL=failed_path,
                FATHOM_PSCONFIG_FILE=str(PSCONFIG),
                FATHOM_FAILED_REASON=REASON,
            )

            # The mesh goes: its tasks are deleted from the node (the default mesh's stay).
            assert http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=30).status_code == 204
            mesh_tasks = {task["url"] for task in tasks if task["state"] == "active" and task["mesh"] == MESH}
            assert mesh_tasks

            def deleted_on_node() -> bool:
                enabled = {task["url"]: task["enabled"] for task in node.tasks()}
                return not any(enabled.get(url) for url in mesh_tasks)

            # One sync pass deletes them all, one DELETE each: in CI a pass deleted 109 tasks (the
            # throughput slots' too) in 11.7 s, 20 s after the mesh went, behind two other passes
            # on the loaded worker.
            wait_for("the mesh's tasks deleted from the node", deleted_on_node, 90)
            # The node leaves: decommissioned at once (202), then the worker deletes everything
            # of it on the node and it is no longer listed; its results stay.
            removed = http.delete(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=30)
            assert removed.status_code == 202 and removed.json()["removing_since"], removed.text
            wait_for("the removed node's tasks deleted by the worker", lambda: not [
                task for task in node.tasks() if task["enabled"]
            ], 60)  # fmt: skip

            def listed() -> set[str]:
                return {row["name"] for row in http.get(f"{stack.url}/api/v1/perfsonar/nodes/", timeout=30).json()}

            wait_for("the removed node gone from the list", lambda: NODE not in listed(), 60)
        finally:
            # A failure must not leave the node's 60 s throughput on sys-a for the tests after.
            http.delete(f"{stack.url}/api/v1/meshes/{MESH}/", timeout=30)
            http.delete(f"{stack.url}/api/v1/perfsonar/nodes/{NODE}/", timeout=30)
    for shot in ("agents-perfsonar-node.png", "path-perfsonar-node.png", "meshes-psconfig-dry-run.png"):
        assert (ARTIFACTS / shot).exists()
