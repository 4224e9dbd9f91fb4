"""How fast the exclusive slot planner fills full meshes, and how full it gets them.

Full meshes of 10 to 200 agents run perfSONAR's default throughput schedule: every 6 h, 30 s
reserved per run (20 s test, 2 s omit, 8 s margin), slip as long as the interval. Every test
shares one anchor, so all windows open at the same instant: the hardest case for the planner
(default anchors stagger the windows). Planned three ways: one 6 h period, a 24 h horizon in
one call, and the same 24 h extended in four 6 h calls that pass the earlier placements back
(how the server plans in production).

    cd backend && python -m meshes.bench_scheduler    # or: make bench-scheduler

Needs no Django settings: meshes.slots is pure.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass

from meshes.slots import Placement, SlotRequest, count_overlaps, plan_slots, utilization

INTERVAL_S = 6 * 3600
DURATION_S = 20 + 2 + 8
SLIP_S = INTERVAL_S
# 2026-01-01T00:00:00Z: a fixed epoch keeps runs comparable from one machine to the next.
EPOCH_S = 1_767_225_600
DEFAULT_AGENTS = (10, 50, 100, 200)
HORIZONS = (("6 h", 1, 1), ("24 h", 4, 1), ("24 h in 4 calls", 4, 4))


@dataclass(frozen=True)
class BenchRow:
    horizon: str
    agents: int
    paths: int
    runs: int
    unplaceable: int
    plan_s: float
    utilization_mean: float
    utilization_max: float
    overlaps: int


def full_mesh(agents: int) -> list[SlotRequest]:
    names = [f"agent-{i:03d}" for i in range(agents)]
    return [
        SlotRequest(
            key=f"throughput:{source}>{destination}",
            source=source,
            destination=destination,
            interval_s=INTERVAL_S,
            duration_s=DURATION_S,
            slip_s=SLIP_S,
            anchor_s=EPOCH_S,
        )
        for source in names
        for destination in names
        if source != destination
    ]


def bench(agents: int, horizon: str, periods: int, calls: int, seed: int) -> BenchRow:
    requests = full_mesh(agents)
    rng = random.Random(seed)  # noqa: S311 - start jitter, not secrets
    placements: list[Placement] = []
    unplaceable = 0
    span_s = periods * INTERVAL_S
    step_s = span_s / calls
    started = time.perf_counter()
    for call in range(calls):
        from_s = EPOCH_S + call * step_s
        plan = plan_slots(requests, from_s, from_s + step_s, rng, planned=placements)
        placements.extend(plan.placements)
        unplaceable += len(plan.unplaceable)
    plan_s = time.perf_counter() - started
    # Runs of the last period may end up to one slip + duration past the horizon; the share
    # is taken over the horizon itself, which is what an operator sizes the mesh by.
    shares = utilization(placements, EPOCH_S, EPOCH_S + span_s)
    return BenchRow(
        horizon=horizon,
        agents=agents,
        paths=len(requests),
        runs=len(placements),
        unplaceable=unplaceable,
        plan_s=plan_s,
        utilization_mean=statistics.fmean(shares.values()),
        utilization_max=max(shares.values()),
        overlaps=count_overlaps(placements),
    )


def format_table(rows: list[BenchRow]) -> str:
    header = (
        f"{'horizon':<16} {'agents':>6} {'paths':>7} {'runs':>7} {'unplaceable':>11} "
        f"{'plan s':>7} {'util mean':>9} {'util max':>8} {'overlaps':>8}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row.horizon:<16} {row.agents:>6} {row.paths:>7} {row.runs:>7} {row.unplaceable:>11} "
            f"{row.plan_s:>7.3f} {row.utilization_mean:>9.1%} {row.utilization_max:>8.1%} {row.overlaps:>8}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default=",".join(map(str, DEFAULT_AGENTS)), help="comma-separated mesh sizes")
    parser.add_argument("--seed", type=int, default=1, help="seed of the planner's random starts")
    args = parser.parse_args()
    sizes = [int(size) for size in args.agents.split(",") if size.strip()]
    print(
        f"Full meshes, every {INTERVAL_S // 3600} h, {DURATION_S} s reserved per run, slip {SLIP_S // 3600} h, "
        f"one common anchor, seed {args.seed}"
    )
    rows = [bench(agents, name, periods, calls, args.seed) for name, periods, calls in HORIZONS for agents in sizes]
    print(format_table(rows))


if __name__ == "__main__":
    main()
