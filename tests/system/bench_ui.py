"""`make bench-ui` (issue 32): what the UI costs a browser with a cold cache, each figure beside
its target, in one table: the bytes transferred to show a path page, and the time from the
navigation's start to the history chart's first drawn data.

The system tests' stack (gunicorn serving the built UI through whitenoise, compressed and
collected as in production) with its two real agents on loopback: they ping each other and
run one 10 s iperf3 test, so the path page draws pings and a throughput run. Chromium
(tests/browser/bench-ui.spec.ts) then loads the path page FATHOM_BENCH_UI_LOADS times (5),
each in a new context with an empty cache and the session cookie. Bytes are Chromium's
encodedDataLength (on the wire: headers and compressed bodies); times are the page's own
performance.now() when the chart first shows data. The table gives the median and the worst
load; the targets apply to the median. Figures are of this machine (2 cores, shared with
the stack's web server, worker and agents).

    make bench-ui
    FATHOM_BENCH_UI_LOADS=20 make bench-ui
    FATHOM_BENCH_UI_PROFILE=/tmp/ui.cpuprofile make bench-ui   # the first load's CPU profile (DevTools)
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from .bench_agent import Line, table, throughput_mesh
from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import apply_meshes

BYTES_TARGET = 1_000_000
FIRST_CHART_TARGET_MS = 1500
KIB = 1024


def kib(value: float) -> str:
    return f"{value / KIB:,.0f} KiB"


def test_a_path_page_from_a_cold_cache(stack: Stack, tmp_path: Path) -> None:
    a, b = stack.agents
    ran = "SELECT count(*) FROM measurements_run WHERE test_type = %s AND source_id = %s AND status = 'ok'"
    wait_for("sys-a's first ping results", lambda: stack.query(ran, "ping", a.agent_id)[0][0] >= 2, 120)
    mesh = throughput_mesh(a, b)
    mesh["tests"][0]["spec"]["duration_s"] = 10
    apply_meshes(stack, tmp_path, [mesh])
    try:
        wait_for("a throughput run sys-a -> sys-b", lambda: stack.query(ran, "throughput", a.agent_id)[0][0] >= 1, 240)
    finally:
        apply_meshes(stack, tmp_path, [{"name": mesh["name"], "enabled": False}])
    time.sleep(5)  # the analysis of the run, which the page shows beside the chart
    seen = stack.browser_check("bench-ui", FATHOM_PATH_URL=f"/paths/{a.agent_id}/{b.agent_id}")
    loads: list[dict[str, Any]] = seen["loads"]
    assert loads, "the browser made no load"

    def p50(key: str) -> float:
        return statistics.median(float(load[key]) for load in loads)

    def worst(key: str) -> float:
        return max(float(load[key]) for load in loads)

    kinds = sorted({kind for load in loads for kind in load["bytesByKind"]})
    lines: list[Line] = [
        ("transferred, cold cache (median)", kib(p50("bytes")), f"< {kib(BYTES_TARGET)}", p50("bytes") < BYTES_TARGET),
        ("transferred, cold cache (worst)", kib(worst("bytes")), "", None),
        *[
            (f"  of which {kind}", kib(statistics.median(load["bytesByKind"].get(kind, 0) for load in loads)), "", None)
            for kind in kinds
        ],
        ("requests (median)", f"{p50('requests'):.0f}", "", None),
        ("first chart drawn (median)", f"{p50('firstChartMs'):,.0f} ms", f"< {FIRST_CHART_TARGET_MS:,} ms",
         p50("firstChartMs") < FIRST_CHART_TARGET_MS),
        ("first chart drawn (worst)", f"{worst('firstChartMs'):,.0f} ms", "", None),
        ("  DOMContentLoaded (median)", f"{p50('domContentLoadedMs'):,.0f} ms", "", None),
        ("  Plotly's script arrived (median)", f"{p50('plotlyMs'):,.0f} ms", "", None),
        ("  the path's history arrived (median)", f"{p50('historyMs'):,.0f} ms", "", None),
    ]  # fmt: skip
    uncompressed = sorted({item for load in loads for item in load["uncompressed"]})
    lines.append(("assets over 1 KB sent uncompressed", str(len(uncompressed)), "0", not uncompressed))
    text = (
        f"bench-ui: the path page {a.name} -> {b.name}, {len(loads)} cold loads in Debian's Chromium,"
        f" {os.cpu_count()} cores\n\n{table(lines)}" + "".join(f"\n  uncompressed: {item}" for item in uncompressed)
    )
    typical = sorted(loads, key=lambda load: float(load["firstChartMs"]))[len(loads) // 2]
    chart_ms = float(typical["firstChartMs"])
    text += f"\n\nThe median load's requests (ms after the navigation started; chart at {chart_ms:,.0f} ms):"
    requests = sorted(typical["waterfall"], key=lambda row: row[1])
    text += "".join(f"\n  {start:7,.0f} {end:7,.0f}  {name}" for name, start, end in requests)
    (ARTIFACTS / "bench-ui.txt").write_text(text + "\n")
    print("\n" + text)
