"""The real Fathom stack for system tests: TimescaleDB, Redis, gunicorn, Celery worker and
beat, and two real fathom-agent processes on loopback (127.0.0.2 and 127.0.0.3).

The stack uses its own database (fathom_systest), recreated per session, so tests never
touch the demo's data. A second stack running beside it (tests/run-suites.sh runs the browser
tests beside the lab tests; a bench may too) names another database, Redis database, loopback
/24 for its agents and log prefix (FATHOM_SYSTEST_DB, FATHOM_SYSTEST_REDIS_DB,
FATHOM_SYSTEST_NET, FATHOM_SYSTEST_LOG_PREFIX), so the two stacks share nothing.
Process logs are kept under tests/artifacts/ for post-mortems, and every wait_for's duration
in tests/artifacts/<prefix>waits.log, so a slow suite shows what it waited for.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests
from lab.lab import root_changes_held_off

if TYPE_CHECKING:
    from .findings_drill_lab import FindingsDrillLab

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / "var" / "venv" / "bin"
AGENT_BIN = ROOT / "agents" / "bin" / "fathom-agent"
ARTIFACTS = Path(os.environ.get("FATHOM_ARTIFACTS", ROOT / "tests" / "artifacts"))
SYSTEST_DB = os.environ.get("FATHOM_SYSTEST_DB", "fathom_systest")
# The stack's agents are NET.2 and NET.3 (their iperf3 and echo ports cannot clash with
# another stack's on other addresses).
SYSTEST_NET = os.environ.get("FATHOM_SYSTEST_NET", "127.0.0")
LOG_PREFIX = os.environ.get("FATHOM_SYSTEST_LOG_PREFIX", "")
SPINE_PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 10, "interval_s": 0.2}}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def log_path(name: str) -> Path:
    """Where this stack's process `name` logs."""
    return ARTIFACTS / f"{LOG_PREFIX}{name}.log"


def note_wait(what: str, started: float, outcome: str) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
    with open(log_path("waits"), "a") as log:
        log.write(f"{time.monotonic() - started:7.1f} s  {outcome:<9} {test}  {what}\n")


def wait_for(what: str, check: Callable[[], Any], timeout_s: float, interval_s: float = 1.0) -> Any:
    """Polls check() until it returns something truthy; fails naming what never happened."""
    started = time.monotonic()
    deadline = started + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                note_wait(what, started, "done")
                return value
        except Exception as exc:  # noqa: BLE001 - reported if the wait times out
            last_error = exc
        time.sleep(interval_s)
    note_wait(what, started, "TIMED OUT")
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what} (last error: {last_error})")


def services_env() -> dict[str, str]:
    out = subprocess.run(
        ["bash", str(ROOT / "deploy" / "services.sh"), "env"], check=True, capture_output=True, text=True
    ).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@dataclass
class Agent:
    name: str
    address: str
    iperf3_port: int
    state_dir: Path
    agent_id: str = ""
    credential: str = ""


REMOVE_AGENTS = """
from django.db import transaction
from inventory.models import Agent
with transaction.atomic():
    ids = list(Agent.objects.select_for_update().filter(name__in={names}).values_list("pk", flat=True))
    Agent.objects.filter(pk__in=ids).delete()
"""


