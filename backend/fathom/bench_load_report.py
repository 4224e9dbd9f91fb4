"""The table `make bench-load` prints: each figure beside its target."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import redis
import requests
from django.conf import settings

from fathom.bench_load_model import (
    AGENTS,
    ANALYSIS_PASS,
    ANALYSIS_TARGET,
    DURATION_S,
    P99_TARGET_S,
    REDIS_BENCH_DB,
    SCHEDULER_INTERVAL_S,
    SCHEDULER_TARGET,
    SCRAPE_BYTES_TARGET,
    SCRAPE_TARGET_S,
    WORKER_LOG,
)
from fathom.bench_load_sim import Load
from metrics.services import queue_lengths


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def queued_tasks() -> int:
    broker = urlsplit(os.environ["FATHOM_REDIS_URL"])
    client = redis.Redis.from_url(urlunsplit(broker._replace(path=f"/{REDIS_BENCH_DB}")))
    return sum(queue_lengths(client).values())


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


@dataclass(frozen=True)
class Scrapes:
    """/metrics as Prometheus would fetch it from the loaded stack (bench_load_stack lets
    127.0.0.1 scrape without a token)."""

    seconds: list[float]
    body_bytes: int
    series: int

    @classmethod
    def fetch(cls, base: str, times: int = 3) -> Scrapes:
        seconds, body = [], ""
        for _ in range(times):
            started = time.perf_counter()
            reply = requests.get(f"{base}/metrics", timeout=60)
            reply.raise_for_status()
            seconds.append(time.perf_counter() - started)
            body = reply.text
        series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
        return cls(seconds, len(body.encode()), series)


def report(
    load: Load,
    scheduler_s: float,
    analysis: AnalysisPasses,
    stored: dict[str, int],
    pending: dict[str, int],
    tasks: int,
    scrapes: Scrapes,
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
    scrape_s = percentile(scrapes.seconds, 0.5)
    lines.append(
        (f"/metrics scrape, p50 of {len(scrapes.seconds)} after the load", f"{scrape_s:.2f} s",
         f"< {SCRAPE_TARGET_S:.0f} s", scrape_s < SCRAPE_TARGET_S)
    )  # fmt: skip
    lines.append(("/metrics series", f"{scrapes.series:,}", "", None))
    lines.append(
        ("/metrics body", f"{scrapes.body_bytes / 1e6:.1f} MB", f"< {SCRAPE_BYTES_TARGET / 1e6:.0f} MB",
         scrapes.body_bytes < SCRAPE_BYTES_TARGET)
    )  # fmt: skip
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
