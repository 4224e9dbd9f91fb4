"""The compose `scale` profile, run for real (issue 33): two web and two worker replicas behind
Caddy and a streaming read replica of the database serving the history views' reads.

Shows that agents, a signed-in session and the slot planner work unchanged across replicas:
requests land on both web replicas with no affinity, both workers take tasks, the history
reads are served by the replica (its own table statistics count them), a stopped replica
leaves them on the primary, and concurrent re-plans from both web replicas and both workers
place nothing twice and no two slots on one agent's time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from system.conftest import wait_for

from compose.stack import Deployment, running_stack

PROJECT = "fathomscale"
SENDER, RECEIVER = "scale-a", "scale-b"
# A ping every 10 s for results soon; a short throughput test for exclusive slots to plan.
PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 3, "interval_s": 0.2}}


def throughput(interval_s: int) -> dict[str, Any]:
    return {"name": "tput", "test_type": "throughput", "interval_s": interval_s, "slip_s": interval_s,
            "spec": {"duration_s": 5}}  # fmt: skip


# Scans of the history tables on the replica: only Fathom's history reads query it.
# (hypertables' chunks included, which TimescaleDB names _hyper_*_chunk).
REPLICA_SCANS = "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables;"
OVERLAPPING_SLOTS = """
SELECT count(*) FROM meshes_slot a JOIN meshes_slot b ON a.id < b.id
 WHERE a.state = 'planned' AND b.state = 'planned'
   AND (a.source_id IN (b.source_id, b.destination_id) OR a.destination_id IN (b.source_id, b.destination_id))
   AND a.start_at < b.end_at AND b.start_at < a.end_at;
