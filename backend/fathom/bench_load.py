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
what planning the exclusive slots for all 500 agents costs, and a /metrics scrape of the
result (time, series, size), each beside its target.

    make bench-load                        # 10 minutes
    FATHOM_BENCH_LOAD_S=120 make bench-load   # a shorter look
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")
os.environ.setdefault("FATHOM_DEBUG", "1")
django.setup()


from django.db import connection  # noqa: E402

from fathom.bench_load_model import (  # noqa: E402
    AGENTS,
    DURATION_S,
    MESH_SIZE,
    PING_INTERVAL_S,
    PLAN_POLL_S,
    THROUGHPUT_INTERVAL_S,
    THROUGHPUT_TEMPLATE,
    WEB_THREADS,
    WEB_WORKERS,
)
from fathom.bench_load_report import AnalysisPasses, Scrapes, queued_tasks, report  # noqa: E402
from fathom.bench_load_sim import Load  # noqa: E402
from fathom.bench_load_stack import populate, start_stack, stop  # noqa: E402
from measurements.models import Run  # noqa: E402
from meshes.services.slot_planning import plan_exclusive_slots  # noqa: E402


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
        scrapes = Scrapes.fetch(base)
        print()
        report(load, scheduler_s, AnalysisPasses.from_worker_log(), stored, pending, tasks, scrapes)
    finally:
        stop(processes)
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
