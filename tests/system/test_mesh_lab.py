"""Every probe on a real long fat network, scheduled by the server: the lab's grnet-ecmp
scenario (seed 000: ECMP between two data centres, one member slower) with an agent in each
of its three sites, a full mesh on short schedules for about five minutes. Needs root (the
lab's namespaces); CI runs as root.

What must hold: every test type landed on every path in both directions; no agent ever took
part in two throughput runs at once; flow sweeps see both ECMP RTTs on the multipath link
and traces both of its routers; the host facts the agents report are the lab's sysctls.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab.lab import LAB_BIN, MANAGEMENT_ADDRESS, Lab, lab_up

from .conftest import AGENT_BIN, ARTIFACTS, VENV_BIN, Stack, free_port, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

RUN_S = 300
MIN_RUN_S = 240
TEST_TYPES = ("ping", "throughput", "flowsweep", "trace")
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
    ],
}  # fmt: skip


def apply_meshes(stack: Stack, tmp: Path, meshes: list[dict[str, Any]]) -> None:
    path = tmp / "meshes.json"
    path.write_text(json.dumps(meshes))
    stack.manage("apply_mesh", str(path))


@pytest.fixture(scope="module")
def lab_mesh(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Lab, dict[str, str]]]:
    """The lab up with a server address on its management bridge, three enrolled agents in
    its namespaces, and the default mesh paused so only the lab mesh runs."""
    tmp = tmp_path_factory.mktemp("mesh-lab")
    apply_meshes(stack, tmp, [{"name": "default", "enabled": False}])
    try:
        yield from _lab_with_agents(stack, tmp)
    finally:
        apply_meshes(stack, tmp, [{"name": "default", "enabled": True}])


def _lab_with_agents(stack: Stack, tmp: Path) -> Iterator[tuple[Stack, Lab, dict[str, str]]]:
    with lab_up("grnet-ecmp", management=True) as lab:
        port = free_port()
        server = f"http://{MANAGEMENT_ADDRESS}:{port}"
        stack.env["FATHOM_ALLOWED_HOSTS"] += f",{MANAGEMENT_ADDRESS}"
        stack.start(
            "web-lab",
            [str(VENV_BIN / "gunicorn"), "--chdir", "backend", "--bind", f"{MANAGEMENT_ADDRESS}:{port}",
             "--workers", "2", "fathom.wsgi"],
        )  # fmt: skip
        wait_for("the lab's web server", lambda: stack.processes["web-lab"].poll() is None and port_open(port), 30)
        ids: dict[str, str] = {}
        names = ("dca", "dcb", "dcc")
        for name in names:
            state = tmp / name
            token = stack.manage("create_enrollment_token", "--note", f"lab {name}").strip()
            lab.exec(
                name, str(AGENT_BIN), "enroll", "--server", server, "--token", token, "--name", name,
                "--address", lab.addresses[name], "--state-dir", str(state), "--allow-insecure-http",
            )  # fmt: skip
            ids[name] = json.loads((state / "credential.json").read_text())["agent_id"]
        apply_meshes(stack, tmp, [LAB_MESH])
        for name in names:
            stack.start(
                f"agent-{name}",
                [str(LAB_BIN), "exec", "--state-dir", str(lab.state_dir), name, "--", str(AGENT_BIN), "run",
                 "--state-dir", str(tmp / name), "--iperf3-bind", lab.addresses[name]],
            )  # fmt: skip
        try:
            yield stack, lab, ids
        finally:
            for name in (*names, "web-lab"):
                key = name if name == "web-lab" else f"agent-{name}"
                process = stack.processes.pop(key)
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
            apply_meshes(stack, tmp, [{"name": "grnet", "enabled": False}])


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((MANAGEMENT_ADDRESS, port)) == 0


def ok_runs(stack: Stack, ids: dict[str, str]) -> set[tuple[str, str, str]]:
    names = {agent_id: name for name, agent_id in ids.items()}
    rows = stack.query(
        "SELECT DISTINCT agent_id::text, peer_id::text, test_type FROM measurements_run WHERE status = 'ok'"
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
        "SELECT test_type, status, count(*) FROM measurements_run WHERE agent_id = ANY(%s::uuid[]) GROUP BY 1, 2",
        list(ids.values()),
    )
    (ARTIFACTS / "mesh-lab-runs.txt").write_text("\n".join(f"{t:<10} {s:<7} {n}" for t, s, n in sorted(counts)))
    missing = {(a, b, kind) for a in ids for b in ids if a != b for kind in TEST_TYPES} - ok_runs(stack, ids)
    assert not missing


def test_no_agent_is_ever_in_two_throughput_runs_at_once(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, _, ids = measured
    rows = stack.query(
        "SELECT agent_id::text, peer_id::text, started_at, ended_at FROM measurements_run"
        " WHERE test_type = 'throughput' AND status <> 'missed' AND agent_id = ANY(%s::uuid[])",
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
    stack, _, ids = measured
    rows = stack.query(
        "SELECT run_id, src_port, min(rtt_ms) FROM measurements_flowsample"
        " WHERE agent_id = %s AND peer_id = %s AND rtt_ms IS NOT NULL GROUP BY 1, 2",
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
        " FROM measurements_flowsample WHERE agent_id = %s AND peer_id = %s AND rtt_ms IS NOT NULL"
        " GROUP BY run_id, src_port) AS flows GROUP BY run_id",
        ids["dca"],
        ids["dcc"],
    )
    assert spreads and statistics.median(spread for (spread,) in spreads) < 1.0, spreads
    ecmp_spreads = stack.query(
        "SELECT max(rtt_ms) - min(rtt_ms) FROM (SELECT run_id, src_port, min(rtt_ms) AS rtt_ms"
        " FROM measurements_flowsample WHERE agent_id = %s AND peer_id = %s AND rtt_ms IS NOT NULL"
        " GROUP BY run_id, src_port) AS flows GROUP BY run_id",
        ids["dca"],
        ids["dcb"],
    )
    assert statistics.median(spread for (spread,) in ecmp_spreads) > 3.0, ecmp_spreads


def test_traces_show_both_ecmp_members(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, _lab, ids = measured
    rows = stack.query(
        "SELECT hops, reached, fingerprint FROM measurements_tracepath WHERE agent_id = %s AND peer_id = %s",
        ids["dca"],
        ids["dcb"],
    )
    first_hops = {hops[0]["probes"][0]["address"] for hops, _, _ in rows if hops and hops[0]["probes"]}
    assert {"198.18.128.1", "198.18.128.2"} <= first_hops, first_hops
    assert len({fingerprint for _, _, fingerprint in rows}) >= 2
    assert any(reached for _, reached, _ in rows)
    single = stack.query(
        "SELECT DISTINCT fingerprint FROM measurements_tracepath WHERE agent_id = %s AND peer_id = %s AND reached",
        ids["dcb"],
        ids["dca"],
    )
    assert len(single) == 1


def test_host_facts_are_the_labs_sysctls(measured: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, lab, ids = measured
    for name, agent_id in ids.items():
        ((facts,),) = stack.query("SELECT host_facts FROM inventory_agent WHERE id = %s", agent_id)
        assert facts["sysctls"]["net.ipv4.tcp_rmem"] == lab.host_sysctl(name, "net.ipv4.tcp_rmem")
        assert facts["sysctls"]["net.ipv4.tcp_wmem"] == lab.host_sysctl(name, "net.ipv4.tcp_wmem")
        history = stack.query("SELECT count(*) FROM inventory_hostfactssnapshot WHERE agent_id = %s", agent_id)
        assert history[0][0] >= 1
