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
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from system.conftest import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "compose"
ARTIFACTS = Path(os.environ.get("FATHOM_ARTIFACTS", ROOT / "tests" / "artifacts"))
AGENT_BIN = ROOT / "agents" / "bin" / "fathom-agent"
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

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("docker") is None, reason="needs root and a Docker engine"
)


def caddyfile_for(image: str, work: Path) -> Path:
    """deploy/Caddyfile, with `request_buffers` spelled for Caddy 2.6 where the image has it.

    Debian's Caddy (the stand-in for the public caddy:2) is 2.6, which buffers request
    bodies with `buffer_requests`; 2.7 renamed it to `request_buffers <size>`.
    """
    version = subprocess.run(
        ["docker", "run", "--rm", image, "caddy", "version"], capture_output=True, text=True, check=True
    ).stdout
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    match = re.match(r"v?2\.(\d+)", version.strip())
    if match and int(match.group(1)) < 7:
        text = re.sub(r"request_buffers \S+", "buffer_requests", text)
    path = work / "Caddyfile"
    path.write_text(text)
    return path


@dataclass
class Deployment:
    env: dict[str, str]
    server_env: Path
    work: Path
    url: str
    ca: Path
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    peer: subprocess.Popen[bytes] | None = None

    def compose(self, *args: str, input_text: str | None = None, check: bool = True) -> str:
        argv = ["docker-compose", "-p", PROJECT, "--env-file", str(self.server_env), *args]
        done = subprocess.run(argv, cwd=ROOT, env=self.env, input=input_text, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def manage(self, *args: str, input_text: str | None = None) -> str:
        return self.compose("exec", "-T", "web", "python", "manage.py", *args, input_text=input_text)

    def sql(self, query: str, **params: object) -> list[str]:
        """Rows of QUERY run by psql in the database container; :'name' stands for a param."""
        variables = [f"--variable={name}={value}" for name, value in params.items()]
        out = self.compose(
            "exec", "-T", "timescaledb", "psql", "-U", "fathom", "-d", "fathom", "-At", "--variable=ON_ERROR_STOP=1",
            *variables, input_text=query,
        )  # fmt: skip
        return [line for line in out.splitlines() if line]

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).strip()

    def session(self) -> requests.Session:
        """Signed in as the admin through the proxy, as a browser would be."""
        http = requests.Session()
        http.trust_env = False  # REQUESTS_CA_BUNDLE in the environment would replace verify
        http.verify = str(self.ca)
        http.get(f"{self.url}/api/v1/auth/csrf/", timeout=10).raise_for_status()
        http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
        http.headers["Referer"] = self.url + "/"
        reply = http.post(
            f"{self.url}/api/v1/auth/login/", json={"username": "admin", "password": self.admin_password}, timeout=10
        )
        reply.raise_for_status()
        http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
        return http

    def runs_of(self, agent: str) -> set[str]:
        return set(self.sql(f"{RUNS_OF_AGENT};", agent=agent))


