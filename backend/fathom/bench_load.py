"""500 simulated agents against the real stack (issue 17's `make bench-load`).

A throwaway database and Redis database; the stack as compose runs it on this machine:
gunicorn (3 gthread workers x 8 threads), the Celery worker, the alerts worker and beat.
500 agents in 50 meshes of 10 (4,500 paths), each mesh pinging every 60 s (10 packets) and
measuring throughput every 6 hours in exclusive slots. Each simulated agent does what the
Go agent does, at its real rates (no time compression: every figure is per real second):
it polls its plan every 30 s with If-None-Match, uploads each ping result as its own batch
when the ping ends (the agent kicks its uploader after every result), and uploads a
throughput result at the end of every slot it leads. A request that fails is counted and
retried at the next round, as the agent's spool would.

Printed: requests and errors per kind, p50/p99 latency, results sent against results stored,
the backlog at the end (results due but not yet accepted, tasks waiting in Celery's queues),
and what planning the exclusive slots for all 500 agents costs, each beside its target.

    make bench-load                        # 10 minutes
    FATHOM_BENCH_LOAD_S=120 make bench-load   # a shorter look
"""

from __future__ import annotations

import copy
import heapq
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import django
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")
os.environ.setdefault("FATHOM_DEBUG", "1")
django.setup()

import redis  # noqa: E402
import requests  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from inventory.models import Agent  # noqa: E402
from inventory.services import digest  # noqa: E402
from measurements.models import Run  # noqa: E402
from meshes.documents import MeshSerializer  # noqa: E402
from meshes.models import Mesh  # noqa: E402
from meshes.services.slot_planning import plan_exclusive_slots  # noqa: E402

AGENTS = int(os.environ.get("FATHOM_BENCH_LOAD_AGENTS", "500"))
MESH_SIZE = 10
DURATION_S = float(os.environ.get("FATHOM_BENCH_LOAD_S", "600"))
PLAN_POLL_S = 30  # the agent's default plan_poll_interval_s
PING_INTERVAL_S = 60
PING_COUNT = 10
THROUGHPUT_INTERVAL_S = 6 * 3600
THROUGHPUT_DURATION_S = 20
CLIENT_THREADS = 48
WEB_WORKERS, WEB_THREADS = 3, 8
P99_TARGET_S = 1.0
SCHEDULER_INTERVAL_S = 300  # plan_exclusive_slots runs every 5 minutes (fathom.scheduled)
SCHEDULER_TARGET = 0.10
# The per-minute analysis (analysis.tasks.analyze_recent, every FATHOM_ANALYSIS_EVERY_S) as
# the Celery worker ran it under the load: each pass well within its interval.
ANALYSIS_TARGET = 0.50
ANALYSIS_PASS = re.compile(r"Task analysis\.tasks\.analyze_recent\[[^]]+\] succeeded in ([0-9.]+)s: (\{.*\})")
BACKEND = Path(__file__).resolve().parents[1]
THROUGHPUT_TEMPLATE = BACKEND.parent / "contract" / "examples" / "result-batch" / "valid" / "throughput-ok.json"
REDIS_BENCH_DB = 7
# Phases and RTTs of the simulated fleet, reproducible from run to run; nothing secret.
WORKER_LOG = Path(tempfile.gettempdir()) / "fathom-bench-load-worker.log"
RNG = random.Random(17)  # noqa: S311


@dataclass
class SimAgent:
    agent: Agent
    credential: str
    etag: str = ""
    pings: list[dict[str, Any]] = field(default_factory=list)
    slots: dict[str, dict[str, Any]] = field(default_factory=dict)
    done_slots: set[str] = field(default_factory=set)
    pending: list[dict[str, Any]] = field(default_factory=list)  # results not yet accepted
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def header(self) -> dict[str, str]:
        return {"Authorization": f"Agent {self.agent.pk}:{self.credential}", "Content-Type": "application/json"}


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def count_sent(self, kind: str) -> None:
        with self.lock:
            self.sent[kind] += 1

    def record(self, kind: str, seconds: float, error: str | None) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)
            if error:
                self.errors[kind].append(error)


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
    }


