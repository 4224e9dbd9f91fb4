"""Server time of the path history and the grid, and the rollup refresh's cost, for a 100-agent
mesh (9,900 paths) with a year of history, on a throwaway database (issue 15's targets).

It lives in the roof (fathom) because it times the grid, which is analysis's, beside the
history app's path queries. What it fills (9,900 paths x a year of 1-minute raw RTT would be
5 billion rows, more than this machine holds or fills in minutes):

- the measured path, both directions: a year of 1-minute pings (one sample a minute) and 4
  throughput runs a day each way, rolled up by the real refresh as if each result had
  arrived on time, then raw data older than FATHOM_RAW_RETENTION_DAYS dropped by the real
  retention task (rollups stay, as in production);
- the other paths of 10 agents: daily RTT rollups for the year (no raw, minute or hour rollups);
- every one of the 9,900 grid cells (and Paths list rows): its latest analysed run, a flow
  sweep every 15 minutes for the last day (the default schedule) with the standing modes the
  analysis task keeps from them, its newest run per test type (PathLatestRun), the last hour
  of 1-minute RTT rollups (the refresh's hour below, then minute rows up to now) and its
  last-hour row as the minute refresh keeps it, and 5% with an open finding;
- the refresh: 60 minutes of new data for all 9,900 paths (a ping a minute each, 27.5
  throughput runs a minute), marked stale as ingest marks it, and the real refresh run after
  each minute and for the hour that closes; the day's close is measured on 99 paths with a
  full day of raw data and scaled to 9,900 (it happens once a day).

Timed: path history through the Django test client (the real view, URL to JSON), the grid
(served from the minute's snapshot, analysis/services/snapshots.py) and the Paths list likewise;
the grid snapshot's computation, which beat repeats each minute, as wall time;
refresh CPU as this process's CPU plus the PostgreSQL backend's (from /proc).

    make bench-queries      # or: cd backend && python -m fathom.bench_queries
    FATHOM_BENCH_KEEP_DB=1  # keeps the filled database (named in the output) for profiling
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fathom.settings")
os.environ.setdefault("FATHOM_DEBUG", "1")
django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from analysis.models import Finding, RunAnalysis  # noqa: E402
from analysis.services.snapshots import compute_grid_body  # noqa: E402
from analysis.services.sweep_modes import MODES_LOOKBACK  # noqa: E402
from history.backfill import mark_range  # noqa: E402
from history.buckets import DAY, HOUR, MINUTE  # noqa: E402
from history.last_hour import store_last_hour  # noqa: E402
from history.marks import Mark, mark  # noqa: E402
from history.models import ClosedBuckets, Kind, StaleBucket  # noqa: E402
from history.refresh import refresh, refresh_resolution  # noqa: E402
from inventory.models import Agent  # noqa: E402
from measurements.models import PathLatestRun  # noqa: E402
from measurements.retention import drop_expired_measurements  # noqa: E402
from meshes.models import Mesh  # noqa: E402

AGENTS = 100
RUNS_PER_DAY = 4
REQUESTS = 30
GRID_REQUESTS = 8
SNAPSHOT_COMPUTES = 5
SWEEP_EVERY = timedelta(minutes=15)
DAY_CLOSE_PATHS = 99
DAILY_SOURCES = 10  # agents whose paths get a year of daily rollups besides the measured path
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

PING_SQL = """
INSERT INTO measurements_pingsample (time, run_id, sample_index, source_id, destination_id, seq, rtt_ms, ttl,
                                     duplicate, error)
SELECT t + make_interval(secs => 7 + (hashtext(p.source_id::text) & 31)), gen_random_uuid(), 0,
       p.source_id, p.destination_id, 0,
       CASE WHEN random() < 0.002 THEN NULL ELSE p.base_ms + 3 * random() ^ 4 END, 64, false, ''
FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(bases)s::float8[]) AS p(source_id, destination_id, base_ms)
CROSS JOIN generate_series(%(start)s::timestamptz, %(end)s::timestamptz - interval '1 minute', interval '1 minute') t
"""

RUNS_SQL = """
INSERT INTO measurements_run (id, started_at, ended_at, source_id, destination_id, target, test_type, test_id,
                              plan_version, status, error, received_at, params, summary)
SELECT gen_random_uuid(), t, t + interval '24 seconds', p.source_id, p.destination_id, 'bench', 'throughput',
       'bench/throughput', 'bench', CASE WHEN random() < 0.02 THEN 'failed' ELSE 'ok' END, '',
       t + interval '30 seconds',
       '{"reverse": false}'::jsonb,
       jsonb_build_object('reverse', false, 'receiver_bits_per_s', 9e8 * (0.8 + 0.2 * random()),
                          'retransmits', (random() * 40)::int)
FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(times)s::timestamptz[]) AS p(source_id, destination_id, t)
"""

DAILY_ROLLUPS_SQL = """
INSERT INTO history_rttday (source_id, destination_id, bucket, count, sent, lost,
                            min_ms, p10_ms, p50_ms, p90_ms, max_ms)
SELECT a.id, b.id, d, 1437, 1440, 3, 20.0, 20.3, 20.8, 21.9, 48.0
FROM inventory_agent a CROSS JOIN inventory_agent b
CROSS JOIN generate_series(%(start)s::timestamptz, %(end)s::timestamptz, interval '1 day') d
WHERE a.id = ANY(%(sources)s) AND a.id <> b.id AND NOT (a.id = ANY(%(measured)s) AND b.id = ANY(%(measured)s))
"""


# A day of flow sweeps per path, as analysis stores them (one mode; run ids of no stored run).
SWEEPS_SQL = """
INSERT INTO analysis_sweepmodes (run_id, started_at, source_id, destination_id, verdict, base_rtt_ms, mode_count,
                                 analysis, analysis_version, computed_at)
SELECT gen_random_uuid(), t - make_interval(secs => hashtext(a.id::text || b.id::text) & 511), a.id, b.id, 'single',
       20.0, 1, '{"verdict": "single", "modes": [{"rtt_ms": 20.0, "share": 1.0}], "flows_used": 16}'::jsonb, 1, t
FROM inventory_agent a CROSS JOIN inventory_agent b
CROSS JOIN generate_series(%(start)s::timestamptz, %(end)s::timestamptz, %(every)s::interval) t
WHERE a.id <> b.id
"""

STANDING_SQL = """
INSERT INTO analysis_standingmodes (source_id, destination_id, sweep_run_id, mode_count, verdict, valid_until,
                                    computed_at)
SELECT DISTINCT ON (source_id, destination_id) source_id, destination_id, run_id, mode_count, verdict,
       started_at + %(lookback)s, computed_at
FROM analysis_sweepmodes ORDER BY source_id, destination_id, started_at DESC
"""
# The minutes of pings after the refresh's hour, as the minute refresh stores them (the
# measured path's come from raw pings, by the real refresh).
MINUTE_ROLLUPS_SQL = """
INSERT INTO history_rttminute (source_id, destination_id, bucket, count, sent, lost,
                               min_ms, p10_ms, p50_ms, p90_ms, max_ms)
