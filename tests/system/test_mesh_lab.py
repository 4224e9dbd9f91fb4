"""Every probe on a real long fat network, scheduled by the server: the lab's grnet-ecmp
scenario (seed 000: ECMP between two data centres, one member slower) with an agent in each
of its three sites, a full mesh on short schedules for about four minutes. Needs root (the
lab's namespaces); CI runs as root.

What must hold: every test type landed on every path in both directions; no agent ever took
part in two throughput runs at once; flow sweeps see both ECMP RTTs on the multipath link
and traces both of its routers; the host facts the agents report are the lab's sysctls;
pings and sweeps are moved out of the exclusive tests on their paths.

The receive buffers are scaled to a quarter of seed 000's 6 MiB default (window ceilings
0.8 and 0.5 Gbit/s instead of 3.2 and 2.1): the user-space emulator, on two cores shared
with three agents, the server and its worker, does not reliably carry 3 Gbit/s, and a
window-limit test must not measure the emulator instead. RTTs and the limit are the seed's.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lab.attempts import EMULATOR_LATE_SHARE
from lab.lab import SCENARIOS, Lab

from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import judged_wait, lab_with_agents, path_report

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

RUN_S = 300
MIN_RUN_S = 180
TEST_TYPES = ("ping", "throughput", "flowsweep", "trace", "latency")
# Seed 000's receive buffer (tcp_rmem max 6 MiB) scaled by this; see the module docstring.
BUFFER_SCALE = 0.25
# Short schedules: three agents in a full mesh are six directed paths; each throughput run
# holds its two agents for 2 s + 1 s omitted + the planner's 8 s margin.
LAB_MESH = {
    "name": "grnet",
    "kind": "mesh",
    "members": [{"agent": "dca"}, {"agent": "dcb"}, {"agent": "dcc"}],
    "tests": [
        {"name": "tput", "test_type": "throughput", "interval_s": 90, "slip_s": 90,
         "spec": {"duration_s": 2, "omit_s": 1, "congestion": "cubic"}},
        {"name": "ping", "test_type": "ping", "interval_s": 20, "spec": {"count": 5, "interval_s": 0.2}},
        {"name": "sweep", "test_type": "flowsweep", "interval_s": 40,
         "spec": {"flows": 16, "samples_per_flow": 10, "interval_ms": 5}},
        {"name": "trace", "test_type": "trace", "interval_s": 60, "spec": {"flows": 16, "max_hops": 6}},
        {"name": "owd", "test_type": "latency", "interval_s": 30, "spec": {"report_interval_s": 30}},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def lab_mesh(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Lab, dict[str, str]]]:
    """The lab up with a server address on its management bridge, three enrolled agents in
    its namespaces, and the default mesh paused so only the lab mesh runs."""
    tmp = tmp_path_factory.mktemp("mesh-lab")
    with lab_with_agents(stack, tmp, scaled_grnet_ecmp(tmp / "grnet-ecmp-scaled.yaml"), LAB_MESH) as (lab, ids):
        yield stack, lab, ids


# A path's flow sweeps that no throughput run of either host overlapped.
UNDISTURBED_SWEEPS = """
SELECT m.verdict, m.mode_count FROM analysis_sweepmodes m
JOIN measurements_run s ON s.id = m.run_id AND s.started_at = m.started_at
WHERE m.source_id = %s AND m.destination_id = %s AND NOT EXISTS (
    SELECT 1 FROM measurements_run t WHERE t.test_type = 'throughput'
    AND (t.source_id = ANY(%s::uuid[]) OR t.destination_id = ANY(%s::uuid[]))
    AND t.started_at < s.ended_at AND t.ended_at > s.started_at)