def start_stack(database: str) -> tuple[list[subprocess.Popen[bytes]], str]:
    env = stack_env(database)
    port = free_port()
    commands = [
        [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--worker-class", "gthread",
         "--workers", str(WEB_WORKERS), "--threads", str(WEB_THREADS), "--timeout", "120", "--keep-alive", "5",
         "fathom.wsgi"],
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


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def ping_result(test: dict[str, Any], ended: datetime, plan_version: str) -> dict[str, Any]:
    started = ended - timedelta(seconds=PING_COUNT)
    rtt = 8.0 + RNG.random()
    samples = [
        {"seq": seq, "time": iso(started + timedelta(seconds=seq)), "rtt_ms": rtt + seq * 0.01, "ttl": 61,
         "duplicate": False}
        for seq in range(PING_COUNT)
    ]  # fmt: skip
    return {
        "id": str(uuid.uuid4()),
        "test_type": "ping",
        "test_id": test["id"],
        "plan_version": plan_version,
        "peer_id": test["peer"]["id"],
        "target": test["peer"]["address"],
        "started_at": iso(started),
        "ended_at": iso(ended),
        "status": "ok",
        "error": "",
        "ping": {
            "count": PING_COUNT, "interval_s": 1.0, "size_bytes": 56, "ttl": None, "transmitted": PING_COUNT,
            "received": PING_COUNT, "duplicates": 0, "errors": 0, "samples": samples,
        },
    }  # fmt: skip


def throughput_result(template: dict[str, Any], slot: dict[str, Any], plan_version: str) -> dict[str, Any]:
    """The contract's example run, moved to this slot: its path, its slot id and its times."""
    result = copy.deepcopy(template)
    started = datetime.fromisoformat(slot["start_at"])
    result.update(
        id=str(uuid.uuid4()),
        test_id=slot["test_id"],
        plan_version=plan_version,
        peer_id=slot["peer"]["id"],
        target=slot["peer"]["address"],
        slot_id=slot["id"],
        started_at=iso(started),
        ended_at=iso(started + timedelta(seconds=24.1)),
    )
    return result


class Load:
    """The simulated fleet: a heap of due actions served by a pool of client threads."""

    def __init__(self, base: str, sims: list[SimAgent], template: dict[str, Any]) -> None:
        self.base = base
        self.sims = sims
        self.template = template
        self.tally = Tally()
        self.heap: list[tuple[float, int, str, SimAgent]] = []
        self.heap_lock = threading.Condition()
        self.sequence = 0
        self.plan_versions: dict[str, str] = {}
        self.ping_next: dict[tuple[str, str], float] = {}
        self.end = 0.0
        self.lags: list[float] = []  # how late each action started against its schedule

    def schedule(self, at: float, action: str, sim: SimAgent) -> None:
        with self.heap_lock:
            self.sequence += 1
            heapq.heappush(self.heap, (at, self.sequence, action, sim))
            self.heap_lock.notify()

    def run(self) -> None:
        start = time.monotonic()
        self.end = start + DURATION_S
        for sim in self.sims:
            self.schedule(start + RNG.uniform(0, PLAN_POLL_S), "plan", sim)
        threads = [threading.Thread(target=self.serve, daemon=True) for _ in range(CLIENT_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def serve(self) -> None:
        http = requests.Session()
        while True:
            with self.heap_lock:
                while True:
                    now = time.monotonic()
                    if now >= self.end:
                        self.heap_lock.notify_all()
                        return
                    if self.heap and self.heap[0][0] <= now:
                        due, _, action, sim = heapq.heappop(self.heap)
                        self.lags.append(now - due)
                        break
                    wait = (self.heap[0][0] - now) if self.heap else 0.5
                    self.heap_lock.wait(timeout=min(wait, self.end - now))
            if action == "plan":
                self.poll_plan(http, sim)
            else:
                self.ping(http, sim, action)

    def timed(
        self, http: requests.Session, kind: str, method: str, url: str, **kwargs: Any
    ) -> requests.Response | None:
        started = time.perf_counter()
        try:
            reply = http.request(method, url, timeout=60, **kwargs)
        except requests.RequestException as error:
            self.tally.record(kind, time.perf_counter() - started, f"{type(error).__name__}: {error}")
            return None
        ok = reply.status_code in (200, 304)
        self.tally.record(
            kind, time.perf_counter() - started, None if ok else f"{reply.status_code} {reply.text[:160]}"
        )
        return reply if ok else None

    def poll_plan(self, http: requests.Session, sim: SimAgent) -> None:
        headers = {**sim.header, **({"If-None-Match": sim.etag} if sim.etag else {})}
        reply = self.timed(http, "plan", "GET", f"{self.base}/api/v1/agent/plan/", headers=headers)
        now = time.monotonic()
        if reply is not None and reply.status_code == 200:
            plan = reply.json()
            sim.etag = reply.headers.get("ETag", "")
            self.plan_versions[str(sim.agent.pk)] = plan["version"]
            fresh = [test for test in plan["tests"] if test["type"] == "ping"]
            for test in fresh:
                key = (str(sim.agent.pk), test["id"])
                if key not in self.ping_next:
                    self.ping_next[key] = now + RNG.uniform(0, PING_INTERVAL_S) + PING_COUNT
                    self.schedule(self.ping_next[key], test["id"], sim)
            sim.pings = fresh
            # Merged, not replaced: a slot leaves the plan 30 s after its start, before the
            # poll that finds it ended; the agent ran it all the same.
            sim.slots.update(
                {
                    slot["id"]: slot
                    for slot in plan["slots"]
                    if slot["type"] == "throughput" and slot["id"] not in sim.done_slots
                }
            )
        self.finish_slots(http, sim)
        self.schedule(now + PLAN_POLL_S, "plan", sim)

    def ping(self, http: requests.Session, sim: SimAgent, test_id: str) -> None:
        test = next((test for test in sim.pings if test["id"] == test_id), None)
        if test is None:
            return
        version = self.plan_versions.get(str(sim.agent.pk), "")
        with sim.lock:
            sim.pending.append(ping_result(test, timezone.now(), version))
        self.tally.count_sent("ping")
        self.upload(http, sim)
        key = (str(sim.agent.pk), test_id)
        self.ping_next[key] += PING_INTERVAL_S
        self.schedule(self.ping_next[key], test_id, sim)

    def finish_slots(self, http: requests.Session, sim: SimAgent) -> None:
        """Throughput results for this agent's slots that have ended since its last poll."""
        now = timezone.now()
        version = self.plan_versions.get(str(sim.agent.pk), "")
        for slot_id, slot in list(sim.slots.items()):
            ended = datetime.fromisoformat(slot["start_at"]) + timedelta(seconds=THROUGHPUT_DURATION_S + 5)
            if ended <= now:
                del sim.slots[slot_id]
                sim.done_slots.add(slot_id)
                with sim.lock:
                    sim.pending.append(throughput_result(self.template, slot, version))
                self.tally.count_sent("throughput")
        if sim.pending:
            self.upload(http, sim)

    def upload(self, http: requests.Session, sim: SimAgent) -> None:
        with sim.lock:
            batch, sim.pending = sim.pending, []
        if not batch:
            return
        kind = "upload (throughput)" if any(r["test_type"] == "throughput" for r in batch) else "upload (ping)"
        body = json.dumps({"schema_version": 1, "results": batch})
        reply = self.timed(http, kind, "POST", f"{self.base}/api/v1/agent/results/", data=body, headers=sim.header)
        if reply is None:
            with sim.lock:
                sim.pending = batch + sim.pending  # kept, as the spool keeps them, for the next round


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def queued_tasks() -> int:
    broker = urlsplit(os.environ["FATHOM_REDIS_URL"])
    client = redis.Redis.from_url(urlunsplit(broker._replace(path=f"/{REDIS_BENCH_DB}")))
    return sum(int(client.llen(queue)) for queue in ("celery", "alerts"))


WIDTHS = (52, 16, 10, 5)


def row(*cells: object) -> str:
    text = [f"{cells[0]!s:<{WIDTHS[0]}}"] + [f"{c!s:>{w}}" for c, w in zip(cells[1:], WIDTHS[1:], strict=True)]
    return "| " + " | ".join(text) + " |"


@dataclass
class AnalysisPasses:
    seconds: list[float]
    paths: list[int]

    @classmethod
    def from_worker_log(cls) -> AnalysisPasses:
        passes = cls([], [])
        for match in ANALYSIS_PASS.finditer(WORKER_LOG.read_text(errors="replace")):
            passes.seconds.append(float(match.group(1)))
            passes.paths.append(int(json.loads(match.group(2).replace("'", '"')).get("paths", 0)))
        return passes


def report(
    load: Load,
    scheduler_s: float,
    analysis: AnalysisPasses,
    stored: dict[str, int],
    pending: dict[str, int],
    tasks: int,
) -> None:
    tally = load.tally
    lines: list[tuple[str, str, str, bool | None]] = []
    total_errors = sum(len(errors) for errors in tally.errors.values())
    requests_made = sum(len(values) for values in tally.latencies.values())
    lines.append(("requests (all kinds)", f"{requests_made:,}", "", None))
    lines.append(("requests per second", f"{requests_made / DURATION_S:.1f}", "", None))
    lines.append(("errors", f"{total_errors}", "0", total_errors == 0))
    for kind in sorted(tally.latencies):
        values = tally.latencies[kind]
        p99 = percentile(values, 0.99)
        lines.append((f"{kind}: requests", f"{len(values):,}", "", None))
        lines.append((f"{kind}: p50 latency", f"{percentile(values, 0.5) * 1000:.0f} ms", "", None))
        lines.append((f"{kind}: p99 latency", f"{p99 * 1000:.0f} ms", "< 1000 ms", p99 < P99_TARGET_S))
    for kind in ("ping", "throughput"):
        sent, kept, waiting = tally.sent[kind], stored.get(kind, 0), pending.get(kind, 0)
        lines.append((f"{kind} results measured / stored", f"{sent:,} / {kept:,}", "", None))
        lost = sent - kept - waiting
        lines.append((f"{kind} results lost (measured - stored - held)", f"{lost}", "0", lost == 0))
    backlog = sum(pending.values())
    lines.append(("backlog at the end: results held by agents", f"{backlog}", "0", backlog == 0))
    overdue = sum(1 for due, *_ in load.heap if due <= load.end)
    lines.append(("backlog at the end: polls and pings overdue", f"{overdue:,}", "0", overdue == 0))
    lines.append(("p99 lateness of a poll or ping (fleet starved)", f"{percentile(load.lags, 0.99):.1f} s", "", None))
    lines.append(("backlog at the end: tasks in Celery's queues", f"{tasks}", "", None))
    fraction = scheduler_s / SCHEDULER_INTERVAL_S
    lines.append(
        (f"slot planning, {AGENTS} agents (of its {SCHEDULER_INTERVAL_S} s)", f"{scheduler_s:.1f} s ({fraction:.1%})",
         f"< {SCHEDULER_TARGET:.0%}", fraction < SCHEDULER_TARGET)
    )  # fmt: skip
    every = settings.ANALYSIS_EVERY_S
    if analysis.seconds:
        worst = max(analysis.seconds)
        passes = f"{len(analysis.seconds)} / {max(analysis.paths):,}"
        lines.append(("analysis passes under load / paths in the largest", passes, "", None))
        lines.append((f"analysis pass p50 (of its {every} s)", f"{percentile(analysis.seconds, 0.5):.1f} s", "", None))
        lines.append(
            (f"analysis pass, slowest (of its {every} s)", f"{worst:.1f} s ({worst / every:.0%})",
             f"< {ANALYSIS_TARGET:.0%}", worst / every < ANALYSIS_TARGET)
        )  # fmt: skip
    else:
        lines.append(("analysis passes under load", "none logged", "> 0", False))
    print(row("figure", "measured", "target", "meets"))
    print(row(*("-" * width for width in WIDTHS)))
    failed = 0
    for name, measured, target, ok in lines:
        failed += ok is False
        print(row(name, measured, target, "" if ok is None else ("yes" if ok else "NO")))
    for kind, errors in tally.errors.items():
        for error in errors[:3]:
            print(f"    {kind} error: {error}")
    judged = sum(ok is not None for *_, ok in lines)
    print()
    print(f"{judged - failed} of {judged} judged figures meet their targets.")


def main() -> None:
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict["TEST"]["NAME"] = f"{old_name}_bench_load"
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        sims = populate()
        started = time.perf_counter()
        plan_exclusive_slots()
        scheduler_s = time.perf_counter() - started
        paths = AGENTS // MESH_SIZE * MESH_SIZE * (MESH_SIZE - 1)
        processes, base = start_stack(test_db)
        template = json.loads(THROUGHPUT_TEMPLATE.read_text())["results"][0]
        load = Load(base, sims, template)
        print(
            f"bench-load: {AGENTS} simulated agents in {AGENTS // MESH_SIZE} meshes of {MESH_SIZE} ({paths:,} paths), "
            f"ping every {PING_INTERVAL_S} s, throughput every {THROUGHPUT_INTERVAL_S // 3600} h, plan polls every "
            f"{PLAN_POLL_S} s, for {DURATION_S:.0f} s of real time; gunicorn {WEB_WORKERS}x{WEB_THREADS} gthread, "
            f"Celery worker, alerts worker and beat; {os.cpu_count()} cores; db {test_db}",
            flush=True,
        )
        load.run()
        time.sleep(2)  # the last requests' transactions commit
        stored = {
            kind: Run.objects.filter(test_type=kind, source_id__in=[sim.agent.pk for sim in sims]).count()
            for kind in ("ping", "throughput")
        }
        pending: dict[str, int] = defaultdict(int)
        for sim in sims:
            for result in sim.pending:
                pending[result["test_type"]] += 1
        tasks = queued_tasks()
        print()
        report(load, scheduler_s, AnalysisPasses.from_worker_log(), stored, pending, tasks)
    finally:
        stop(processes)
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