@dataclass
class Stack:
    url: str
    env: dict[str, str]
    database_url: str
    admin_user: str
    admin_password: str
    agents: list[Agent]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def manage(self, *args: str) -> str:
        run = subprocess.run(
            [str(VENV_BIN / "python"), "manage.py", *args],
            cwd=ROOT / "backend",
            env=self.env,
            check=False,
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise AssertionError(f"manage.py {args[0]} failed ({run.returncode}): {run.stderr.strip()[-1500:]}")
        return run.stdout

    def remove_agents(self, *names: str) -> None:
        """Deletes the agents and everything of theirs. Their rows are locked first: the
        stack's other agents may still be uploading results towards them, and an upload
        locks its path's latest-run row after its run (which references the agent), so a
        cascade that reached that row first and the agent's row last would deadlock with it
        (CI of 344c95f). Locked first, the delete waits for such an upload to commit, and a
        later one waits for the delete."""
        self.manage("shell", "-c", REMOVE_AGENTS.format(names=repr(names)))

    def start(self, name: str, argv: list[str]) -> None:
        log = open(log_path(name), "ab")  # noqa: SIM115 - closed with the process
        self.processes[name] = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def start_worker(self) -> None:
        """The Celery worker of the default queue (analysis, rollups, planning)."""
        self.start(
            "worker",
            [str(VENV_BIN / "celery"), "--workdir", "backend", "-A", "fathom", "worker", "--loglevel", "INFO",
             "--concurrency", "1"],
        )  # fmt: skip

    def enrol(self, agent: Agent, token: str | None = None) -> None:
        """Enrols the agent (with a new enrolment token unless one is given): its id and credential."""
        token = token or self.manage("create_enrollment_token", "--note", f"system test {agent.name}").strip()
        subprocess.run(
            [str(AGENT_BIN), "enroll", "--server", self.url, "--token", token, "--name", agent.name,
             "--address", agent.address, "--state-dir", str(agent.state_dir)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        credential = json.loads((agent.state_dir / "credential.json").read_text())
        agent.agent_id, agent.credential = credential["agent_id"], credential["credential"]

    def start_agent(self, agent: Agent) -> None:
        self.start(
            f"agent-{agent.name}",
            [str(AGENT_BIN), "run", "--state-dir", str(agent.state_dir), "--iperf3-port", str(agent.iperf3_port),
             "--iperf3-bind", agent.address, "--echo-bind", agent.address, "--twamp-bind", agent.address,
             # One host's agents share its kernel clock exactly.
             "--twamp-clock-shared", "true"],
        )  # fmt: skip

    def assert_running(self) -> None:
        dead = {name: proc.returncode for name, proc in self.processes.items() if proc.poll() is not None}
        assert not dead, f"processes exited: {dead} (logs in {ARTIFACTS})"

    def session(self) -> requests.Session:
        """A signed-in browser-like session (cookie + CSRF header)."""
        http = requests.Session()
        http.get(f"{self.url}/api/v1/auth/csrf/", timeout=10).raise_for_status()
        http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
        http.headers["Referer"] = self.url + "/"
        reply = http.post(
            f"{self.url}/api/v1/auth/login/",
            json={"username": self.admin_user, "password": self.admin_password},
            timeout=10,
        )
        reply.raise_for_status()
        http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
        return http

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.database_url) as conn:
            return conn.execute(sql, params).fetchall()

    def browser_check(self, spec: str, **env: str) -> dict[str, Any]:
        """Runs tests/browser/<spec>.spec.ts signed in as the admin; returns what it recorded
        with seen() (fails the test with the runner's output when the spec fails)."""
        signed_in = {"FATHOM_URL": self.url, "FATHOM_USER": self.admin_user, "FATHOM_PASSWORD": self.admin_password}
        return run_browser_spec(spec, **{**signed_in, **env})


# A spec's own timeout is 120 s (tests/browser/playwright.config.ts); the runner starts first.
BROWSER_SPEC_TIMEOUT_S = 180


def run_browser_spec(spec: str, **env: str) -> dict[str, Any]:
    """Runs tests/browser/<spec>.spec.ts with @playwright/test and returns the JSON record the
    spec wrote to FATHOM_SEEN_FILE. A failed spec's trace and screenshot are kept in
    ARTIFACTS/playwright/<log prefix><test>-<spec>: the runner empties its output directory
    when it starts, so each run gets its own, and a later spec or the other stack's cannot
    remove them."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "run").split(" ")[0].split("::")[-1]
    output = ARTIFACTS / "playwright" / f"{LOG_PREFIX}{test}-{spec}"
    config = "browser/playwright.config.ts"
    command = ["npx", "playwright", "test", f"{spec}.spec.ts", "-c", config, "--output", str(output)]
    # A lab coming up or going down beside it (the lab lane) changes the root namespace's
    # addresses, and Chromium then fails every request in flight: labs wait while a spec runs.
    with tempfile.TemporaryDirectory(prefix="fathom-seen-") as tmp, root_changes_held_off():
        seen_file = Path(tmp) / "seen.json"
        run = subprocess.run(
            command,
            cwd=ROOT / "tests",
            env={**os.environ, "FATHOM_ARTIFACTS": str(ARTIFACTS), "FATHOM_SEEN_FILE": str(seen_file), **env},
            capture_output=True,
            text=True,
            timeout=BROWSER_SPEC_TIMEOUT_S,
            check=False,
        )
        assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
        seen: dict[str, Any] = json.loads(seen_file.read_text())
        return seen


def stop_process(process: subprocess.Popen[bytes], timeout_s: float = 15) -> bool:
    """SIGTERM, then SIGKILL after timeout_s; False if it needed the SIGKILL."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
    return True


def recreate_database(admin_url: str) -> None:
    with psycopg.connect(with_database(admin_url, "postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {SYSTEST_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {SYSTEST_DB}")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    assert AGENT_BIN.exists(), f"{AGENT_BIN} is missing: run `make agents`"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path_factory.mktemp("stack")
    base = services_env()
    recreate_database(base["FATHOM_DATABASE_URL"])
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        **base,
        "FATHOM_DATABASE_URL": with_database(base["FATHOM_DATABASE_URL"], SYSTEST_DB),
        "FATHOM_REDIS_URL": with_database(base["FATHOM_REDIS_URL"], os.environ.get("FATHOM_SYSTEST_REDIS_DB", "0")),
        "FATHOM_SECRET_KEY": secrets.token_urlsafe(48),
        "FATHOM_DEBUG": "0",
        "FATHOM_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "FATHOM_CSRF_TRUSTED_ORIGINS": url,
        # The agents run on loopback here, and in the lab's range in the lab tests.
        "FATHOM_AGENT_ADDRESS_NETWORKS": "127.0.0.0/8,198.18.0.0/15,2001:2::/48",
        # Its alert receivers and fake perfSONAR nodes listen on loopback (core/outbound.py).
        "FATHOM_OUTBOUND_ALLOW_NETWORKS": "127.0.0.0/8",
        "FATHOM_STATIC_ROOT": str(tmp / "static"),
        # Lab tests inject regressions minutes, not days, into a run: judge RTT on 10 s windows.
        "FATHOM_ANALYSIS_RTT_WINDOW_S": "10",
        # Agents upload every 10 s: 20 s settles a run here (the default is 2 min), and new
        # runs are analysed every 10 s rather than every minute.
        "FATHOM_ANALYSIS_SETTLE_S": "20",
        "FATHOM_ANALYSIS_EVERY_S": "10",
        # Alerts: evaluate every 3 s and send an incident's first message after 3 s (30 s by
        # default), so a test sees a finding reach a receiver within seconds.
        "FATHOM_ALERT_EVALUATE_EVERY_S": "3",
        "FATHOM_ALERT_GROUP_WAIT_S": "3",
        # Agents (which read this environment too) poll their plan every 5 s, so a new
        # throughput slot can start 25 s after a mesh change instead of 90, and an agent
        # silent for 30 s (six polls) is down: the alert drill sees an outage in half a
        # minute rather than 3.
        "FATHOM_PLAN_POLL_INTERVAL_S": "5",
        "FATHOM_SLOT_PLANNING_LEAD_S": "25",
        "FATHOM_AGENT_OFFLINE_AFTER_S": "30",
        "FATHOM_PUBLIC_URL": url,
        # perfSONAR nodes (the fake one in test_perfsonar_ui): tasks reconciled and missing runs
        # polled every 3 s, a new task's first run 2 s out, slot tasks down to 5 s ahead (slots
        # are planned 25 s ahead here), pushes to this plain-HTTP receiver.
        "FATHOM_PERFSONAR_SYNC_EVERY_S": "3",
        "FATHOM_PERFSONAR_POLL_AFTER_S": "5",
        "FATHOM_PERFSONAR_FIRST_RUN_LEAD_S": "2",
        "FATHOM_PERFSONAR_SLOT_TASK_MIN_LEAD_S": "5",
        "FATHOM_PERFSONAR_ARCHIVE_VERIFY_TLS": "0",
    }
    password_file = tmp / "admin_password"
    stack = Stack(
        url=url,
        env=env,
        database_url=env["FATHOM_DATABASE_URL"],
        admin_user="admin",
        admin_password="",
        agents=[
            Agent("sys-a", f"{SYSTEST_NET}.2", free_port(), tmp / "agent-a"),
            Agent("sys-b", f"{SYSTEST_NET}.3", free_port(), tmp / "agent-b"),
        ],
    )
    try:
        stack.manage("migrate", "--no-input")
        stack.manage("collectstatic", "--no-input")
        stack.manage("ensure_admin", "--username", "admin", "--password-file", str(password_file))
        stack.admin_password = password_file.read_text().strip()
        # The default mesh, pinging every 10 s: what the spine tests wait for.
        mesh_file = tmp / "default-mesh.json"
        mesh_file.write_text(json.dumps({"name": "default", "tests": [SPINE_PING]}))
        stack.manage("apply_mesh", str(mesh_file))
        # Threaded workers, as in production: Chromium opens spare connections ahead of its
        # requests, and each such idle connection held a sync worker until gunicorn's 30 s
        # timeout killed it (two of them stalled the Findings page's request in CI).
        stack.start(
            "web",
            [str(VENV_BIN / "gunicorn"), "--chdir", "backend", "--bind", f"127.0.0.1:{port}",
             "--worker-class", "gthread", "--workers", "2", "--threads", "4", "fathom.wsgi"],
        )  # fmt: skip
        stack.start_worker()
        stack.start(
            "alerts-worker",
            [str(VENV_BIN / "celery"), "--workdir", "backend", "-A", "fathom", "worker", "-Q", "alerts", "-n",
             "alerts@%h", "--loglevel", "INFO", "--concurrency", "1"],
        )  # fmt: skip
        stack.start(
            "beat",
            [str(VENV_BIN / "celery"), "--workdir", "backend", "-A", "fathom", "beat", "--loglevel", "INFO",
             "--schedule", str(tmp / "celerybeat-schedule")],
        )  # fmt: skip
        wait_for("the web server", lambda: requests.get(f"{url}/api/v1/auth/csrf/", timeout=5).ok, 90, 0.3)
        for agent in stack.agents:
            stack.enrol(agent)
            stack.start_agent(agent)
        yield stack
    finally:
        for proc in stack.processes.values():
            proc.terminate()
        for name, proc in stack.processes.items():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                print(f"{name} did not stop on SIGTERM within 15 s")


@pytest.fixture(scope="session")
def findings_drill_lab(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FindingsDrillLab]:
    """The alert drill's and the findings lab's shared lab (findings_drill_lab.py)."""
    # Imported here: that module builds on this one's Stack and helpers.
    from .findings_drill_lab import findings_drill_lab_up

    with findings_drill_lab_up(stack, tmp_path_factory.mktemp("findings-drill")) as shared:
        yield shared


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests on the shared findings-drill lab last: it holds the lab's management network
    until the session ends, and the other lab tests bring up labs of their own on it."""
    items.sort(key=lambda item: "findings_drill_lab" in getattr(item, "fixturenames", ()))