def base_image_vars() -> dict[str, str]:
    out = subprocess.run(["bash", str(HERE / "base-images.sh")], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    subprocess.run(["bash", str(HERE / "dockerd.sh"), "start"], check=True)
    work = tmp_path_factory.mktemp("compose")
    images = base_image_vars()
    https_port = free_port()
    server_env = work / "server.env"
    # Fresh secrets for this run; compose reads them for interpolation and the backend's
    # env_file. Agents on loopback need their addresses allowed (production refuses them).
    server_env.write_text(
        "\n".join(
            [
                f"FATHOM_SECRET_KEY={secrets.token_urlsafe(40)}",
                f"POSTGRES_PASSWORD={secrets.token_urlsafe(16)}",
                f"REDIS_PASSWORD={secrets.token_urlsafe(16)}",
                "FATHOM_AGENT_ADDRESS_NETWORKS=127.0.0.0/8",
                "FATHOM_SITE_ADDRESS=localhost",
                f"FATHOM_HTTP_PORT={free_port()}",
                f"FATHOM_HTTPS_PORT={https_port}",
                *(f"{name}={value}" for name, value in images.items()),
            ]
        )
        + "\n"
    )
    agent_env = work / "agent.env"
    agent_env.write_text("FATHOM_ENROLL_TOKEN=\n")
    ca_dir = work / "agent-ca"
    ca_dir.mkdir()
    # The agent container's user (uid 10001) reads the CA root through this bind mount.
    for readable in (work, ca_dir):
        readable.chmod(0o755)
    env = {
        **os.environ,
        "FATHOM_ENV_FILE": str(server_env),
        "FATHOM_AGENT_ENV_FILE": str(agent_env),
        "FATHOM_AGENT_CA_DIR": str(ca_dir),
        "FATHOM_CADDYFILE": str(caddyfile_for(images["FATHOM_CADDY_IMAGE"], work)),
    }
    deployment = Deployment(
        env=env, server_env=server_env, work=work, url=f"https://localhost:{https_port}", ca=ca_dir / "root.crt"
    )
    try:
        # A run killed before its teardown leaves its containers and volumes (a database made
        # with another password): this one starts from nothing, as on a fresh machine.
        deployment.compose("down", "-v", "--remove-orphans", "--timeout", "20", check=False)
        started = time.monotonic()
        deployment.compose("build")
        print(f"compose build: {time.monotonic() - started:.0f} s")
        deployment.compose("up", "-d", "proxy", "worker", "alerts", "beat")
        wait_for(
            "the proxy's certificate authority",
            lambda: subprocess.run(
                ["docker", "cp", f"{deployment.container('proxy')}:/data/caddy/pki/authorities/local/root.crt",
                 str(deployment.ca)],
                capture_output=True, check=True,
            ),
            timeout_s=120,
        )  # fmt: skip
        deployment.ca.chmod(0o644)
        wait_for(
            "the stack's health through the proxy",
            lambda: requests.get(f"{deployment.url}/api/v1/health/", verify=str(deployment.ca), timeout=5).ok,
            timeout_s=180,
        )
        yield deployment
    finally:
        if deployment.peer is not None:
            deployment.peer.terminate()
            deployment.peer.wait(timeout=30)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "compose.log").write_text(deployment.compose("logs", "--no-color", check=False))
        deployment.compose("down", "-v", "--remove-orphans", "--timeout", "20", check=False)


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
    password_file = "/data/admin_password"
    deployment.compose(
        "exec", "-T", "web", "sh", "-c", f"umask 077 && cat > {password_file}", input_text=deployment.admin_password
    )
    deployment.manage("ensure_admin", "--username", "admin", "--password-file", password_file)
    admin = deployment.session()
    json_body = {"Content-Type": "application/json"}
    signed_in = admin.post(f"{deployment.url}/api/v1/meshes/", data=b"x" * 200_000, headers=json_body, timeout=60)
    assert signed_in.status_code == 400, (signed_in.status_code, signed_in.text[:200])


def test_an_agent_container_enrols_through_the_proxy_and_its_results_are_seen(deployment: Deployment) -> None:
    password_file = "/data/admin_password"
    deployment.compose(
        "exec", "-T", "web", "sh", "-c", f"umask 077 && cat > {password_file}", input_text=deployment.admin_password
    )
    deployment.manage("ensure_admin", "--username", "admin", "--password-file", password_file)
    deployment.manage("apply_mesh", "-", input_text=json.dumps(MESH))

    def token(name: str) -> str:
        # It prints the token alone.
        return deployment.manage("create_enrollment_token", "--name", name, "--expires-in", "600").strip()

    # The container: compose's agent service as users run it, its own settings file only.
    (deployment.work / "agent.env").write_text(
        "\n".join(
            [
                f"FATHOM_ENROLL_TOKEN={token(AGENT)}",
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
    state = deployment.work / "peer"
    peer_env = {**os.environ, "SSL_CERT_FILE": str(deployment.ca)}
    subprocess.run(
        [str(AGENT_BIN), "enroll", "--server", deployment.url, "--token", token("host-peer"), "--name", "host-peer",
         "--address", PEER_ADDRESS, "--state-dir", str(state)],
        env=peer_env, check=True, capture_output=True,
    )  # fmt: skip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    deployment.peer = subprocess.Popen(
        [str(AGENT_BIN), "run", "--state-dir", str(state), "--iperf3-port", str(free_port()),
         # The container's agent holds the reflector's port on every address of the host.
         "--iperf3-bind", PEER_ADDRESS, "--echo-bind", PEER_ADDRESS, "--twamp-enabled", "false"],
        env=peer_env, stdout=(ARTIFACTS / "compose-peer.log").open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
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
    wait_for("a few stored results", lambda: len(deployment.runs_of(AGENT)) >= 2, timeout_s=120)
    before = deployment.runs_of(AGENT)
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
    after = deployment.runs_of(AGENT)
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
