"""The stack `make bench-load` runs against: the simulated fleet written to a throwaway
database, and gunicorn, the workers and beat started and stopped as compose runs them."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
from django.db import transaction
from django.utils import timezone

from fathom.bench_load_model import (
    AGENTS,
    BACKEND,
    MESH_SIZE,
    PING_COUNT,
    PING_INTERVAL_S,
    REDIS_BENCH_DB,
    THROUGHPUT_DURATION_S,
    THROUGHPUT_INTERVAL_S,
    WEB_THREADS,
    WEB_WORKERS,
    WORKER_LOG,
    SimAgent,
)
from inventory.models import Agent
from inventory.services import digest
from meshes.documents import MeshSerializer
from meshes.models import Mesh


def populate() -> list[SimAgent]:
    Mesh.objects.filter(all_agents=True).update(enabled=False)  # the default mesh of every agent
    now = timezone.now()
    sims = []
    for index in range(AGENTS):
        credential = secrets.token_urlsafe(32)
        agent = Agent.objects.create(
            name=f"load-{index:03d}",
            address=f"198.18.{10 + index // 250}.{index % 250 + 1}",
            credential_sha256=digest(credential),
            last_seen_at=now,
        )
        sims.append(SimAgent(agent, credential))
    tests = [
        {"name": "ping", "test_type": "ping", "interval_s": PING_INTERVAL_S, "spec": {"count": PING_COUNT}},
        {
            "name": "throughput",
            "test_type": "throughput",
            "interval_s": THROUGHPUT_INTERVAL_S,
            # No slip: the planner places future periods only, and with an hour of slip the
            # first ten minutes would hold almost no runs; without it they hold their share
            # of the steady rate (4,500 paths / 6 h = one run every 5 s).
            "slip_s": 0,
            "spec": {"duration_s": THROUGHPUT_DURATION_S},
        },
    ]
    with transaction.atomic():
        for start in range(0, AGENTS, MESH_SIZE):
            members = [{"agent": sim.agent.name} for sim in sims[start : start + MESH_SIZE]]
            serializer = MeshSerializer(
                data={"name": f"load-{start // MESH_SIZE:02d}", "kind": "mesh", "members": members, "tests": tests}
            )
            serializer.is_valid(raise_exception=True)
            serializer.save()
    return sims


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stack_env(database: str) -> dict[str, str]:
    db = urlsplit(os.environ["FATHOM_DATABASE_URL"])
    broker = urlsplit(os.environ["FATHOM_REDIS_URL"])
    return {
        **os.environ,
        "FATHOM_DATABASE_URL": urlunsplit(db._replace(path=f"/{database}")),
        "FATHOM_REDIS_URL": urlunsplit(broker._replace(path=f"/{REDIS_BENCH_DB}")),
        "FATHOM_AGENT_ADDRESS_NETWORKS": "198.18.0.0/15",
        "FATHOM_METRICS_ALLOW_NETWORKS": "127.0.0.1/32",  # the bench scrapes /metrics (bench_load_report)
    }


def start_stack(database: str) -> tuple[list[subprocess.Popen[bytes]], str]:
    env = stack_env(database)
    port = free_port()
    commands = [
        [sys.executable, "-m", "gunicorn", "--no-control-socket", "--bind", f"127.0.0.1:{port}",
         "--worker-class", "gthread", "--workers", str(WEB_WORKERS), "--threads", str(WEB_THREADS),
         "--timeout", "120", "--keep-alive", "5", "fathom.wsgi"],
        [sys.executable, "-m", "celery", "-A", "fathom", "worker", "-n", "load-worker@%h", "--concurrency", "2",
         "--loglevel", "INFO"],
        [sys.executable, "-m", "celery", "-A", "fathom", "worker", "-Q", "alerts", "-n", "load-alerts@%h",
         "--concurrency", "2", "--loglevel", "WARNING"],
        [sys.executable, "-m", "celery", "-A", "fathom", "beat", "--loglevel", "WARNING",
         "--schedule", str(Path(tempfile.mkdtemp(prefix="fathom-bench-load-")) / "beat-schedule")],
    ]  # fmt: skip
    # The worker logs each task's run time at INFO: the analysis passes are read from it.
    worker_log = WORKER_LOG.open("wb")
    processes = [
        subprocess.Popen(command, cwd=BACKEND, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
        if "load-worker@%h" not in command
        else subprocess.Popen(command, cwd=BACKEND, env=env, stdout=worker_log, stderr=subprocess.STDOUT)  # noqa: S603
        for command in commands
    ]
    worker_log.close()
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            requests.get(f"{base}/api/v1/health/", timeout=5).raise_for_status()
            return processes, base
        except requests.RequestException:
            time.sleep(0.1)
    stop(processes)
    raise RuntimeError("gunicorn did not start")


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
