"""The compose deployment as the compose tests run it: fresh secrets, the local base images, the
project's docker-compose.yml (with its profiles), Caddy's own CA for TLS, and everything it
made removed at the end."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import requests
from system.conftest import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "compose"
ARTIFACTS = Path(os.environ.get("FATHOM_ARTIFACTS", ROOT / "tests" / "artifacts"))
AGENT_BIN = ROOT / "agents" / "bin" / "fathom-agent"


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
    project: str
    profiles: tuple[str, ...]
    env: dict[str, str]
    server_env: Path
    work: Path
    url: str
    ca: Path
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    host_agents: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def compose(self, *args: str, input_text: str | None = None, check: bool = True) -> str:
        profiles = [flag for profile in self.profiles for flag in ("--profile", profile)]
        argv = ["docker-compose", "-p", self.project, *profiles, "--env-file", str(self.server_env), *args]
        done = subprocess.run(argv, cwd=ROOT, env=self.env, input=input_text, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def manage(self, *args: str, input_text: str | None = None) -> str:
        return self.compose("exec", "-T", "web", "python", "manage.py", *args, input_text=input_text)

    def sql(self, query: str, service: str = "timescaledb", **params: object) -> list[str]:
        """Rows of QUERY run by psql in a database container; :'name' stands for a param."""
        variables = [f"--variable={name}={value}" for name, value in params.items()]
        out = self.compose(
            "exec", "-T", service, "psql", "-U", "fathom", "-d", "fathom", "-At", "--variable=ON_ERROR_STOP=1",
            *variables, input_text=query,
        )  # fmt: skip
        return [line for line in out.splitlines() if line]

    def container(self, service: str) -> str:
        return self.compose("ps", "-q", service).strip()

    def wait_healthy(self, *services: str, timeout_s: float = 240) -> None:
        for service in services:

            def healthy(service: str = service) -> bool:
                container = self.container(service)
                state = subprocess.run(
                    ["docker", "inspect", "--format", "{{.State.Health.Status}}", container],
                    capture_output=True, text=True, check=False,
                ).stdout.strip()  # fmt: skip
                return bool(container) and state == "healthy"

            wait_for(f"{service} healthy", healthy, timeout_s=timeout_s)

    def sign_in_admin(self) -> None:
        """Writes the admin's password where the web service reads it and makes the admin."""
        password_file = "/data/admin_password"
        self.compose(
            "exec", "-T", "web", "sh", "-c", f"umask 077 && cat > {password_file}", input_text=self.admin_password
        )
        self.manage("ensure_admin", "--username", "admin", "--password-file", password_file)

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

    def enrollment_token(self, name: str) -> str:
        # It prints the token alone.
        return self.manage("create_enrollment_token", "--name", name, "--expires-in", "600").strip()

    def start_host_agent(self, name: str, address: str, *extra: str) -> None:
        """The agent binary on the host, enrolled through the proxy, running until teardown."""
        state = self.work / name
        env = {**os.environ, "SSL_CERT_FILE": str(self.ca)}
        subprocess.run(
            [str(AGENT_BIN), "enroll", "--server", self.url, "--token", self.enrollment_token(name), "--name", name,
             "--address", address, "--state-dir", str(state)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        agent = subprocess.Popen(
            [str(AGENT_BIN), "run", "--state-dir", str(state), "--iperf3-port", str(free_port()),
             "--iperf3-bind", address, "--echo-bind", address, *extra],
            env=env, stdout=(ARTIFACTS / f"{self.project}-{name}.log").open("wb"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.host_agents.append(agent)


def base_image_vars() -> dict[str, str]:
    out = subprocess.run(["bash", str(HERE / "base-images.sh")], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


@contextmanager
def running_stack(
    work: Path, project: str, services: Sequence[str], profiles: Sequence[str] = (), settings: Sequence[str] = ()
) -> Iterator[Deployment]:
    """The stack of PROJECT with SERVICES up (and what they depend on), healthy through the proxy.

    SETTINGS are extra lines of the server's .env. Whatever happens, its logs are kept in the
    artifacts and its containers, volumes and networks removed.
    """
    subprocess.run(["bash", str(HERE / "dockerd.sh"), "start"], check=True)
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
                *settings,
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
        project=project,
        profiles=tuple(profiles),
        env=env,
        server_env=server_env,
        work=work,
        url=f"https://localhost:{https_port}",
        ca=ca_dir / "root.crt",
    )
    try:
        # A run killed before its teardown leaves its containers and volumes (a database made
        # with another password): this one starts from nothing, as on a fresh machine.
        deployment.compose("down", "-v", "--remove-orphans", "--timeout", "20", check=False)
        started = time.monotonic()
        deployment.compose("build")
        print(f"compose build: {time.monotonic() - started:.0f} s")
        deployment.compose("up", "-d", *services)
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
        for agent in deployment.host_agents:
            agent.terminate()
            agent.wait(timeout=30)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{project}.log").write_text(deployment.compose("logs", "--no-color", check=False))
        deployment.compose("down", "-v", "--remove-orphans", "--timeout", "20", check=False)
