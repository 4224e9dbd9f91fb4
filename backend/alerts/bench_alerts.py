"""What evaluating the alert rules costs at 500 paths, as a fraction of the evaluation
interval (the issue's figure), on a throwaway database.

23 agents in a full mesh (506 paths), each path with 6 ping runs, 4 analysed throughput runs
and 2 flow sweeps in the last two days; every default rule plus one enabled threshold rule
per metric; 10% of paths with an open finding, one agent down, a silence. Timed: the first
tick (which creates the alerts and incidents) and steady ticks after it.

    make bench-alerts      # or: cd backend && python -m alerts.bench_alerts
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from datetime import timedelta

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")
os.environ.setdefault("FATHOM_DEBUG", "1")
django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from alerts.models import Rule, Silence  # noqa: E402
from alerts.services.evaluate import evaluate  # noqa: E402
from analysis.models import Finding, RunAnalysis, SweepModes  # noqa: E402
from inventory.models import Agent  # noqa: E402
from measurements.models import Run  # noqa: E402

AGENTS = 23
STEADY_TICKS = 10
TARGET_FRACTION = 0.10  # of the evaluation interval


def populate() -> int:
    now = timezone.now()
    agents = [
        Agent.objects.create(
            name=f"bench-{i:02d}", address=f"198.18.9.{i + 1}", credential_sha256="0" * 64, last_seen_at=now
        )
        for i in range(AGENTS)
    ]
    Agent.objects.filter(pk=agents[-1].pk).update(last_seen_at=now - timedelta(hours=1))
    runs, analyses, sweeps, findings = [], [], [], []
    paths = [(a, b) for a in agents for b in agents if a != b]
    for index, (a, b) in enumerate(paths):
        for k in range(6):
            at = now - timedelta(minutes=5 * (k + 1))
            summary = {"loss_fraction": 0.0, "rtt_median_ms": 20.0 + k * 0.1, "transmitted": 10, "received": 10}
            runs.append(Run(id=uuid.uuid4(), started_at=at, ended_at=at + timedelta(seconds=10), source_id=a.pk,
                            destination_id=b.pk, target=b.address, test_type="ping", test_id="bench/ping", status="ok",
                            summary=summary))  # fmt: skip
        for k in range(4):
            at = now - timedelta(hours=6 * (k + 1))
            analyses.append(RunAnalysis(run_id=uuid.uuid4(), started_at=at, source=a, destination=b, streams=1,
                                        rate_bps=9e8, ceiling_bps=1e9, limit="link", diagnosis="capacity", ceilings={},
                                        inputs={}, interval_stats={}, evidence={}))  # fmt: skip
        for k in range(2):
            at = now - timedelta(hours=12 * (k + 1))
            sweeps.append(SweepModes(run_id=uuid.uuid4(), started_at=at, source=a, destination=b, verdict="single",
                                     mode_count=1, analysis={}))  # fmt: skip
        if index % 10 == 0:
            findings.append(Finding(source=a, destination=b, metric="throughput", started_at=now, detected_at=now,
                                    direction="down", baseline=9e8, current=5e8, magnitude=-0.44,
                                    unit="relative"))  # fmt: skip
    Run.objects.bulk_create(runs, batch_size=2000)
    RunAnalysis.objects.bulk_create(analyses, batch_size=2000)
    SweepModes.objects.bulk_create(sweeps, batch_size=2000)
    Finding.objects.bulk_create(findings)
    for metric, comparison, value in (("throughput_fraction", "lt", 0.5), ("loss", "gt", 0.01),
                                      ("rtt_p50", "gt", 200.0), ("mode_count", "ge", 2.0)):  # fmt: skip
        Rule.objects.create(name=f"bench {metric}", kind="threshold", metric=metric, comparison=comparison, value=value,
                            k=2, n=3)  # fmt: skip
    Silence.objects.create(matchers=[{"name": "agent", "op": "=", "value": "bench-00"}],
                           starts_at=now - timedelta(hours=1), ends_at=now + timedelta(hours=1), created_by="bench",
                           comment="bench")  # fmt: skip
    return len(paths)


def main() -> None:
    old_name = connection.settings_dict["NAME"]
    # Its own throwaway database, never the test suite's (pytest reuses test_<name>).
    connection.settings_dict["TEST"]["NAME"] = f"{old_name}_bench_alerts"
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        paths = populate()
        interval = float(settings.ALERT_EVALUATE_EVERY_S)
        started = time.perf_counter()
        with CaptureQueriesContext(connection) as first_queries:
            first = evaluate(timezone.now())
        first_s = time.perf_counter() - started
        steady: list[float] = []
        for _ in range(STEADY_TICKS):
            started = time.perf_counter()
            with CaptureQueriesContext(connection) as steady_queries:
                evaluate(timezone.now())
            steady.append(time.perf_counter() - started)
        median, worst = statistics.median(steady), max(steady)
        rows = [
            ("first tick (creates alerts, incidents)", first_s, len(first_queries.captured_queries)),
            (f"steady tick, median of {STEADY_TICKS}", median, len(steady_queries.captured_queries)),
            (f"steady tick, worst of {STEADY_TICKS}", worst, len(steady_queries.captured_queries)),
        ]
        rules = Rule.objects.filter(enabled=True).count()
        print(f"Alert evaluation: {paths} paths, {AGENTS} agents, {rules} rules, {first.conditions} conditions; "
              f"interval {interval:.0f} s (FATHOM_ALERT_EVALUATE_EVERY_S); db {test_db}")  # fmt: skip
        print()
        print(f"| {'tick':<40} | {'seconds':>8} | {'of interval':>11} | {'target':>8} | {'queries':>7} | meets |")
        print(f"|{'-' * 42}|{'-' * 10}|{'-' * 13}|{'-' * 10}|{'-' * 9}|-------|")
        failed = 0
        for name, seconds, queries in rows:
            fraction = seconds / interval
            ok = fraction <= TARGET_FRACTION
            failed += not ok
            verdict = "yes" if ok else "NO"
            cells = f"| {name:<40} | {seconds:>8.3f} | {fraction:>10.1%} | {'<= 10%':>8} | {queries:>7} |"
            print(f"{cells} {verdict:<5} |")
        print()
        print(f"{len(rows) - failed} of {len(rows)} rows meet the target.")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
