"""One lab for the alert drill and the findings lab (deploy/lab/scenarios/findings-drill.yaml).

Both cut a 100 Mbit/s path by 40 % once it has the ten runs of history the fast rule judges
from (about two minutes at a run every 11 s). Brought up once, with every pair's mesh applied
at once, the baselines build side by side: the drill waits for its own, the findings lab then
finds its baseline and its 20 ECMP runs already there. The pairs share no agent, so neither
test sees the other's regressions as its own incident. The `findings_drill_lab` fixture
(conftest.py) holds it for the session; the tests that use it run after every other lab test,
which need the management network for labs of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lab.lab import Lab
from lab.lateness import LatenessLog

from .conftest import Stack
from .lab_agents import apply_meshes, lab_with_agents

SCENARIO = "findings-drill"

# The drill's pairs.
RTT_PAIR = ("ra", "rb")
TPUT_PAIR = ("ta", "tb")
QUIET_PAIR = ("qa", "qb")  # under a silence from the start: its RTT shift is recorded, never sent
# The findings lab's pairs.
ECMP = ("ea", "eb")
CONTROL = ("wa", "wb")
# Throughput runs a path's baseline waits for: the fast rule judges from 10 runs of a path's
# own history, and the newest is the one it judges.
BASELINE_RUNS = 11

PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 10, "interval_s": 0.2}}
# 2 s + 1 s omitted + the planner's 8 s margin: a run every 11 s holds each pair's agents back to back.
THROUGHPUT = {"name": "tput", "test_type": "throughput", "interval_s": 11, "slip_s": 0,
              "spec": {"duration_s": 2, "omit_s": 1, "congestion": "cubic"}}  # fmt: skip
SWEEP = {"name": "sweep", "test_type": "flowsweep", "interval_s": 20,
         "spec": {"flows": 16, "samples_per_flow": 10, "interval_ms": 5}}  # fmt: skip


def pair_mesh(name: str, pair: tuple[str, str], tests: list[dict[str, Any]]) -> dict[str, Any]:
    """A one-way mesh of sender -> receiver."""
    return {
        "name": name,
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": pair[0], "side": "a"}, {"agent": pair[1], "side": "b"}],
        "tests": tests,
    }


DRILL_MESHES: list[dict[str, Any]] = [
    {"name": "drill-rtt", "kind": "mesh", "members": [{"agent": host} for host in RTT_PAIR], "tests": [PING]},
    {"name": "drill-quiet", "kind": "mesh", "members": [{"agent": host} for host in QUIET_PAIR], "tests": [PING]},
    pair_mesh("drill-tput", TPUT_PAIR, [PING, THROUGHPUT]),
]
FINDINGS_MESHES: list[dict[str, Any]] = [
    pair_mesh("findings-ecmp", ECMP, [PING, SWEEP, THROUGHPUT]),
    pair_mesh("findings-control", CONTROL, [PING, SWEEP, THROUGHPUT]),
]
ENROL = {
    "name": "findings-drill-enrol",
    "kind": "mesh",
    "enabled": False,
    "members": [{"agent": host} for host in (*RTT_PAIR, *TPUT_PAIR, *QUIET_PAIR, *ECMP, *CONTROL)],
    "tests": [],
}


@dataclass
class FindingsDrillLab:
    stack: Stack
    lab: Lab
    ids: dict[str, str]
    tmp: Path
    lateness: LatenessLog

    def disable(self, meshes: list[dict[str, Any]]) -> None:
        """Stops meshes' tests (a test done with its pairs spares the emulator for the next)."""
        apply_meshes(self.stack, self.tmp, [{"name": mesh["name"], "enabled": False} for mesh in meshes])


@contextmanager
def findings_drill_lab_up(stack: Stack, tmp: Path) -> Iterator[FindingsDrillLab]:
    """The scenario up with its ten agents, every pair's mesh running, and the emulator's
    lateness logged from the start."""
    with lab_with_agents(stack, tmp, SCENARIO, ENROL) as (lab, ids), LatenessLog(lab) as lateness:
        shared = FindingsDrillLab(stack, lab, ids, tmp, lateness)
        apply_meshes(stack, tmp, DRILL_MESHES + FINDINGS_MESHES)
        try:
            yield shared
        finally:
            shared.disable(DRILL_MESHES + FINDINGS_MESHES)