"""


def scaled_grnet_ecmp(path: Path) -> Path:
    """grnet-ecmp with every host's tcp_rmem maximum scaled by BUFFER_SCALE (send buffers as
    they are, so the receive window stays the smaller term, as in the seed)."""
    spec = yaml.safe_load((SCENARIOS / "grnet-ecmp.yaml").read_text())
    for host in spec["hosts"]:
        low, default, high = host["sysctls"]["net.ipv4.tcp_rmem"].split()
        host["sysctls"]["net.ipv4.tcp_rmem"] = f"{low} {default} {int(int(high) * BUFFER_SCALE)}"
    spec["name"] = "grnet-ecmp-scaled"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def ok_runs(stack: Stack, ids: dict[str, str]) -> set[tuple[str, str, str]]:
    names = {agent_id: name for name, agent_id in ids.items()}
    rows = stack.query(
        "SELECT DISTINCT source_id::text, destination_id::text, test_type FROM measurements_run WHERE status = 'ok'"
    )
    return {(names[src], names[dst], kind) for src, dst, kind in rows if src in names and dst in names}


@pytest.fixture(scope="module")
def measured(lab_mesh: tuple[Stack, Lab, dict[str, str]]) -> tuple[Stack, Lab, dict[str, str]]:
    """Waits (at most RUN_S and a margin) until every test type has landed on every path."""
    stack, _lab, ids = lab_mesh
    wanted = {(a, b, kind) for a in ids for b in ids if a != b for kind in TEST_TYPES}

    def all_landed() -> bool:
        stack.assert_running()
        return wanted <= ok_runs(stack, ids)

    started = time.monotonic()
    wait_for("every test type on every path", all_landed, RUN_S + 120, interval_s=5)
    # Then keep measuring, so every path sees several throughput slots and flow sweeps.
    time.sleep(max(0.0, MIN_RUN_S - (time.monotonic() - started)))
    stack.assert_running()
    return lab_mesh


def test_every_test_type_lands_on_every_path_in_both_directions(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, _, ids = measured
    counts = stack.query(
        "SELECT test_type, status, count(*) FROM measurements_run WHERE source_id = ANY(%s::uuid[]) GROUP BY 1, 2",
        list(ids.values()),
    )
    (ARTIFACTS / "mesh-lab-runs.txt").write_text("\n".join(f"{t:<10} {s:<7} {n}" for t, s, n in sorted(counts)))
    missing = {(a, b, kind) for a in ids for b in ids if a != b for kind in TEST_TYPES} - ok_runs(stack, ids)
    assert not missing


def test_no_agent_is_ever_in_two_throughput_runs_at_once(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, _, ids = measured
    rows = stack.query(
        "SELECT source_id::text, destination_id::text, started_at, ended_at FROM measurements_run"
        " WHERE test_type = 'throughput' AND status <> 'missed' AND source_id = ANY(%s::uuid[])",
        list(ids.values()),
    )
    assert len(rows) >= 6
    by_agent: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for source, destination, start, end in rows:
        by_agent[source].append((start, end))
        by_agent[destination].append((start, end))
    overlaps = 0
    for runs in by_agent.values():
        runs.sort()
        overlaps += sum(1 for (_, end), (start, _) in itertools.pairwise(runs) if start < end)
    assert overlaps == 0
    slots = stack.query("SELECT state, count(*) FROM meshes_slot GROUP BY 1")
    assert dict(slots).get("ok", 0) >= 6, slots


def test_flow_sweeps_see_both_ecmp_rtts_on_the_multipath_link(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, lab, ids = measured
    rows = stack.query(
        "SELECT run_id, src_port, min(rtt_ms) FROM measurements_flowsample"
        " WHERE source_id = %s AND destination_id = %s AND rtt_ms IS NOT NULL GROUP BY 1, 2",
        ids["dca"],
        ids["dcb"],
    )
    per_flow = [rtt for _, _, rtt in rows]
    fast = [rtt for rtt in per_flow if abs(rtt - 7.8) < 1.0]
    slow = [rtt for rtt in per_flow if abs(rtt - 11.9) < 1.0]
    assert fast and slow, sorted(per_flow)
    assert abs(statistics.median(fast) - 7.8) < 0.6 and abs(statistics.median(slow) - 11.9) < 0.6
    # A pair joined by single paths both ways has one mode only: within a sweep, every flow
    # sees the same RTT. (Across sweeps the RTT moves with the load: a throughput slot on
    # the same path queues packets; dcb -> dca is no control either, its echo replies come
    # back over the ECMP direction.)
    spreads = stack.query(
        "SELECT max(rtt_ms) - min(rtt_ms) FROM (SELECT run_id, src_port, min(rtt_ms) AS rtt_ms"
        " FROM measurements_flowsample WHERE source_id = %s AND destination_id = %s AND rtt_ms IS NOT NULL"
        " GROUP BY run_id, src_port) AS flows GROUP BY run_id",
        ids["dca"],
        ids["dcc"],
    )
    assert spreads, "no flow sweep from dca to dcc"
    spread = statistics.median(spread for (spread,) in spreads)
    if spread >= 1.0:
        # A flow's minimum is a late departure's when the emulator fell behind: a CI run's sweeps
        # spread 1.6 and 2.1 ms on this single path while other lanes loaded both cores.
        late = lab.lateness(["ac"])
        evidence = f"per-sweep spreads (ms) {spreads}; {late.describe()}"
        if late.share_later_than(1000) >= EMULATOR_LATE_SHARE:
            pytest.skip(f"single-path spread not judged: the emulator, not the path, was late; {evidence}")
        raise AssertionError(evidence)
    ecmp_spreads = stack.query(
        "SELECT max(rtt_ms) - min(rtt_ms) FROM (SELECT run_id, src_port, min(rtt_ms) AS rtt_ms"
        " FROM measurements_flowsample WHERE source_id = %s AND destination_id = %s AND rtt_ms IS NOT NULL"
        " GROUP BY run_id, src_port) AS flows GROUP BY run_id",
        ids["dca"],
        ids["dcb"],
    )
    assert statistics.median(spread for (spread,) in ecmp_spreads) > 3.0, ecmp_spreads


def test_traces_show_both_ecmp_members(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, _lab, ids = measured
    rows = stack.query(
        "SELECT hops, reached, fingerprint FROM measurements_tracepath WHERE source_id = %s AND destination_id = %s",
        ids["dca"],
        ids["dcb"],
    )
    first_hops = {hops[0]["probes"][0]["address"] for hops, _, _ in rows if hops and hops[0]["probes"]}
    assert {"198.18.128.1", "198.18.128.2"} <= first_hops, first_hops
    assert len({fingerprint for _, _, fingerprint in rows}) >= 2
    assert any(reached for _, reached, _ in rows)
    # traceroute --mtu: the path MTU is the links' 9000 bytes, noted where it was first seen.
    path_mtus = {min(hop["mtu"] for hop in hops if hop.get("mtu")) for hops, reached, _ in rows if reached}
    assert path_mtus == {9000}, path_mtus
    # dcb -> dca is one route. A router's ICMP rate limit may leave a hop of some flows
    # unanswered (a CI run stored two fingerprints for it); the Routes view reads those flows
    # as the route they fit, so it shows one route.
    reply = stack.session().get(
        f"{stack.url}/api/v1/paths/routes/", params={"source": ids["dcb"], "destination": ids["dca"]}, timeout=30
    )
    assert reply.status_code == 200, reply.text
    reached = [route for route in reply.json()["routes"] if route["reached"]]
    assert len(reached) == 1, [(route["fingerprint"], route["hops"]) for route in reached]


def test_host_facts_are_the_labs_sysctls(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, lab, ids = measured
    for name, agent_id in ids.items():
        ((facts,),) = stack.query("SELECT host_facts FROM inventory_agent WHERE id = %s", agent_id)
        assert facts["sysctls"]["net.ipv4.tcp_rmem"] == lab.host_sysctl(name, "net.ipv4.tcp_rmem")
        assert facts["sysctls"]["net.ipv4.tcp_wmem"] == lab.host_sysctl(name, "net.ipv4.tcp_wmem")
        history = stack.query("SELECT count(*) FROM inventory_hostfactssnapshot WHERE agent_id = %s", agent_id)
        assert history[0][0] >= 1


def test_analysis_finds_the_receive_window_limit_and_both_rtt_modes(
    measured: tuple[Stack, Lab, dict[str, str]],
) -> None:
    """Seed 000 on the lab: default buffers limit each flow to its window ceiling, and the two
    ECMP members give two RTT modes, each with its own ceiling."""
    stack, lab, ids = measured

    def analysed() -> bool:
        (count,) = stack.query(
            "SELECT count(DISTINCT (source_id, destination_id)) FROM analysis_runanalysis"
            " WHERE source_id = ANY(%s::uuid[]) AND destination_id = ANY(%s::uuid[])",
            list(ids.values()),
            list(ids.values()),
        )[0]
        return int(count) == 6

    runs_sql = (
        "SELECT diagnosis, rate_bps, ceiling_bps, ceilings->'at_min_rtt'->>'rtt_ms',"
        " (ceilings->'under_load'->'terms'->'receive_window'->>'rate_bps')::float FROM analysis_runanalysis"
        " WHERE source_id = %s AND destination_id = %s ORDER BY started_at"
    )

    def within_ceiling(rate: float, ceiling: float | None, load: float | None) -> bool:
        """Within 10% of the window ceiling at the flow's unloaded RTT, or at its RTT under
        load (tcp-ceilings.md's "ceiling under load")."""
        return any(bound and 0.9 <= rate / bound <= 1.1 for bound in (ceiling, load))

    def window_limited_within_ceiling(rows: list[tuple[Any, ...]]) -> bool:
        return any(label == "receive_window" and within_ceiling(r, c, u) for label, r, c, _, u in rows)

    # The worker analyses a run once it has settled (30 s after its end here, then within a minute).
    wait_for("an analysed throughput run on each of the six paths", analysed, 300, interval_s=5)
    # A run now and then meets an emulator the other processes (or the hypervisor) starve,
    # and is then rightly called capacity limited: wait for one it carried. A wait that ends
    # while the emulator left packets late is not judged (a CI run's dca -> dcb runs, every
    # 90 s, all fell short while the quick lane held both cores); on time, it fails.
    late_before = lab.lateness()
    judged_wait(
        "a receive-window-limited dca -> dcb run at its ceiling",
        lambda: window_limited_within_ceiling(stack.query(runs_sql, ids["dca"], ids["dcb"])),
        300,
        lambda: lab.lateness() - late_before,
        lambda: stack.query(runs_sql, ids["dca"], ids["dcb"]),
    )
    stack.manage("analyze", "--hours", "1")
    rows = stack.query(runs_sql, ids["dca"], ids["dcb"])
    lines = [
        f"{d:<16} {r / 1e9:6.2f} Gbit/s of {c / 1e9 if c else 0:6.2f} at {rtt} ms, {(u or 0) / 1e9:6.2f} under load"
        for d, r, c, rtt, u in rows
    ]
    (ARTIFACTS / "analysis-grnet.txt").write_text("\n".join(lines))
    assert window_limited_within_ceiling(rows), lines
    # No run blames a cause the scenario does not have (no loss, no policer, big send buffers).
    assert {label for label, *_ in rows} <= {"receive_window", "capacity"}, lines
    # Sweeps a throughput run of either host overlapped see its queue, not the members: the
    # analysis passes over them (analysis/services/sweep_modes.py), and so does this count.
    both = [ids["dca"], ids["dcb"]]

    def undisturbed() -> list[tuple[Any, ...]]:
        return stack.query(UNDISTURBED_SWEEPS, ids["dca"], ids["dcb"], both, both)

    def two_mode(sweeps: list[tuple[Any, ...]]) -> int:
        return sum(1 for verdict, count in sweeps if verdict == "ecmp" and count == 2)

    # A sweep runs every 40 s, and every throughput slot of the mesh involves dca or dcb, so how
    # many sweeps are undisturbed by now is chance (1 of 4 in a CI run of 2026-11-28): wait for two.
    with contextlib.suppress(AssertionError):  # the assert below says what was seen
        wait_for(
            "two undisturbed dca -> dcb sweeps that saw both members",
            lambda: two_mode(undisturbed()) >= 2,
            600,
            5,
        )
    sweeps = undisturbed()
    everything = stack.query(
        "SELECT verdict, mode_count FROM analysis_sweepmodes WHERE source_id = %s AND destination_id = %s",
        ids["dca"],
        ids["dcb"],
    )
    # Sweeps that saw both members, and none that saw anything else. How many see only one
    # depends on the machine (3 of 6 in two CI runs of 2026-11-27 under load, none on a quiet
    # one); the path's verdict below holds through them, as the analysis is built to.
    assert two_mode(sweeps) >= 2, f"undisturbed {sweeps}; all {everything}"
    # A sweep that a stalled machine swamped (most flows' minima seen once) has no verdict
    # rather than a wrong one (analysis/modes.py CONFIRMED_SHARE_MIN); none sees anything else.
    decided = {("ecmp", 2), ("single", 1), ("insufficient", 0)}
    assert all((verdict, count) in decided for verdict, count in everything), everything
    single = [verdict for (verdict,) in stack.query(
        "SELECT verdict FROM analysis_sweepmodes WHERE source_id = %s AND destination_id = %s", ids["dca"], ids["dcc"]
    )]  # fmt: skip
    assert "single" in single and set(single) <= {"single", "insufficient"}, single
    modes = path_report(stack, ids, "dca", "dcb")["modes"]["modes"]
    assert [round(mode["rtt_ms"]) for mode in modes] in ([8, 12], [8, 13]), modes
    # Each mode's ceiling is the same window over that mode's RTT (seed 000: 3.1 vs 2.1 Gbit/s
    # with 6 MiB): a window of half to 0.8 of the receive buffer (the kernel's fraction, or
    # the one the flows were seen to reach), so the fast mode's is 1.5 times the slow one's.
    rmem = lab.host_sysctl("dcb", "net.ipv4.tcp_rmem")
    assert rmem is not None
    buffer_bytes = int(rmem.split()[2])
    windows = [mode["ceiling"]["terms"]["receive_window"]["rate_bps"] * mode["rtt_ms"] / 8000 for mode in modes]
    with (ARTIFACTS / "analysis-grnet.txt").open("a") as out:
        for mode, window in zip(modes, windows, strict=True):
            out.write(f"\nmode {mode['rtt_ms']:.2f} ms: window {window / 2**20:.2f} MiB")
    assert all(0.5 * buffer_bytes <= window <= 0.8 * buffer_bytes for window in windows), windows
    assert abs(windows[0] - windows[1]) <= 0.01 * windows[0], windows
    assert {entry["trace_path"][0] for entry in modes if entry["trace_path"]} <= {"198.18.128.1", "198.18.128.2"}
    grid = stack.session().get(f"{stack.url}/api/v1/analysis/meshes/grnet/grid/", timeout=30)
    grid.raise_for_status()
    cells = grid.json()["cells"]
    assert len(cells) == 6 and all(cell["rate_bps"] for cell in cells), cells


@pytest.mark.browser
def test_the_analysis_pages_show_the_limit_modes_and_grid(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    """In Chromium: dca -> dcb's analysis names its newest run's limit and ECMP member and lists the RTT
    modes the API has; the grid of the lab mesh has a cell per path."""
    stack, _, ids = measured
    stack.manage("analyze", "--hours", "1")
    # The mesh keeps measuring: the page may show a run newer than the newest one now, never an older one.
    ((newest_before,),) = stack.query(
        "SELECT max(started_at) FROM analysis_runanalysis WHERE source_id = %s AND destination_id = %s",
        ids["dca"],
        ids["dcb"],
    )
    modes_before = len(path_report(stack, ids, "dca", "dcb")["modes"]["modes"])

    def grid() -> dict[str, Any]:
        body: dict[str, Any] = stack.session().get(f"{stack.url}/api/v1/analysis/meshes/grnet/grid/", timeout=30).json()
        return body

    def ecmp_cells(body: dict[str, Any]) -> int:
        return sum(cell["rtt_mode_verdict"] == "ecmp" for cell in body["cells"])

    def every_rtt_median_and_ecmp() -> bool:
        body = grid()
        medians = sum(cell["rtt_median_ms"] is not None for cell in body["cells"])
        return medians == len(ids) * (len(ids) - 1) and ecmp_cells(body) >= 1

    # The grid's RTT medians are of settled minutes, and dca -> dcb's verdict is its newest
    # sweeps' (a sweep whose 16 flows all hashed onto one member reads single): the page can
    # show only what the API has.
    wait_for("an RTT median of every path and an ECMP verdict in the grid", every_rtt_median_and_ecmp, 180, 5)
    seen = stack.browser_check(
        "analysis-page",
        FATHOM_SOURCE_ID=ids["dca"],
        FATHOM_DESTINATION_ID=ids["dcb"],
        FATHOM_MESH="grnet",
    )
    modes_after = len(path_report(stack, ids, "dca", "dcb")["modes"]["modes"])
    ecmp_after = ecmp_cells(grid())
    shown = re.search(r"newest run (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", seen["limitText"])
    assert shown is not None, seen
    ((started_at, diagnosis, member),) = stack.query(
        "SELECT started_at, diagnosis, ceilings->'member'->>'index' FROM analysis_runanalysis"
        " WHERE source_id = %s AND destination_id = %s"
        " AND date_trunc('second', started_at AT TIME ZONE 'UTC') = %s::timestamp",
        ids["dca"],
        ids["dcb"],
        shown.group(1),
    )
    assert started_at >= newest_before, (started_at, newest_before)
    choices = stack.session().get(f"{stack.url}/api/v1/choices/", timeout=30).json()
    label = next(choice["label"] for choice in choices["diagnosis"] if choice["value"] == diagnosis)
    assert label in seen["limitText"], seen
    # A run on either member is explained against that member's ceiling, never as a drop.
    if member is None:
        assert seen["memberNote"] == "", seen
    else:
        assert f"on ECMP member {member} (" in seen["memberNote"], seen
        assert "of that member's ceiling" in seen["memberNote"], seen
    assert seen["modeRows"] in {modes_before, modes_after}, (seen, modes_before, modes_after)
    assert seen["cellCount"] == 6 and (seen["ecmpMarkers"] >= 1 or ecmp_after == 0), (seen, ecmp_after)
    # RTT medians in both directions of every cell; strict thresholds turn them all bad, the defaults none.
    assert seen["rttCells"] == 12 and seen["badBefore"] == 0, seen
    assert seen["badStrict"] == 12 and seen["badAfterReset"] == 0, seen


def test_the_schedule_page_draws_each_agents_slots_on_a_timeline(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    """In Chromium: the Schedule page's timeline has a row for each lab agent, with the slots
    the planner made for the mesh's throughput test, and redraws for another window."""
    stack, _, _ = measured
    seen = stack.browser_check("schedule-page", FATHOM_AGENTS="dca,dcb,dcc")
    # Six directed paths, each slot drawn on its sender's and its receiver's row.
    assert seen["bars"] >= 12 and seen["barsDay"] >= seen["bars"], seen
    assert {"dca", "dcb", "dcc"} <= set(seen["rows"]), seen


def test_the_routes_view_lists_both_ecmp_members_and_diffs_them(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    """In Chromium: dca -> dcb's Routes panel names both ECMP members of the newest trace and
    its side-by-side diff shows the hop where they part ways."""
    stack, _, ids = measured
    seen = stack.browser_check("routes-view", FATHOM_SOURCE_ID=ids["dca"], FATHOM_DESTINATION_ID=ids["dcb"])
    assert "2 routes" in seen["summaryText"] or len(seen["options"]) >= 2, seen
    assert "Path MTU: 9000 bytes" in seen["summaryText"], seen
    assert "differ at" in seen["diffSummary"] and seen["differing"] >= 1, seen


def union_s(spans: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end) that the spans cover."""
    covered, reached = 0.0, start
    for span_start, span_end in sorted(spans):
        span_start, span_end = max(span_start, reached), min(span_end, end)
        if span_end > span_start:
            covered += span_end - span_start
            reached = span_end
    return covered


# What the agent takes each run to last (probe Lasts) and LoadGuard, for LAB_MESH's specs.
LASTS_S = {"ping": 4 * 0.2 + 3.0, "flowsweep": 16 * 10 * 0.005 + 1.0}
INTERVAL_S = {"ping": 20, "flowsweep": 40}
GUARD_S = 1.0
# A slot planned this long before a run was in the agent's plan (it polls every 5 s here).
KNOWN_BEFORE_S = 10.0


def clear_start(spans: list[tuple[float, float]], at: float, lasts: float) -> float:
    """agents/internal/schedule.ClearStart: the first start from `at` whose run overlaps none."""
    start, moved = at, True
    while moved:
        moved = False
        for span_start, span_end in spans:
            if start < span_end + GUARD_S and start + lasts > span_start - GUARD_S:
                start, moved = span_end + GUARD_S, True
    return start


def test_pings_and_sweeps_are_moved_out_of_their_paths_exclusive_tests(
    measured: tuple[Stack, Lab, dict[str, str]],
) -> None:
    """A run that would overlap an exclusive slot of either agent of its path waits until
    just after it, unless that would carry it past its next run (no room) or the slot was
    planned too late for the agent's plan to name it. Started at random, about half the
    runs here would overlap one (57 % of pings, 50 % of sweeps on agents before the plan
    listed loaded windows, 2026-12-04); none may overlap one it had room and time to avoid."""
    stack, _, ids = measured
    slots = stack.query(
        "SELECT extract(epoch FROM start_at), extract(epoch FROM end_at), extract(epoch FROM planned_at),"
        " source_id::text, destination_id::text FROM meshes_slot"
        " WHERE test_type = 'throughput' AND state <> 'unschedulable'"
    )
    runs = stack.query(
        "SELECT test_type, extract(epoch FROM started_at), extract(epoch FROM ended_at), source_id::text,"
        " destination_id::text FROM measurements_run WHERE test_type IN ('ping', 'flowsweep') AND status = 'ok'"
        " AND source_id = ANY(%s::uuid[])",
        list(ids.values()),
    )
    lines, avoidable = [], []
    for kind in ("ping", "flowsweep"):
        mine = [(float(a), float(b), src, dst) for k, a, b, src, dst in runs if k == kind]
        first, last = min(a for a, *_ in mine), max(b for _, b, *_ in mine)
        exposed, reasons = 0.0, Counter[str]()
        for start, end, src, dst in mine:
            path = [(float(a), float(b), float(p)) for a, b, p, s1, s2 in slots if {s1, s2} & {src, dst}]
            # The start times at which a run this long would overlap one of the slots.
            exposed += union_s([(a - (end - start), b) for a, b, _ in path], first, last) / (last - first)
            hit = [(a, b, p) for a, b, p in path if a < end and b > start]
            if not hit:
                continue
            known = [(a, b) for a, b, p in path if p <= start - KNOWN_BEFORE_S]
            if not any(p <= start - KNOWN_BEFORE_S for _, _, p in hit):
                reasons["planned too late to be in the plan"] += 1
            elif clear_start(known, start, LASTS_S[kind]) + LASTS_S[kind] > start + INTERVAL_S[kind]:
                reasons["no room before the next run"] += 1
            else:
                reasons["avoidable"] += 1
                avoidable.append(f"{kind} {src[:8]}->{dst[:8]} at {start:.1f}-{end:.1f}: {hit}")
        overlapped = sum(reasons.values())
        lines.append(
            f"{kind:<10} {overlapped} of {len(mine)} runs overlapped an exclusive slot of either agent"
            f" ({dict(reasons)}); started at random, {exposed / len(mine):.0%} would have"
        )
    (ARTIFACTS / "mesh-lab-own-load.txt").write_text("\n".join(lines + avoidable) + "\n")
    assert not avoidable, "\n".join(lines + avoidable)


# agents/internal/schedule.MinSegment: an edge closer than this to a run's start is not cut at.
MIN_SEGMENT_S = 5.0


def test_latency_sessions_are_cut_at_their_paths_exclusive_tests(
    measured: tuple[Stack, Lab, dict[str, str]],
) -> None:
    """A latency session runs back to back and cannot wait for a slot to pass: the agent ends
    its intervals at the edges of the exclusive slots of either agent (a second outside), so
    only the piece inside a slot is left out as own load and the rest is kept. Before the
    agent cut them, a 60 s interval overlapping any slot was left out whole: 40 of 43 on the
    demo (2026-12-04), and the grid showed no one-way loss at all."""
    stack, _, ids = measured
    slots = stack.query(
        "SELECT extract(epoch FROM start_at), extract(epoch FROM end_at), extract(epoch FROM planned_at),"
        " source_id::text, destination_id::text FROM meshes_slot"
        " WHERE test_type = 'throughput' AND state <> 'unschedulable'"
    )
    intervals = stack.query(
        "SELECT source_id::text, destination_id::text, extract(epoch FROM time), extract(epoch FROM ended_at),"
        " own_load FROM measurements_latencyinterval WHERE source_id = ANY(%s::uuid[])",
        list(ids.values()),
    )
    names = {agent_id: name for name, agent_id in ids.items()}
    kept: Counter[str] = Counter()
    seconds = {True: 0.0, False: 0.0}
    uncut = []
    for src, dst, start, end, own_load in intervals:
        start, end = float(start), float(end)
        seconds[bool(own_load)] += end - start
        if not own_load:
            kept[f"{names[src]}->{names[dst]}"] += 1
        path = [(float(a), float(b), float(p)) for a, b, p, s1, s2 in slots if {s1, s2} & {src, dst}]
        if not any(a < end and b > start and planned <= start - KNOWN_BEFORE_S for a, b, planned in path):
            continue  # in no slot it could have known of: nothing to cut at
        # An interval cut at a slot ends (or starts) within the slot's guard of it.
        outside = (end - start) - union_s([(a - GUARD_S, b + GUARD_S) for a, b, _ in path], start, end)
        if outside > MIN_SEGMENT_S + 1.0:
            uncut.append(f"{names[src]}->{names[dst]} {start:.1f}-{end:.1f}: {outside:.1f} s outside the slots")
    summary = (
        f"{len(intervals)} latency intervals, {sum(kept.values())} kept ({dict(sorted(kept.items()))});"
        f" {seconds[False]:.0f} s kept, {seconds[True]:.0f} s left out as Fathom's own load"
    )
    (ARTIFACTS / "mesh-lab-latency-cuts.txt").write_text("\n".join([summary, *uncut]) + "\n")
    paths = {f"{a}->{b}" for a in ids for b in ids if a != b}
    assert set(kept) == paths, summary
    assert not uncut, "\n".join([summary, *uncut])