SELECT a.id, b.id, m, 1, 1, 0, 20.0, 20.0, 20.0 + random(), 21.0, 21.0
FROM inventory_agent a CROSS JOIN inventory_agent b
CROSS JOIN generate_series(%(start)s::timestamptz, %(end)s::timestamptz - interval '1 minute', interval '1 minute') m
WHERE a.id <> b.id AND NOT (a.id = ANY(%(measured)s) AND b.id = ANY(%(measured)s))
"""


def progress(began: float, what: str) -> None:
    print(f"[{time.perf_counter() - began:6.1f} s] {what}", file=sys.stderr, flush=True)


def cpu_seconds(backend_pid: int) -> float:
    """This process's CPU plus the PostgreSQL backend's that serves it."""
    fields = Path(f"/proc/{backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
    backend = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return time.process_time() + backend


def execute(sql: str, params: dict[str, Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.rowcount)


def pings(paths: list[tuple[uuid.UUID, uuid.UUID]], start: datetime, end: datetime) -> int:
    return execute(
        PING_SQL,
        {"sources": [a for a, _ in paths], "destinations": [b for _, b in paths],
         "bases": [5.0 + (hash((a, b)) % 150) for a, b in paths], "start": start, "end": end},
    )  # fmt: skip


def runs(paths: list[tuple[uuid.UUID, uuid.UUID]], times: list[datetime]) -> int:
    return execute(RUNS_SQL, {"sources": [a for a, _ in paths], "destinations": [b for _, b in paths], "times": times})


def make_agents(now: datetime) -> list[Agent]:
    Agent.objects.bulk_create(
        Agent(name=f"bench-{index:03d}", address=f"198.18.{index // 200}.{index % 200 + 1}",
              credential_sha256="0" * 64, last_seen_at=now)
        for index in range(AGENTS)
    )  # fmt: skip
    return list(Agent.objects.order_by("name"))


def fill_grid_state(agents: list[Agent], now: datetime) -> int:
    """Each path's latest analysed run, newest run per test type, a day of flow sweeps and the
    standing modes kept from them, and 5% with an open finding; returns the sweeps stored."""
    analyses, latest, findings = [], [], []
    for index, (a, b) in enumerate((a, b) for a in agents for b in agents if a != b):
        at = now - timedelta(hours=index % 6)
        analyses.append(RunAnalysis(run_id=uuid.uuid4(), started_at=at, source=a, destination=b, streams=1,
                                    rate_bps=9e8, ceiling_bps=1e9, limit="link", diagnosis="capacity", ceilings={},
                                    inputs={}, interval_stats={}, evidence={}))  # fmt: skip
        for test_type, started_at in (("throughput", at), ("ping", now - timedelta(seconds=index % 60)),
                                      ("flowsweep", now - timedelta(minutes=index % 15))):  # fmt: skip
            latest.append(PathLatestRun(source=a, destination=b, test_type=test_type, run_id=uuid.uuid4(),
                                        started_at=started_at, status="ok"))  # fmt: skip
        if index % 20 == 0:
            findings.append(Finding(source=a, destination=b, metric="throughput", started_at=at, detected_at=at,
                                    direction="down", baseline=9e8, current=5e8, magnitude=-0.44,
                                    unit="relative"))  # fmt: skip
    RunAnalysis.objects.bulk_create(analyses, batch_size=2000)
    PathLatestRun.objects.bulk_create(latest, batch_size=2000)
    Finding.objects.bulk_create(findings, batch_size=2000)
    sweeps = execute(SWEEPS_SQL, {"start": now - timedelta(days=1) + SWEEP_EVERY, "end": now, "every": SWEEP_EVERY})
    # What the analysis task keeps from them (the newest sweep stands, one mode): written here,
    # as computing it for 9,900 paths at once is the task's work spread over a day, not the grid's.
    execute(STANDING_SQL, {"lookback": MODES_LOOKBACK})
    return sweeps


def minute_and_hour_refresh(at: datetime) -> Callable[[], object]:
    return lambda: [refresh_resolution(level, at) for level in (MINUTE, HOUR)]


def timed(call: Callable[[], object], backend_pid: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = cpu_seconds(backend_pid), time.perf_counter()
    call()
    return cpu_seconds(backend_pid) - cpu, time.perf_counter() - wall


def timed_gets(client: Client, url: str) -> tuple[list[float], Any]:
    """Server time of GRID_REQUESTS GETs of url after 2 warm-ups, and the last body."""
    times = []
    for attempt in range(GRID_REQUESTS + 2):
        started = time.perf_counter()
        reply = client.get(url)
        elapsed = time.perf_counter() - started
        assert reply.status_code == 200, reply.content[:300]
        if attempt >= 2:
            times.append(elapsed)
    return times, reply.json()


def snapshot_costs(compute: Callable[[], object]) -> list[float]:
    """Wall time of computing and storing a snapshot, SNAPSHOT_COMPUTES times."""
    costs = []
    for _ in range(SNAPSHOT_COMPUTES):
        started = time.perf_counter()
        compute()
        costs.append(time.perf_counter() - started)
    return costs


def minute_share(costs: list[float]) -> float:
    """A once-a-minute cost as a percentage of one core (its median over the minute)."""
    return statistics.median(costs) / 60 * 100


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    began = time.perf_counter()
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict["TEST"]["NAME"] = f"{old_name}_bench_queries"
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        run(test_db, began)
    finally:
        if not os.environ.get("FATHOM_BENCH_KEEP_DB"):
            connection.creation.destroy_test_db(old_name, verbosity=0)


def run(test_db: str, began: float) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
        assert row is not None
        backend_pid = int(row[0])
    now = timezone.now()
    agents = make_agents(now)
    ids = [agent.pk for agent in agents]
    every_path = [(a, b) for a in ids for b in ids if a != b]
    a, b = ids[0], ids[1]
    measured = [(a, b), (b, a)]
    # The refresh's hour: the last whole hour that has settled.
    hour_start = HOUR.floor(now - timedelta(minutes=62))
    year_start = DAY.floor(now - timedelta(days=365))

    # 1. The measured path: a year of raw data, rolled up by the real refresh as if it had
    # arrived on time (raw retention widened for that), then raw retention applied.
    started = time.perf_counter()
    raw_rows = pings(measured, year_start, hour_start)
    progress(began, f"{raw_rows:,} raw pings")
    run_times = [year_start + timedelta(hours=24 / RUNS_PER_DAY * k, minutes=13) for k in range(365 * RUNS_PER_DAY)]
    run_rows = sum(runs([path] * len(run_times), run_times) for path in measured)
    raw_days, settings.RAW_RETENTION_DAYS = settings.RAW_RETENTION_DAYS, 400
    mark_range(year_start, hour_start, now)
    claimed = refresh(now)
    settings.RAW_RETENTION_DAYS = raw_days
    # From here the refresh runs as in steady state: every hour and day before the refresh's
    # hour closed, that hour and its day not yet.
    for resolution, before in ((HOUR, hour_start), (DAY, DAY.floor(hour_start))):
        ClosedBuckets.objects.update_or_create(resolution=resolution.name, defaults={"before": before})
    drop_expired_measurements(now)
    backfill_s = time.perf_counter() - started
    progress(began, f"measured path: {raw_rows:,} pings, rolled up in {backfill_s:.0f} s")
    # 2. The other paths of DAILY_SOURCES agents: daily RTT rollups for the year.
    daily_rows = execute(
        DAILY_ROLLUPS_SQL,
        {"start": year_start, "end": DAY.floor(now) - DAY.width, "measured": [a, b], "sources": ids[:DAILY_SOURCES]},
    )
    progress(began, f"{daily_rows:,} daily rollups")
    # 3. The grid's latest state for every cell.
    sweep_rows = fill_grid_state(agents, now)
    progress(began, f"grid state: {sweep_rows:,} flow sweeps")

    # 4. The refresh: a minute of data for all 9,900 paths, marked as ingest marks it, then the
    # refresh (minute and hour resolutions; the day's close below), 60 times, and the hour closes.
    bases_by_minute = 0
    tick_cpu, tick_wall = 0.0, 0.0
    for minute in range(62):
        moment = hour_start + timedelta(minutes=minute)
        if minute < 60:
            pings(every_path, moment, moment + MINUTE.width)
            due = every_path[int(minute * 27.5) % len(every_path) :][: 28 if minute % 2 else 27]
            runs(due, [moment + timedelta(seconds=20)] * len(due))
            mark(MINUTE, [Mark(Kind.RTT, s, d, 4, moment) for s, d in every_path]
                 + [Mark(Kind.THROUGHPUT, s, d, 4, moment) for s, d in due])  # fmt: skip
            bases_by_minute += len(every_path)
        tick = moment + MINUTE.width + timedelta(seconds=5)
        cpu, wall = timed(minute_and_hour_refresh(tick), backend_pid)
        tick_cpu, tick_wall = tick_cpu + cpu, tick_wall + wall
        if minute % 10 == 0:
            progress(began, f"refresh minute {minute}: {cpu:.3f} s CPU")
    refresh_minute_cpu = tick_cpu / 60
    # The minutes since, up to now (not timed): the measured path's from raw pings by the real
    # refresh, the other paths' as minute rollups; then every path's last hour as the minute
    # refresh keeps it.
    rest = hour_start + HOUR.width
    pings(measured, rest, MINUTE.floor(now))
    mark(
        MINUTE,
        [
            Mark(Kind.RTT, s, d, 4, rest + k * MINUTE.width)
            for s, d in measured
            for k in range(int((now - rest) / MINUTE.width))
        ],
    )
    execute(MINUTE_ROLLUPS_SQL, {"start": rest, "end": MINUTE.settled_before(now), "measured": [a, b]})
    # Days are closed in the next step, on a day of their own.
    StaleBucket.objects.filter(resolution=DAY.name).delete()
    ClosedBuckets.objects.filter(resolution=DAY.name).update(before=DAY.settled_before(now))
    refresh(now)
    store_last_hour([(s, d, 4) for s, d in every_path], now)
    progress(began, "the last hour filled")
    # 5. A day's close: 99 paths with a full day of raw data (and the measured path's two), the
    # real close (marks from raw, recompute), scaled to 9,900 paths once a day.
    day = DAY.floor(now) - 3 * DAY.width
    closing = [(ids[-1], other) for other in ids[:-1]][:DAY_CLOSE_PATHS]
    pings(closing, day, day + DAY.width)
    ClosedBuckets.objects.filter(resolution=DAY.name).update(before=day)
    day_cpu, _ = timed(lambda: refresh_resolution(DAY, day + DAY.width + timedelta(minutes=3)), backend_pid)
    closed_paths = len(closing) + len(measured)
    day_close_minute_cpu = day_cpu * len(every_path) / closed_paths / (24 * 60)

    progress(began, "day close")
    # 6. Server time: path history at three ranges (interleaved, same run) and the grid.
    viewer = User.objects.create_user("bench-viewer", password=None)
    client = Client(HTTP_HOST="localhost")
    client.force_login(viewer)
    ranges = {"1 day": timedelta(days=1), "30 days": timedelta(days=30), "1 year": timedelta(days=365)}
    times: dict[str, list[float]] = {name: [] for name in ranges}
    points: dict[str, tuple[str, int]] = {}
    for attempt in range(REQUESTS + 3):
        for name, span in ranges.items():
            query = {"source": str(a), "destination": str(b), "from": (now - span).isoformat(), "to": now.isoformat()}
            started = time.perf_counter()
            reply = client.get("/api/v1/paths/history/", query)
            elapsed = time.perf_counter() - started
            assert reply.status_code == 200, reply.content[:300]
            if attempt >= 3:
                times[name].append(elapsed)
            body = reply.json()
            points[name] = (body["resolution"], max(len(body["rtt"]), len(body["reverse"]["rtt"])))
    grid_times, grid = timed_gets(client, "/api/v1/analysis/meshes/default/grid/")
    cells = len(grid["cells"])
    # What beat pays each minute to keep the grid's snapshot: the grid computed and stored.
    mesh = Mesh.objects.prefetch_related("members", "tests").get(name="default")
    compute_times = snapshot_costs(lambda: compute_grid_body(mesh))
    list_times, listing = timed_gets(client, "/api/v1/analysis/paths/")
    listed = len(listing["paths"])

    # The table.
    p95 = {name: percentile(values, 0.95) for name, values in times.items()}
    p50 = {name: statistics.median(values) for name, values in times.items()}
    refresh_percent = (refresh_minute_cpu + day_close_minute_cpu) / 60 * 100
    rows = [
        (f"path history, 1 day ({points['1 day'][0]}, {points['1 day'][1]} pts)", p50["1 day"], p95["1 day"],
         "(the ratio's base)", None),
        (f"path history, 30 days ({points['30 days'][0]}, {points['30 days'][1]} pts)", p50["30 days"],
         p95["30 days"], "(none)", None),
        (f"path history, 1 year ({points['1 year'][0]}, {points['1 year'][1]} pts)", p50["1 year"], p95["1 year"],
         f"< 150 ms p95, <= 2x 1 day: {p95['1 year'] / p95['1 day']:.2f}x",
         p95["1 year"] < 0.150 and p95["1 year"] <= 2 * p95["1 day"]),
        (f"grid, {cells:,} cells (the minute's snapshot)", statistics.median(grid_times),
         percentile(grid_times, 0.95), "< 300 ms p95", percentile(grid_times, 0.95) < 0.300),
        ("grid snapshot computed (beat, once a minute)", statistics.median(compute_times),
         percentile(compute_times, 0.95), f"(its cost: {minute_share(compute_times):.1f}% of a core)", None),
        (f"paths list, {listed:,} paths", statistics.median(list_times), percentile(list_times, 0.95),
         "< 500 ms p95", percentile(list_times, 0.95) < 0.500),
    ]  # fmt: skip
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"Query bench: {AGENTS} agents, {len(every_path):,} paths, {time.perf_counter() - began:.0f} s, db {test_db},"
    )
    print(f"  load average {load} on {os.cpu_count()} CPUs.")
    print("Filled:")
    print(
        f"- measured path (A <-> B): {raw_rows:,} pings (1 a minute, a year, both ways), {run_rows:,} throughput runs"
    )
    print(f"  (4 a day each way), rolled up by the real refresh in {backfill_s:.0f} s (buckets {claimed}),")
    print(f"  then raw data older than {settings.RAW_RETENTION_DAYS} days dropped by the raw retention task;")
    print(f"- {daily_rows:,} daily RTT rollups for the other paths of {DAILY_SOURCES} agents (no raw, minute, hour);")
    print(f"- grid and paths list: all {len(every_path):,} paths with their latest analysed run, {sweep_rows:,} flow")
    print("  sweeps (every 15 min for a day) and the standing modes kept from them, the newest run per test type,")
    print("  the last hour of 1-minute RTT rollups and each path's last-hour row, 5% with an open finding.")
    print(f"Refresh: 60 minutes of new data for all {len(every_path):,} paths ({bases_by_minute:,} pings, 27.5")
    print(f"  throughput runs a minute), refreshed each minute, and the hour's close: {tick_cpu:.2f} s CPU")
    print(f"  ({tick_wall:.2f} s wall). A day's close measured on {closed_paths} paths x 1,440 pings: {day_cpu:.2f} s")
    print(f"  CPU, scaled x{len(every_path) / closed_paths:.0f} and spread over the day's 1,440 minutes.")
    print("Server time through the Django test client (URL to JSON), path A -> B, both directions returned;")
    print(f"  {REQUESTS} requests per range, interleaved; grid and paths list {GRID_REQUESTS} requests each.")
    print()
    print(f"| {'measure':<52} | {'p50':>9} | {'p95':>9} | {'target':<34} | meets |")
    print(f"|{'-' * 54}|{'-' * 11}|{'-' * 11}|{'-' * 36}|-------|")
    for name, median, worst, target, ok in rows:
        verdict = "-" if ok is None else "yes" if ok else "NO"
        print(f"| {name:<52} | {median * 1000:>6.1f} ms | {worst * 1000:>6.1f} ms | {target:<34} | {verdict:<5} |")
    per_minute = refresh_minute_cpu + day_close_minute_cpu
    name = "rollup refresh, CPU per minute of 9,900-path data"
    cell = f"{per_minute:.3f} s = {refresh_percent:.2f}% of a core"
    print(f"| {name:<52} | {cell:>23} | {'< 5% of one core':<34} | {'yes' if refresh_percent < 5 else 'NO':<5} |")


if __name__ == "__main__":
    main()
