"""A dual-stack pair is two paths (issue 33 item 4), on the lab's dual-stack scenario: lisbon
and oslo over IPv4 direct at 20 ms, over IPv6 through two ECMP routers at 32 or 38 ms.
Needs root (the lab's namespaces); CI runs as root.

Two real agents enrol with both addresses; one mesh of ping, flow sweeps and traces,
lisbon -> oslo. What must hold, from the server's API: the Paths list has the path once per
family; each family's pings show its own RTT; IPv6's flow sweeps find its two members and
IPv4's none; IPv6's traces cross the members' IPv6 routers and IPv4's reach oslo at hop 1.
Throughput over IPv6 is shown elsewhere, at less cost to the lab lane: the lab suite's
dual-stack check (iperf3 -6 through the emulator, 46 of 50 Mbit/s), the agent's Go test
against a real iperf3 server on ::1, and the planner's unit test (a slot per family, the
hosts taking turns). An exclusive test here took 30-60 s more of the lane CI runs on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from lab.lab import SCENARIOS, Lab

from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import lab_with_agents

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

MESH = {
    "name": "dual",
    "kind": "disjoint",
    "unidirectional": True,
    "members": [{"agent": "lisbon", "side": "a"}, {"agent": "oslo", "side": "b"}],
    "tests": [
        {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 5, "interval_s": 0.2}},
        {"name": "sweep", "test_type": "flowsweep", "interval_s": 10,
         "spec": {"flows": 32, "samples_per_flow": 10, "interval_ms": 5}},
        {"name": "trace", "test_type": "trace", "interval_s": 10, "spec": {"flows": 8, "max_hops": 4}},
    ],
}  # fmt: skip
# The scenario's truth: each family's RTT (IPv6: one of its two members), in ms.
RTT_MS = {4: (20.0,), 6: (32.0, 38.0)}
RTT_TOLERANCE_MS = 1.0


@pytest.fixture(scope="module")
def dual(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Lab, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("dual-stack-lab")
    with lab_with_agents(stack, tmp, SCENARIOS / "dual-stack.yaml", MESH) as (lab, ids):
        yield stack, lab, ids


def get(stack: Stack, path: str, **params: Any) -> Any:
    reply = stack.session().get(f"{stack.url}/api/v1/{path}", params=params, timeout=30)
    reply.raise_for_status()
    return reply.json()


def runs_by_family(stack: Stack, ids: dict[str, str]) -> dict[tuple[int, str], int]:
    rows = stack.query(
        "SELECT family, test_type, count(*) FROM measurements_run WHERE status = 'ok'"
        " AND source_id = %s AND destination_id = %s GROUP BY family, test_type",
        ids["lisbon"],
        ids["oslo"],
    )
    return {(int(family), str(kind)): int(count) for family, kind, count in rows}


def decided_sweeps(stack: Stack, ids: dict[str, str]) -> set[int]:
    """The families whose flow sweeps the analysis has decided (the task runs every few seconds)."""
    rows = stack.query(
        "SELECT DISTINCT family FROM analysis_sweepmodes WHERE source_id = %s AND destination_id = %s"
        " AND verdict <> 'insufficient'",
        ids["lisbon"],
        ids["oslo"],
    )
    return {int(row[0]) for row in rows}


def test_each_family_is_a_path_with_its_own_rtt_members_and_route(dual: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, lab, ids = dual
    kinds = (("ping", 3), ("flowsweep", 1), ("trace", 1))
    wanted = {(family, kind): need for family in (4, 6) for kind, need in kinds}

    def measured() -> bool:
        stack.assert_running()
        found = runs_by_family(stack, ids)
        return all(found.get(key, 0) >= need for key, need in wanted.items()) and decided_sweeps(stack, ids) == {4, 6}

    wait_for("pings, sweeps and traces over both families, the sweeps analysed", measured, 150, interval_s=2)
    pair = {"source": ids["lisbon"], "destination": ids["oslo"]}
    listed = [row["family"] for row in get(stack, "paths/") if row["source"]["id"] == ids["lisbon"]]
    evidence: dict[str, Any] = {"paths": listed, "runs": runs_by_family(stack, ids)}
    for family in RTT_MS:
        rtt = get(stack, "paths/rtt/", **pair, family=family, max_points=10)
        minima = [point["rtt_min_ms"] for point in rtt["points"] if point["rtt_min_ms"] is not None]
        routes = get(stack, "paths/routes/", **pair, family=family)
        hops = sorted({hop["address"] for route in routes["routes"] for hop in route["hops"] if hop.get("address")})
        modes = get(stack, "analysis/path/", **pair, family=family)["modes"]
        evidence[f"IPv{family}"] = {"rtt_min_ms": minima, "hops": hops, "modes": [m["rtt_ms"] for m in modes["modes"]],
                                    "verdict": modes["verdict"]}  # fmt: skip
    (ARTIFACTS / "dual-stack-lab.txt").write_text(f"{evidence}\n")
    assert sorted(listed) == [4, 6], evidence
    for family, truth in RTT_MS.items():
        seen = evidence[f"IPv{family}"]
        assert seen["rtt_min_ms"], evidence
        assert min(abs(min(seen["rtt_min_ms"]) - rtt) for rtt in truth) <= RTT_TOLERANCE_MS, evidence
    routers6 = set(lab.ipv6().routers("six")[0])
    assert routers6 <= set(evidence["IPv6"]["hops"]) and "2001:2::2" in evidence["IPv6"]["hops"], evidence
    assert evidence["IPv4"]["hops"] == ["198.18.0.2"], evidence
    assert evidence["IPv6"]["verdict"] == "ecmp" and len(evidence["IPv6"]["modes"]) == 2, evidence
    assert evidence["IPv4"]["verdict"] != "ecmp", evidence
