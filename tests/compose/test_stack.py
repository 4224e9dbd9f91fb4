"""The compose deployment, built and run for real (issue 17).

Fathom's images are built from docker-compose.yml on local stand-ins for the public base
images (tests/compose/base-images.sh: a debootstrapped Debian imported into Docker), the stack
comes up behind Caddy with TLS, an agent container enrols through the proxy and measures a
peer, and its results are seen through the proxy. Then the database container is stopped and
started again while the agent keeps measuring, and nothing it measured is lost or stored twice.

Needs root and a Docker engine (tests/compose/dockerd.sh starts one); `make test` runs it as
the compose suite. Every container, volume and network it makes is removed at the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from system.conftest import wait_for

from compose.stack import Deployment, running_stack

PROJECT = "fathomtest"
AGENT = "example-agent"
PEER_ADDRESS = "127.0.0.2"
# A ping every 10 s: results arrive within the test's patience, and a 30 s database outage
# spans several of them.
MESH = {
    "name": "default",
    "description": "compose test: ping only",
    "tests": [{"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 3, "interval_s": 0.2}}],
}
OUTAGE_S = 30
RUNS_OF_AGENT = (
    "SELECT r.id FROM measurements_run r JOIN inventory_agent a ON a.id = r.source_id WHERE a.name = :'agent'"
)


def runs_of(deployment: Deployment, agent: str) -> set[str]:
    return set(deployment.sql(f"{RUNS_OF_AGENT};", agent=agent))


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("docker") is None, reason="needs root and a Docker engine"
)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with running_stack(tmp_path_factory.mktemp("compose"), PROJECT, ["proxy", "worker", "alerts", "beat"]) as stack:
        yield stack


def test_only_the_proxy_is_published_and_it_speaks_tls(deployment: Deployment) -> None:
    reply = requests.get(f"{deployment.url}/api/v1/health/", verify=str(deployment.ca), timeout=10)
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "ok"
    assert reply.headers["Strict-Transport-Security"].startswith("max-age=")
    assert "Server" not in reply.headers

    def ports(service: str) -> str:
        return subprocess.run(["docker", "port", deployment.container(service)], capture_output=True, text=True).stdout

    published = {service: ports(service) for service in ("web", "timescaledb", "redis", "worker")}
    assert all(not ports.strip() for ports in published.values()), published
    # Plain HTTP is only a redirect to HTTPS.
    http_port = re.search(r"FATHOM_HTTP_PORT=(\d+)", deployment.server_env.read_text())
    assert http_port is not None
    redirect = requests.get(f"http://localhost:{http_port.group(1)}/", allow_redirects=False, timeout=10)
    assert redirect.status_code in (301, 308) and redirect.headers["Location"].startswith("https://")
    # Every container runs unprivileged.
    for service in ("web", "worker", "alerts", "beat"):
        assert deployment.compose("exec", "-T", service, "id", "-u").strip() == "10001", service


def test_no_secret_is_on_a_command_line(deployment: Deployment) -> None:
    """Every process on the host shows its arguments to every user (ps): the stack's
    passwords and key reach its processes through files and the environment only."""
    values = dict(line.split("=", 1) for line in deployment.server_env.read_text().splitlines() if "=" in line)
    wanted = {name: values[name] for name in ("FATHOM_SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD")}
    # The health checks run every 5-10 s: a password on theirs shows in some sample.
    shown: set[str] = set()
    for _ in range(12):
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                arguments = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:  # the process ended
                continue
            shown |= {name for name, value in wanted.items() if value in arguments}
        time.sleep(1)
    assert not shown, f"on a command line: {sorted(shown)}"


def test_the_proxy_bounds_bodies_before_any_credential(deployment: Deployment) -> None:
    """Without credentials a body is refused at the proxy past 100 kB (enrolment and sign-in
    need well under that); a larger one is held only once its credentials are checked."""
    enroll = f"{deployment.url}/api/v1/agents/enroll/"
    large = b"x" * 200_000
    stranger = requests.post(enroll, data=large, verify=str(deployment.ca), timeout=30)
    assert stranger.status_code == 413 and "under 100 kB" in stranger.text, (stranger.status_code, stranger.text)
    # A small enrolment body passes the proxy and is judged by the backend (a bad token).
    small = requests.post(enroll, json={"token": "fet_nope", "name": "x"}, verify=str(deployment.ca), timeout=30)
    assert small.status_code in (400, 401, 403), (small.status_code, small.text)
    # A large body with made-up credentials is refused by the proxy's check of them
    # (forward_auth), before its body is held; a signed-in admin's large body gets through to
    # the backend, which judges it (here: not a mesh).
    for made_up in ({"Authorization": "Agent 00000000-0000-0000-0000-000000000000:nope"}, {"Cookie": "sessionid=x"}):
        forged = requests.post(
            f"{deployment.url}/api/v1/agent/results/", data=b"x" * 2_000_000, headers=made_up,
            verify=str(deployment.ca), timeout=60,
        )  # fmt: skip
        assert forged.status_code == 401, (made_up, forged.status_code, forged.text[:200])
    deployment.sign_in_admin()
    admin = deployment.session()
    json_body = {"Content-Type": "application/json"}
    signed_in = admin.post(f"{deployment.url}/api/v1/meshes/", data=b"x" * 200_000, headers=json_body, timeout=60)
    assert signed_in.status_code == 400, (signed_in.status_code, signed_in.text[:200])


def test_an_agent_container_enrols_through_the_proxy_and_its_results_are_seen(deployment: Deployment) -> None:
    deployment.sign_in_admin()
    deployment.manage("apply_mesh", "-", input_text=json.dumps(MESH))

    # The container: compose's agent service as users run it, its own settings file only.
    (deployment.work / "agent.env").write_text(
        "\n".join(
            [
                f"FATHOM_ENROLL_TOKEN={deployment.enrollment_token(AGENT)}",
                f"FATHOM_AGENT_NAME={AGENT}",
                "FATHOM_AGENT_ADDRESS=127.0.0.1",
                f"FATHOM_SERVER={deployment.url}",
                "SSL_CERT_FILE=/etc/fathom/ca/root.crt",
            ]
        )
        + "\n"
    )
    deployment.compose("up", "-d", "agent")
    # Its peer: the same agent binary on the host, enrolled through the proxy too.
    # The container's agent holds the reflector's port on every address of the host.
    deployment.start_host_agent("host-peer", PEER_ADDRESS, "--twamp-enabled", "false")
    http = deployment.session()

    def agent_path() -> dict[str, Any] | None:
        reply = http.get(f"{deployment.url}/api/v1/paths/", timeout=10)
        reply.raise_for_status()
        for entry in reply.json():
            if entry["source"]["name"] == AGENT and entry["destination"]["name"] == "host-peer":
                return dict(entry)
        return None

    path = wait_for("the agent container's first result, seen through the proxy", agent_path, timeout_s=180)
    assert "ping" in path["test_types"]
    assert path["last_status"] == "ok", path
    assert deployment.compose("exec", "-T", "agent", "id", "-u").strip() == "10001"


def test_a_database_restart_loses_nothing_the_agent_measured(deployment: Deployment) -> None:
    wait_for("a few stored results", lambda: len(runs_of(deployment, AGENT)) >= 2, timeout_s=120)
    before = runs_of(deployment, AGENT)
    deployment.compose("stop", "timescaledb")
    stopped_at = time.time()
    time.sleep(OUTAGE_S)
    deployment.compose("start", "timescaledb")
    restarted_at = time.time()

    def measured_during_the_outage() -> list[str]:
        return deployment.sql(
            f"{RUNS_OF_AGENT} AND r.started_at BETWEEN to_timestamp(:stopped) AND to_timestamp(:restarted);",
            agent=AGENT, stopped=stopped_at, restarted=restarted_at,
        )  # fmt: skip

    during = wait_for("the results measured while the database was down", measured_during_the_outage, 180)
    after = runs_of(deployment, AGENT)
    assert before <= after, f"lost: {sorted(before - after)}"
    assert len(during) >= OUTAGE_S // 10 - 1, during
    duplicates = deployment.sql(
        "SELECT r.test_id, r.started_at FROM measurements_run r JOIN inventory_agent a ON a.id = r.source_id"
        " WHERE a.name = :'agent' GROUP BY 1, 2 HAVING count(*) > 1;",
        agent=AGENT,
    )
    assert duplicates == []

    def spool_drained() -> bool:
        spool = "/var/lib/fathom-agent/spool"
        listing = deployment.compose(
            "exec", "-T", "agent", "sh", "-c", f"ls {spool}/pending {spool}/rejected | grep -c json || true"
        )  # fmt: skip
        return listing.strip() == "0"

    wait_for("the agent's spool to drain", spool_drained, timeout_s=120)
    print(f"stored before the outage {len(before)}, measured during it {len(during)}, after {len(after)}; 0 lost")
