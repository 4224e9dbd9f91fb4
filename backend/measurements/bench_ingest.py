"""Per-packet RTT samples per second through the result API, beside a raw COPY of the same
rows into the same hypertable, in the same run (issue 17: the API should reach half of COPY).

A throwaway database; a real gunicorn (3 workers, as compose runs it) on a free loopback
port; 4 agents in the default mesh. Each batch holds 20 ping results of 1,000 samples (what
an agent spools in about an hour of 1,000-packet pings, as one upload). One client posts
batches one after another, then three clients (three agents) post at once. Then the same
number of rows goes into measurements_pingsample by COPY from one connection.

    make bench-ingest      # or: cd backend && python -m measurements.bench_ingest
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")
os.environ.setdefault("FATHOM_DEBUG", "1")
django.setup()

import requests  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from inventory.models import Agent  # noqa: E402
from inventory.services import digest  # noqa: E402
from measurements.models import PingSample  # noqa: E402

RESULTS_PER_BATCH = 20
SAMPLES_PER_RESULT = 1000
BATCHES_ONE_CLIENT = 10
BATCHES_PER_CLIENT_OF_THREE = 6
WORKERS = 3
TARGET_OF_COPY = 0.5
BACKEND = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class BenchAgent:
    agent: Agent
    credential: str

    @property
    def header(self) -> dict[str, str]:
        return {"Authorization": f"Agent {self.agent.pk}:{self.credential}", "Content-Type": "application/json"}


def make_agents(count: int) -> list[BenchAgent]:
    made = []
    for index in range(count):
        credential = secrets.token_urlsafe(32)
        agent = Agent.objects.create(
            name=f"bench-ingest-{index}",
            address=f"198.18.8.{index + 1}",
            credential_sha256=digest(credential),
            last_seen_at=timezone.now(),
        )
        made.append(BenchAgent(agent, credential))
    return made


def ping_result(peer: Agent, started: datetime) -> dict[str, Any]:
    samples = [
        {
            "seq": seq,
            "time": (started + timedelta(milliseconds=10 * seq)).isoformat(),
            "rtt_ms": 7.8 + (seq % 7) * 0.01,
            "ttl": 61,
            "duplicate": False,
        }
        for seq in range(SAMPLES_PER_RESULT)
    ]
    return {
        "id": str(uuid.uuid4()),
        "test_type": "ping",
        "test_id": f"default/ping:{peer.pk}",
        "plan_version": "bench",
        "peer_id": str(peer.pk),
        "target": peer.address,
        "started_at": started.isoformat(),
        "ended_at": (started + timedelta(milliseconds=10 * SAMPLES_PER_RESULT + 50)).isoformat(),
        "status": "ok",
        "error": "",
        "ping": {
            "count": SAMPLES_PER_RESULT,
            "interval_s": 0.01,
            "size_bytes": 56,
            "ttl": None,
            "transmitted": SAMPLES_PER_RESULT,
            "received": SAMPLES_PER_RESULT,
            "duplicates": 0,
            "errors": 0,
            "samples": samples,
        },
    }


def batch_body(peer: Agent, base: datetime) -> bytes:
    results = [ping_result(peer, base + timedelta(seconds=11 * index)) for index in range(RESULTS_PER_BATCH)]
    return json.dumps({"schema_version": 1, "results": results}).encode()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_gunicorn(database: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    url = urlsplit(os.environ["FATHOM_DATABASE_URL"])
    env = {**os.environ, "FATHOM_DATABASE_URL": urlunsplit(url._replace(path=f"/{database}"))}
    server = subprocess.Popen(  # noqa: S603 - this interpreter's gunicorn
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--no-control-socket",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(WORKERS),
            "fathom.wsgi",
        ],
        cwd=BACKEND,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            requests.get(f"{base}/api/v1/auth/csrf/", timeout=5).raise_for_status()
            return server, base
        except requests.RequestException:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("gunicorn did not start")


def post_batches(base: str, sender: BenchAgent, peer: Agent, bodies: list[bytes], errors: list[str]) -> None:
    with requests.Session() as http:
        for body in bodies:
            reply = http.post(f"{base}/api/v1/agent/results/", data=body, headers=sender.header, timeout=120)
            if reply.status_code != 200:
                errors.append(f"{reply.status_code}: {reply.text[:200]}")


def through_api(base: str, senders: list[BenchAgent], peer: Agent, batches_each: int) -> tuple[int, float, list[str]]:
    """Samples stored and seconds taken, with every client posting its batches at once."""
    # A batch spans 20 x 11 s; batches 5 minutes apart, all within the last few hours.
    now = timezone.now() - timedelta(hours=5)
    plans = [
        [
            batch_body(peer, now + timedelta(minutes=5 * (client * batches_each + index)))
            for index in range(batches_each)
        ]
        for client in range(len(senders))
    ]
    errors: list[str] = []
    threads = [
        threading.Thread(target=post_batches, args=(base, sender, peer, bodies, errors))
        for sender, bodies in zip(senders, plans, strict=True)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    samples = len(senders) * batches_each * RESULTS_PER_BATCH * SAMPLES_PER_RESULT
    return samples, seconds, errors


def raw_copy(source: Agent, peer: Agent, rows: int) -> float:
    """Seconds to COPY `rows` ping sample rows, as ingest's rows would be, from one connection."""
    base = timezone.now() - timedelta(hours=1)
    fields = [field for field in PingSample._meta.concrete_fields if field.column]
    columns = ", ".join(field.column for field in fields)
    values = []
    for result in range(rows // SAMPLES_PER_RESULT):
        run_id = uuid.uuid4()
        started = base + timedelta(seconds=11 * result)
        for seq in range(SAMPLES_PER_RESULT):
            at = started + timedelta(milliseconds=10 * seq)
            values.append((at, run_id, seq, source.pk, peer.pk, seq, 7.8 + (seq % 7) * 0.01, 61, False, "", False))
    started_at = time.perf_counter()
    statement = f"COPY measurements_pingsample ({columns}) FROM STDIN"
    with transaction.atomic(), connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in values:
            copy.write_row(row)
    return time.perf_counter() - started_at


WIDTHS = (26, 8, 8, 10, 8, 7, 5)


def table_row(*cells: object) -> str:
    """One row of the printed table: the first column left-aligned, the others right."""
    text = [f"{cells[0]!s:<{WIDTHS[0]}}"] + [
        f"{cell!s:>{width}}" for cell, width in zip(cells[1:], WIDTHS[1:], strict=True)
    ]
    return "| " + " | ".join(text) + " |"


def main() -> None:
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict["TEST"]["NAME"] = f"{old_name}_bench_ingest"
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = None
    try:
        agents = make_agents(4)
        peer = agents[-1].agent
        server, base = start_gunicorn(test_db)
        post_batches(base, agents[0], peer, [batch_body(peer, timezone.now() - timedelta(hours=3))], [])  # warm-up
        rows = [
            ("API, 1 client", *through_api(base, agents[:1], peer, BATCHES_ONE_CLIENT)),
            ("API, 3 clients at once", *through_api(base, agents[:3], peer, BATCHES_PER_CLIENT_OF_THREE)),
        ]
        copy_rows = max(samples for _, samples, _, _ in rows)
        copy_s = raw_copy(agents[0].agent, peer, copy_rows)
        copy_rate = copy_rows / copy_s
        stored = PingSample.objects.count()
        print(
            f"Ingest of per-packet ping samples: batches of {RESULTS_PER_BATCH} results x {SAMPLES_PER_RESULT} samples "
            f"({len(batch_body(peer, timezone.now())) / 2**20:.1f} MiB), gunicorn {WORKERS} workers, "
            f"{os.cpu_count()} cores; db {test_db}"
        )
        print()
        print(table_row("path", "samples", "seconds", "samples/s", "of COPY", "target", "meets"))
        print(table_row(*("-" * width for width in WIDTHS)))
        print(table_row("raw COPY, 1 connection", copy_rows, f"{copy_s:.2f}", f"{copy_rate:,.0f}", "100%", "", ""))
        failed = 0
        for name, samples, seconds, errors in rows:
            rate = samples / seconds
            ratio = rate / copy_rate
            ok = ratio >= TARGET_OF_COPY and not errors
            failed += not ok
            verdict = "yes" if ok else "NO"
            print(table_row(name, samples, f"{seconds:.2f}", f"{rate:,.0f}", f"{ratio:.0%}", ">= 50%", verdict))
            for error in errors[:3]:
                print(f"    error: {error}")
        print()
        print(f"{stored} sample rows stored in all; {len(rows) - failed} of {len(rows)} API rows meet the target.")
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
