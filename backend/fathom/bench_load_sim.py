"""The simulated agents' traffic in `make bench-load`: the results they send and the load
threads that poll plans and upload as the Go agent does."""

from __future__ import annotations

import copy
import heapq
import json
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.utils import timezone

from fathom.bench_load_model import (
    CLIENT_THREADS,
    DURATION_S,
    PING_COUNT,
    PING_INTERVAL_S,
    PLAN_POLL_S,
    RNG,
    THROUGHPUT_DURATION_S,
    SimAgent,
    Tally,
)


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
