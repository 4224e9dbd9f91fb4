"""`make lab-noise`: the noise of real lab runs, for the false-alarm benchmark.

Brings up a single-path and an ECMP scenario (the latter twice: window-limited below the
emulator's capacity, and at its own buffers, where the emulator's CPU adds bursts of slow
runs) and measures, with the real tools:

- throughput: short iperf3 runs, each from its own client port (so ECMP hashes each run on
  a member of its own); per run the rate, the flow's minimum RTT (TCP_INFO), hence its member,
  and the window ceiling max_snd_wnd / member RTT. The residual of a run is ln(rate / the
  median rate of the runs on its member): the run-to-run noise the regression rules see
  once a run is judged against its own member;
- RTT: a flow sweep (TCP handshake per source port, round-robin) gives each member's RTT and
  the spread of its samples above the flow's minimum; a ping gives ICMP's samples above their
  minimum (what a 5-minute window's min and p50 are made of).

Writes backend/analysis/lab_noise.json (a few KB; committed, so `make bench-analysis` needs no
root). Needs root (network namespaces); serialise with other lab users:

    flock /tmp/fathom-lab.lock python -m tests.lab.lab_noise [--runs 32]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .lab import ROOT, Lab, flow_rtts, iperf3, iperf3_end, lab_up, ping_replies

OUTPUT = ROOT / "backend" / "analysis" / "lab_noise.json"
# (name, scenario, source, destination, iperf3 options): a capacity-limited single path, and
# seed 000's ECMP path (members at 7.8 and 11.9 ms, 3:1) window-limited by -w 1M, so that each
# member's ceiling is window / RTT (about 1.5 and 1 Gbit/s), below the ~3 Gbit/s the
# user-space emulator carries. The same path at its 6 MiB buffers runs the fast member into the
# emulator's CPU: runs 9-13% slow in bursts, the machine's noise rather than the path's, kept
# as a harsher noise (cross traffic does the same to a real path).
SCENARIOS = (
    ("single-path", "single-path", "west", "east", ()),
    ("grnet-ecmp", "grnet-ecmp", "dca", "dcb", ("-w", "1M")),
    ("grnet-ecmp-cpu-bound", "grnet-ecmp", "dca", "dcb", ()),
)
FIRST_CLIENT_PORT = 42000


def _members(per_flow_min_ms: list[float]) -> list[float]:
    """Member RTTs: the sorted per-flow minima split where a gap exceeds max(0.3 ms, 2%)."""
    values = sorted(per_flow_min_ms)
    clusters: list[list[float]] = [[values[0]]]
    for value in values[1:]:
        if value - clusters[-1][-1] > max(0.3, 0.02 * clusters[-1][-1]):
            clusters.append([])
        clusters[-1].append(value)
    return [statistics.median(cluster) for cluster in clusters]


def _nearest(value: float, members: list[float]) -> int:
    return min(range(len(members)), key=lambda index: abs(members[index] - value))


def _run(
    lab: Lab,
    source: str,
    destination: str,
    port: int,
    options: tuple[str, ...],
    seconds: int,
) -> dict[str, Any]:
    """One iperf3 run from a client port of its own; a port still in TIME_WAIT from an earlier
    capture is skipped for the next free one (another port is just another flow hash)."""
    for attempt in range(5):
        try:
            cport = str(port + 1000 * attempt)
            return iperf3(
                lab,
                source,
                destination,
                "--cport",
                cport,
                *options,
                seconds=seconds,
                omit=1,
            )
        except RuntimeError as error:
            if "Address already in use" not in str(error) or attempt == 4:
                raise
    raise AssertionError("unreachable")


def capture(
    lab: Lab,
    source: str,
    destination: str,
    options: tuple[str, ...],
    runs: int,
    seconds: int,
) -> dict[str, Any]:
    sweep = flow_rtts(lab, source, destination, flows=16, rounds=10)
    per_flow_min = {port: min(values) for port, values in sweep.items() if values}
    members = _members(list(per_flow_min.values()))
    member_of_flow = {port: _nearest(rtt, members) for port, rtt in per_flow_min.items()}
    sweep_excess: list[list[float]] = [[] for _ in members]
    for port, values in sweep.items():
        sweep_excess[member_of_flow[port]] += [round(value - per_flow_min[port], 3) for value in values]
    out = lab.exec(
        source, "ping", "-n", "-D", "-c", "200", "-i", "0.05", "-W", "2",
        "-I", lab.addresses[source], lab.addresses[destination],
    )  # fmt: skip
    ping_rtts = [rtt for _, rtt in ping_replies(out)]
    ping_min = min(ping_rtts)
    rows: list[dict[str, Any]] = []
    for run in range(runs):
        result = _run(lab, source, destination, FIRST_CLIENT_PORT + run, options, seconds)
        end = iperf3_end(result)
        sender = end["streams"][0]["sender"]
        rate_bps = float(end["sum_received"]["bits_per_second"])
        min_rtt_ms = float(sender.get("min_rtt", 0)) / 1000
        member = _nearest(min_rtt_ms, members)
        window_bytes = float(sender.get("max_snd_wnd", 0))
        ceiling_bps = window_bytes * 8 / (members[member] / 1000) if window_bytes else math.nan
        rows.append(
            {
                "rate_bps": round(rate_bps),
                "min_rtt_ms": round(min_rtt_ms, 3),
                "member": member,
                "window_ceiling_bps": round(ceiling_bps) if math.isfinite(ceiling_bps) else None,
            }
        )
    by_member: dict[int, list[float]] = {}
    for row in rows:
        by_member.setdefault(row["member"], []).append(row["rate_bps"])
    medians = {member: statistics.median(rates) for member, rates in by_member.items()}
    residuals = [round(math.log(row["rate_bps"] / medians[row["member"]]), 5) for row in rows]
    fractions = [round(row["rate_bps"] / row["window_ceiling_bps"], 4) for row in rows if row["window_ceiling_bps"]]
    return {
        "source": source,
        "destination": destination,
        "iperf3_options": list(options),
        "runs": rows,
        "run_seconds": seconds,
        "residuals_ln": residuals,
        "member_median_rate_bps": {str(member): round(rate) for member, rate in sorted(medians.items())},
        "rate_over_window_ceiling": fractions,
        "members_rtt_ms": [round(rtt, 3) for rtt in members],
        "member_flows": [sum(1 for m in member_of_flow.values() if m == index) for index in range(len(members))],
        "sweep_excess_ms": sweep_excess,
        "ping_min_ms": ping_min,
        "ping_excess_ms": [round(rtt - ping_min, 3) for rtt in ping_rtts],
        "ping_sent": 200,
        "ping_received": len(ping_rtts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=32, help="iperf3 runs per scenario")
    parser.add_argument(
        "--seconds",
        type=int,
        default=3,
        help="measured seconds per run (one more is omitted)",
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    started = time.monotonic()
    scenarios: dict[str, Any] = {}
    for name, scenario, source, destination, options in SCENARIOS:
        print(
            f"== {name}: {args.runs} runs {source}->{destination} on {scenario}",
            flush=True,
        )
        try:
            with lab_up(scenario) as lab:
                captured = capture(lab, source, destination, options, args.runs, args.seconds)
            scenarios[name] = {"scenario": scenario, **captured}
        except (
            RuntimeError,
            OSError,
            subprocess.SubprocessError,
            KeyError,
            ValueError,
        ) as error:
            print(f"{name}: {error}", flush=True)
            return 1
        residuals = scenarios[name]["residuals_ln"]
        print(
            f"   members {scenarios[name]['members_rtt_ms']} ms, residual sd "
            f"{statistics.pstdev(residuals):.4f}, min {min(residuals):.4f}",
            flush=True,
        )
    document = {
        "captured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "make lab-noise (python -m tests.lab.lab_noise)",
        "capture_seconds": round(time.monotonic() - started),
        "scenarios": scenarios,
    }
    # One line per scenario's field keeps the file small and its diffs readable.
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in document.items() if key != "scenarios"]
    compact = (",", ":")
    blocks = [
        f"    {json.dumps(name)}: {{\n"
        + ",\n".join(
            f"      {json.dumps(key)}: {json.dumps(value, separators=compact)}" for key, value in fields.items()
        )
        + "\n    }"
        for name, fields in scenarios.items()
    ]
    lines.append('  "scenarios": {\n' + ",\n".join(blocks) + "\n  }")
    args.output.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {args.output} in {document['capture_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
