"""`make lab-soak` (issue 31's acceptance lab): half an hour of an ordinary network Fathom was
not built against, with its own throughput tests running, and one link three paths share
degraded midway. Prints one table, each row configured against found, and fails if any row
does. Not part of `make test` (it takes 30 minutes). Needs root (namespaces).

deploy/lab/scenarios/truth-soak.yaml: three paths across one shared link (its routers
198.18.200.1 and .2 on every trace), a control sharing their agents, a BBR sender held by its
256 KiB send buffer, and a receive-window-limited path whose ACKs return over ECMP.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from lab.lab import Lab

from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import apply_meshes, lab_with_agents

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)"),
    pytest.mark.skipif(os.environ.get("FATHOM_SOAK") != "1", reason="30 minutes: make lab-soak"),
]

SHARED = [("s1", "d1"), ("s2", "d2"), ("s3", "d3")]
CONTROL = ("s1", "d2")
SEND_BUFFER = ("bs", "br")
REVERSE_ECMP = ("as", "ar")
UNCHANGED = [CONTROL, SEND_BUFFER, REVERSE_ECMP]
# What each path's runs must be labelled before the cut (the binding limit by construction).
EXPECTED_LABELS = {
    **dict.fromkeys(SHARED, "capacity"),
    CONTROL: "capacity",
    SEND_BUFFER: "send_buffer",
    REVERSE_ECMP: "receive_window",
}
SOAK_S = 30 * 60
BASELINE_RUNS = 11  # the fast rule judges from 10 runs of a path's own history
RATE_AFTER = 60  # Mbit/s on the shared link, from 100
SHARED_ROUTERS = ("198.18.200.1", "198.18.200.2")
THROUGHPUT = {"duration_s": 5, "omit_s": 1}  # each host's own congestion control (BBR by default)


def pair_mesh(sender: str, receiver: str) -> dict[str, Any]:
    return {
        "name": f"soak-{sender}-{receiver}",
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": sender, "side": "a"}, {"agent": receiver, "side": "b"}],
        "tests": [
            {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 10, "interval_s": 0.2}},
            {"name": "sweep", "test_type": "flowsweep", "interval_s": 60,
             "spec": {"flows": 16, "samples_per_flow": 10, "interval_ms": 5}},
            {"name": "trace", "test_type": "trace", "interval_s": 120, "spec": {"flows": 8, "max_hops": 6}},
            {"name": "tput", "test_type": "throughput", "interval_s": 45, "slip_s": 15, "spec": THROUGHPUT},
        ],
    }  # fmt: skip


PAIRS = [*SHARED, *UNCHANGED]
ENROL = {
    "name": "soak-enrol",
    "kind": "mesh",
    "enabled": False,
    "members": [{"agent": host} for host in sorted({host for pair in PAIRS for host in pair})],
    "tests": [],
}


@dataclass
class Table:
    rows: list[tuple[str, str, str, bool]] = field(default_factory=list)

    def row(self, case: str, found: str, wanted: str, ok: bool) -> None:
        self.rows.append((case, found, wanted, ok))

    def text(self) -> str:
        lines = [f"{'':4} {'case':<34} {'found':<70} wanted"]
        lines += [
            f"{'ok' if ok else 'FAIL':<4} {case:<34} {found:<70} {wanted}" for case, found, wanted, ok in self.rows
        ]
        return "\n".join(lines)


def analysed(stack: Stack, ids: dict[str, str], pair: tuple[str, str]) -> list[tuple[datetime, str, float]]:
    return [
        (started, str(label), float(rate or 0))
        for started, label, rate in stack.query(
            "SELECT started_at, diagnosis, rate_bps FROM analysis_runanalysis WHERE source_id = %s"
            " AND destination_id = %s AND rate_bps IS NOT NULL ORDER BY started_at",
            ids[pair[0]],
            ids[pair[1]],
        )
    ]


def alarms(stack: Stack, ids: dict[str, str], pair: tuple[str, str]) -> list[tuple[Any, ...]]:
    return stack.query(
        "SELECT metric, direction, round(magnitude::numeric, 3), rules, detected_at FROM analysis_finding"
        " WHERE source_id = %s AND destination_id = %s AND kind = 'alarm' ORDER BY detected_at",
        ids[pair[0]],
        ids[pair[1]],
    )


def name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}->{pair[1]}"


@dataclass
class Soak:
    stack: Stack
    ids: dict[str, str]
    cut_at: datetime
    incidents: list[dict[str, Any]]


@pytest.fixture(scope="module")
def soak(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Soak]:
    tmp = tmp_path_factory.mktemp("truth-soak")
    started = time.monotonic()
    with lab_with_agents(stack, tmp, "truth-soak", ENROL) as (lab, ids):
        meshes = [pair_mesh(*pair) for pair in PAIRS]
        apply_meshes(stack, tmp, meshes)
        try:
            yield run_soak(stack, lab, ids, started)
        finally:
            apply_meshes(stack, tmp, [{"name": mesh["name"], "enabled": False} for mesh in meshes])


def run_soak(stack: Stack, lab: Lab, ids: dict[str, str], started: float) -> Soak:
    wait_for(
        f"{BASELINE_RUNS} analysed runs on each shared-link path",
        lambda: all(len(analysed(stack, ids, pair)) >= BASELINE_RUNS for pair in SHARED),
        1200,
        interval_s=10,
    )
    cut_at: datetime = stack.query("SELECT now()")[0][0]
    for link in ("shared1", "shared2", "shared3"):
        lab.set(link, rate_mbps=RATE_AFTER)
    http = stack.session()

    def shared_incident() -> list[dict[str, Any]] | None:
        rows = http.get(f"{stack.url}/api/v1/alerts/incidents/?status=open", timeout=10).json()
        details = [http.get(f"{stack.url}/api/v1/alerts/incidents/{row['id']}/", timeout=10).json() for row in rows]
        shared = set(map(name, SHARED))
        joined = [d for d in details if {a["labels"].get("path") for a in d["alerts"]} >= shared]
        return details if joined else None

    with contextlib.suppress(AssertionError):  # the table says what became of the cut instead
        wait_for("one incident holding the three shared-link paths", shared_incident, 600, interval_s=10)
    # The rest of the half hour with every test running: what else would page shows now.
    time.sleep(max(0.0, SOAK_S - (time.monotonic() - started)))
    stack.assert_running()
    incidents = [
        http.get(f"{stack.url}/api/v1/alerts/incidents/{row['id']}/", timeout=10).json()
        for row in http.get(f"{stack.url}/api/v1/alerts/incidents/", timeout=10).json()
    ]
    return Soak(stack, ids, cut_at, incidents)


def test_the_half_hour_gives_the_right_labels_one_incident_and_no_false_finding(soak: Soak) -> None:
    stack, ids, cut_at = soak.stack, soak.ids, soak.cut_at
    table = Table()
    for pair, wanted in EXPECTED_LABELS.items():
        before = [label for started, label, _ in analysed(stack, ids, pair) if started < cut_at]
        counts = Counter(before)
        label = counts.most_common(1)[0][0] if counts else "no run"
        rates = [rate / 1e6 for started, _, rate in analysed(stack, ids, pair) if started < cut_at]
        spread = f"{min(rates):.0f}-{max(rates):.0f} Mbit/s" if rates else "-"
        table.row(f"label {name(pair)}", f"{label} ({dict(counts)}; {spread})", wanted, label == wanted)
    shared_paths = set(map(name, SHARED))
    holding = [
        incident
        for incident in soak.incidents
        if {alert["labels"].get("path") for alert in incident["alerts"]} & shared_paths
    ]
    titles = "; ".join(f"#{i['id']} {i['title']}" for i in holding)
    table.row("incidents of the shared link", f"{len(holding)}: {titles}", "1", len(holding) == 1)
    if holding:
        cause = holding[0]["cause"]
        named = any(router in holding[0]["title"] for router in SHARED_ROUTERS)
        table.row("its title names the link's router", holding[0]["title"], "198.18.200.x", named)
        table.row("its cause", cause[:120], "the router, the control as evidence", name(CONTROL) in cause)
    for pair in UNCHANGED:
        found = alarms(stack, ids, pair)
        shown = "; ".join(f"{m} {d} {v} {r}" for m, d, v, r, _ in found) or "none"
        table.row(f"findings on {name(pair)}", shown, "none in 30 min", not found)
    for pair in SHARED:
        found = [row for row in alarms(stack, ids, pair) if row[0] == "throughput"]
        table.row(f"throughput finding {name(pair)}", str(len(found)), "1", len(found) == 1)
    text = table.text()
    (ARTIFACTS / "truth-soak.txt").write_text(text + "\n")
    print("\n" + text)
    assert all(ok for *_, ok in table.rows), text