"""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("docker") is None, reason="needs root and a Docker engine"
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    services = ["proxy", "web-2", "worker", "worker-2", "beat", "timescaledb-replica"]
    # The replica's URL without credentials: the primary's user and password (core/env.py).
    replica = "FATHOM_DATABASE_REPLICA_URL=postgresql://timescaledb-replica:5432/fathom"
    with running_stack(tmp_path_factory.mktemp("scale"), PROJECT, services, ["scale"], [replica]) as deployment:
        # The proxy waited for web alone; the rest must be up before requests are counted.
        deployment.wait_healthy("web-2", "timescaledb-replica")
        deployment.sign_in_admin()
        mesh = {"name": "default", "description": "compose scale test", "tests": [PING, throughput(1800)]}
        deployment.manage("apply_mesh", "-", input_text=json.dumps(mesh))
        deployment.start_host_agent(SENDER, "127.0.0.3", "--twamp-enabled", "false")
        deployment.start_host_agent(RECEIVER, "127.0.0.4", "--twamp-enabled", "false")
        yield deployment


def requests_logged(deployment: Deployment, service: str, pattern: str) -> int:
    """Requests whose gunicorn access-log line (the container's output) matches PATTERN."""
    logs = subprocess.run(
        ["docker", "logs", deployment.container(service)], capture_output=True, text=True, check=True
    )  # fmt: skip
    return len(re.findall(pattern, logs.stdout + logs.stderr))


def path_ids(http: requests.Session, url: str) -> dict[str, str] | None:
    reply = http.get(f"{url}/api/v1/paths/", timeout=10)
    reply.raise_for_status()
    for entry in reply.json():
        ends = (entry["source"]["name"], entry["destination"]["name"])
        if ends == (SENDER, RECEIVER) and "ping" in entry["test_types"]:
            return {"source": entry["source"]["id"], "destination": entry["destination"]["id"]}
    return None


def test_two_of_each_run_and_the_replica_streams(stack: Deployment) -> None:
    for service in ("web", "web-2", "worker", "worker-2", "timescaledb-replica"):
        assert stack.container(service), f"{service} is not running"
    streaming = wait_for(
        "the replica streaming from the primary",
        lambda: [row for row in stack.sql("SELECT state FROM pg_stat_replication;") if row == "streaming"],
        timeout_s=120,
    )
    assert len(streaming) == 1
    assert stack.sql("SELECT pg_is_in_recovery();", service="timescaledb-replica") == ["t"]

    def workers() -> set[str] | None:
        out = stack.compose("exec", "-T", "worker", "celery", "-A", "fathom", "inspect", "ping", "--timeout", "10",
                            check=False)  # fmt: skip
        names = set(re.findall(r"(worker@\w+): OK", out))
        return names if len(names) == 2 else None

    assert len(wait_for("both Celery workers answering", workers, timeout_s=120)) == 2


def test_one_session_works_on_either_web_replica(stack: Deployment) -> None:
    http = stack.session()
    for _ in range(30):
        reply = http.get(f"{stack.url}/api/v1/meshes/", timeout=10)
        assert reply.status_code == 200, reply.text
    # Writes with the session's CSRF token, wherever each lands.
    for interval in (1200, 1800):
        reply = http.patch(f"{stack.url}/api/v1/meshes/default/", json={"tests": [PING, throughput(interval)]},
                           timeout=60)  # fmt: skip
        assert reply.status_code == 200, reply.text
    listed = {service: requests_logged(stack, service, r'"GET /api/v1/meshes/ HTTP') for service in ("web", "web-2")}
    # Caddy picks a replica at random for each request: 30 all on one comes 1 time in 5e8.
    assert all(count > 0 for count in listed.values()), listed
    assert sum(listed.values()) >= 30, listed


def test_agents_enrol_and_deliver_through_both_replicas(stack: Deployment) -> None:
    http = stack.session()
    wait_for("the host agents' ping results", lambda: path_ids(http, stack.url), timeout_s=180)

    def agent_requests() -> dict[str, int] | None:
        served = {service: requests_logged(stack, service, r'"\w+ /api/v1/agent/') for service in ("web", "web-2")}
        return served if sum(served.values()) >= 20 else None

    # Plan polls and uploads, each to a replica at random: 20 all on one comes 1 time in 500,000.
    served = wait_for("20 requests of the agents", agent_requests, timeout_s=240)
    assert all(count > 0 for count in served.values()), served


def test_history_reads_are_served_by_the_replica(stack: Deployment) -> None:
    http = stack.session()
    ids = wait_for("the host agents' ping results", lambda: path_ids(http, stack.url), timeout_s=180)
    before = int(stack.sql(REPLICA_SCANS, service="timescaledb-replica")[0])
    for endpoint in ("paths/rtt/", "paths/runs/", "paths/history/", "analysis/path/", "analysis/path/timeline/"):
        reply = http.get(f"{stack.url}/api/v1/{endpoint}", params=ids, timeout=30)
        assert reply.status_code == 200, (endpoint, reply.status_code, reply.text[:300])
    runs = http.get(f"{stack.url}/api/v1/paths/runs/", params=ids, timeout=30).json()
    assert runs, "the replica served no runs of the path"

    # The standby counts scans of its own tables (flushed within about 10 s of going idle).
    def scanned() -> int | None:
        now = int(stack.sql(REPLICA_SCANS, service="timescaledb-replica")[0])
        return now if now > before else None

    wait_for("the history reads' scans on the replica", scanned, timeout_s=60)
    print(f"history table scans on the replica: {before} before the reads")


def test_the_planner_places_nothing_twice_across_replicas_and_workers(stack: Deployment) -> None:
    failures: list[str] = []

    def edit(interval: int) -> None:
        http = stack.session()  # a session of its own: one is not shared between threads
        reply = http.patch(f"{stack.url}/api/v1/meshes/default/", json={"tests": [PING, throughput(interval)]},
                           timeout=120)  # fmt: skip
        if reply.status_code != 200:
            failures.append(f"{interval}: {reply.status_code} {reply.text[:200]}")

    def plan_on(service: str) -> None:
        # The planner's task body, in that worker's container, now (a queued call would run
        # whenever a worker took it, after the checks below).
        plan = "from meshes.tasks import plan_exclusive_slots; plan_exclusive_slots()"
        try:
            stack.compose("exec", "-T", service, "python", "manage.py", "shell", "-c", plan)
        except AssertionError as error:
            failures.append(f"planner on {service}: {error}")

    threads = [threading.Thread(target=edit, args=(interval,)) for interval in (1200, 1500, 1800, 2400)]
    threads += [threading.Thread(target=plan_on, args=(service,)) for service in ("worker", "worker-2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not failures, failures
    assert not [thread for thread in threads if thread.is_alive()]
    planned = wait_for(
        "planned throughput slots",
        lambda: int(stack.sql("SELECT count(*) FROM meshes_slot WHERE state = 'planned';")[0]) or None,
        timeout_s=60,
    )
    twice = stack.sql(
        "SELECT mesh_test_id, source_id, destination_id, period_start FROM meshes_slot"
        " GROUP BY 1, 2, 3, 4 HAVING count(*) > 1;"
    )
    assert twice == []
    assert stack.sql(OVERLAPPING_SLOTS) == ["0"]
    print(f"{planned} planned slots, none twice, none overlapping on an agent")


def test_a_stopped_replica_leaves_history_reads_on_the_primary(stack: Deployment) -> None:
    http = stack.session()
    ids = wait_for("the host agents' ping results", lambda: path_ids(http, stack.url), timeout_s=180)
    stack.compose("stop", "--timeout", "10", "timescaledb-replica")
    try:
        for _ in range(6):  # on both web replicas, whichever first finds the replica gone
            for endpoint in ("paths/rtt/", "paths/runs/", "paths/history/"):
                reply = http.get(f"{stack.url}/api/v1/{endpoint}", params=ids, timeout=30)
                assert reply.status_code == 200, (endpoint, reply.status_code, reply.text[:300])
    finally:
        stack.compose("start", "timescaledb-replica")
