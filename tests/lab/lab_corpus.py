"""`make lab-corpus`: record the labelled corpus that `make bench-truth` judges Fathom against.

Draws scenarios from the matrix (corpus_matrix.py, a seed and a count), brings each up in the
lab and records what a Fathom agent would report, with the agent's own probes
(`fathom-lab probe`): both hosts' facts, flow sweeps before, during and after the throughput
runs, the throughput runs themselves (the contract section and iperf3's raw JSON), and pings
every 0.2 s for the whole scenario (so the corpus holds pings taken under Fathom's own load).
Each run carries the emulator's lateness over its span: a run whose packets left late is
one the emulator, not the network, may have set, and the benchmark judges it apart.

One gzipped JSON line per scenario, with its configuration and truth, in
backend/analysis/truth/corpus/seed<SEED>-<FIRST>-<LAST>.jsonl.gz. Needs root; serialise
with other lab users:

    flock /tmp/fathom-lab.lock python -m tests.lab.lab_corpus --seed 31 --count 40 [--first 0]

`--ramps` adds paced UDP ramps to the recorded scenarios a policer or a shallow queue binds
(what Fathom runs on a path whose runs agree it is policed, analysis/services/ramps.py): each
scenario's configuration comes up again and RAMPS_PER_SCENARIO ramps run through it, written
to corpus/ramps/<corpus file's name>, one line per scenario.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from .corpus_matrix import (
    RATE_RANGE_MBPS,
    RUN_SECONDS,
    Draw,
    describe,
    from_description,
    matrix,
    scenario,
    truth,
)
from .lab import LAB_BIN, ROOT, Lab, Lateness, lab_up, wait_for_port

OUTPUT = ROOT / "backend" / "analysis" / "truth" / "corpus"
RUNS_PER_SCENARIO = 6
RAMPS_OUTPUT = OUTPUT / "ramps"
RAMPS_PER_SCENARIO = 4
# A ramp as the server plans one (analysis.policer.ramp_rates, meshes.ramps.ramp_spec): five
# steps of 2 s, geometric from 0.75x TCP's rate to 6x it or the path's TCP ceiling if higher,
# kept under the link. The lab's "NIC" is its emulated link at twice its configured rate, and
# at most twice the fastest rate the emulator carries at the MTU.
RAMP_STEPS = 5
RAMP_STEP_S = 2
RAMP_LINK_HEADROOM = 2.0
RAMPED_LIMITS = ("policer_small_burst", "policer_large_burst", "shallow_queue")
SWEEP_SPEC = {"flows": 16, "samples_per_flow": 10, "interval_ms": 20}
ECHO_PORT = 4790
PING_INTERVAL_S = 0.2
IDLE_PINGS = 720  # what production's default pings (10 every 300 s) gather in the 6 h a run looks back
PING_LINE = re.compile(r"^\[(\d+\.\d+)\] (?:.*icmp_seq=(\d+).*time=([\d.]+) ms|no answer yet for icmp_seq=(\d+))")


def probe(lab: Lab, host: str, kind: str, *args: str, timeout: float = 180) -> dict[str, Any]:
    """What the agent's prober of that kind reports, run in the host's namespace."""
    out = lab.exec(host, str(LAB_BIN), "probe", kind, *args, timeout=timeout)
    result: dict[str, Any] = json.loads(out)
    return result


def ping_samples(output: str) -> list[list[float | None]]:
    """[unix time, RTT ms or None for a request never answered] per request of `ping -D -O`,
    in sequence order. -O says "no answer yet" for every request still out when the next one
    leaves, which at an interval under the RTT is every request: an answer that comes later
    still counts, so a request is lost only if no answer ever came."""
    answered: dict[int, tuple[float, float]] = {}
    waiting: dict[int, float] = {}
    for line in output.splitlines():
        match = PING_LINE.match(line)
        if match is None:
            continue
        when = float(match.group(1))
        if match.group(3):
            answered.setdefault(int(match.group(2)), (when, float(match.group(3))))
        else:
            waiting.setdefault(int(match.group(4)), when)
    samples: list[list[float | None]] = []
    for seq in sorted(answered.keys() | waiting.keys()):
        when, rtt = answered[seq] if seq in answered else (waiting[seq], None)
        samples.append([when, rtt])
    return samples


def lateness_dict(lateness: Lateness) -> dict[str, Any]:
    return {
        "bounds_us": list(lateness.bounds_us),
        "counts": list(lateness.counts),
        "share_over_1ms": round(lateness.share_later_than(1000), 5),
    }


def sweep(lab: Lab, client: str, server: str) -> dict[str, Any]:
    before = lab.lateness()
    spec = {**SWEEP_SPEC, "port": ECHO_PORT}
    result = probe(
        lab,
        client,
        "flowsweep",
        "--target",
        lab.addresses[server],
        "--spec",
        json.dumps(spec),
    )
    result["lab_lateness"] = lateness_dict(lab.lateness() - before)
    return result


def measured_run(lab: Lab, client: str, address: str, spec: dict[str, Any], *extra: str) -> dict[str, Any]:
    """A throughput probe (a run or a ramp) with the emulator's lateness over it."""
    before = lab.lateness()
    result = probe(lab, client, "throughput", "--target", address, "--spec", json.dumps(spec), *extra)
    result["lab_lateness"] = lateness_dict(lab.lateness() - before)
    return result


def cpu_contention() -> subprocess.Popen[bytes]:
    """Both cores loaded, as a draw with CPU contention asks (stopped with stop_contention)."""
    command = ["stress-ng", "--cpu", "2", "--timeout", "600s", "--quiet"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_contention(stress: subprocess.Popen[bytes] | None) -> None:
    if stress is not None:
        stress.terminate()
        stress.wait()


def throughput(lab: Lab, client: str, server: str, draw: Draw, path_rtt_ms: float) -> dict[str, Any]:
    spec = {
        "duration_s": RUN_SECONDS,
        "reverse": draw.reverse_test,
        "path_rtt_ms": path_rtt_ms,
    }
    address = lab.addresses[server]
    wait_for_port(lab, server, 5201, listening=False)
    # -J as the agents' own servers run: a reverse run's client then gets the sending
    # server's TCP_INFO (--get-server-output).
    lab.exec(server, "iperf3", "-s", "-J", "-D", "-1", "-B", address)
    wait_for_port(lab, server, 5201, listening=True)
    with tempfile.NamedTemporaryFile(suffix=".json") as raw:
        result = measured_run(lab, client, address, spec, "--raw-out", raw.name)
        raw_text = Path(raw.name).read_text()
    try:
        result["iperf3_raw"] = json.loads(raw_text)
    except json.JSONDecodeError:
        result["iperf3_raw"] = raw_text
    return result


def record(draw: Draw) -> dict[str, Any]:
    config = scenario(draw)
    client, server = ("rx", "tx") if draw.reverse_test else ("tx", "rx")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=f"{draw.name}-") as file:
        yaml.safe_dump(config, file)
        file.flush()
        with lab_up(Path(file.name)) as lab:
            responders = [lab.spawn(host, str(LAB_BIN), "responder", "--listen", lab.addresses[host],
                                    "--port", str(ECHO_PORT)) for host in ("tx", "rx")]  # fmt: skip
            pinger = lab.spawn(
                "tx", "ping", "-n", "-D", "-O", "-i", str(PING_INTERVAL_S), "-W", "2",
                "-I", lab.addresses["tx"], lab.addresses["rx"],
            )  # fmt: skip
            stress = None
            try:
                for responder in responders:
                    assert responder.stdout is not None
                    responder.stdout.readline()  # "ready"
                facts = {host: probe(lab, host, "hostfacts") for host in ("tx", "rx")}
                # Production's loss figure rests on hours of pings; a burst stands in for them.
                idle = lab.exec("tx", "ping", "-n", "-D", "-O", "-c", str(IDLE_PINGS), "-i", "0.005", "-W", "2",
                                "-I", lab.addresses["tx"], lab.addresses["rx"], timeout=120)  # fmt: skip
                sweeps = [sweep(lab, "tx", "rx")]
                path_rtt = min((s["rtt_ms"] for s in sweeps[0].get("flowsweep", {}).get("samples", [])
                                if s.get("rtt_ms")), default=draw.rtt_ms)  # fmt: skip
                if draw.cpu_contention:
                    stress = cpu_contention()
                runs = [throughput(lab, client, server, draw, path_rtt)]
                # The second run overlaps a sweep: what Fathom's own load does to one.
                sweeps.append(_sweep_during_run(lab, client, server, draw, path_rtt, runs))
                runs += [throughput(lab, client, server, draw, path_rtt) for _ in range(RUNS_PER_SCENARIO - 2)]
                sweeps.append(sweep(lab, "tx", "rx"))
            finally:
                stop_contention(stress)
                pinger.terminate()
                ping_out, _ = pinger.communicate(timeout=10)
                for responder in responders:
                    responder.terminate()
                    responder.wait()
    return {
        "name": draw.name,
        "recorded_at": datetime.now(UTC).isoformat(),
        "draw": describe(draw),
        "scenario": config,
        "truth": truth(draw),
        "client": client,
        "addresses": {"tx": lab.addresses["tx"], "rx": lab.addresses["rx"]},
        "host_facts": facts,
        "sweeps": sweeps,
        "runs": runs,
        "pings": {"interval_s": PING_INTERVAL_S, "samples": ping_samples(ping_out)},
        "idle_pings": {"interval_s": 0.005, "samples": ping_samples(idle)},
    }


def _sweep_during_run(
    lab: Lab,
    client: str,
    server: str,
    draw: Draw,
    path_rtt: float,
    runs: list[dict[str, Any]],
) -> dict[str, Any]:
    """A flow sweep that overlaps a throughput run (the run is kept as one of the runs)."""
    results: dict[str, Any] = {}

    def background() -> None:
        results["run"] = throughput(lab, client, server, draw, path_rtt)

    thread = threading.Thread(target=background)
    thread.start()
    time.sleep(RUN_SECONDS / 2 + 1)
    during = sweep(lab, "tx", "rx")
    during["during_run"] = True
    thread.join()
    runs.append(results["run"])
    return during


def ramp_rates(entry: dict[str, Any]) -> list[int]:
    """The steps the server would offer this scenario's path, from what its recorded runs
    told it: TCP's median rate (the policer's lower bound), the window terms (TCP's ceiling)
    and the link."""
    rates = sorted(
        float(run["throughput"]["summary"]["receiver_bits_per_s"])
        for run in entry.get("runs") or []
        if run.get("status") == "ok" and (run.get("throughput") or {}).get("summary", {}).get("receiver_bits_per_s")
    )
    if not rates:
        return []
    estimate = rates[len(rates) // 2]
    terms = entry["truth"].get("terms_mbps") or {}
    windows = [terms[key] * 1e6 for key in ("receive_window", "send_buffer") if key in terms]
    fastest = RATE_RANGE_MBPS[entry["draw"]["mtu"]][1]
    link_mbps = min(entry["scenario"]["links"][0]["a_to_b"].get("rate_mbps") or fastest, fastest)
    low, high = 0.75 * estimate, max(6 * estimate, min(windows, default=0.0))
    high = min(high, RAMP_LINK_HEADROOM * link_mbps * 1e6)
    if high <= low:
        return []
    ratio = (high / low) ** (1 / (RAMP_STEPS - 1))
    return sorted({round(low * ratio**index / 1000) * 1000 for index in range(RAMP_STEPS)})


def record_ramps(entry: dict[str, Any]) -> dict[str, Any]:
    """RAMPS_PER_SCENARIO ramps through the recorded scenario's configuration, brought up again."""
    draw = from_description(entry["draw"])
    rates = ramp_rates(entry)
    client, server = entry["client"], "rx" if entry["client"] == "tx" else "tx"
    ramps: list[dict[str, Any]] = []
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=f"{draw.name}-") as file:
        yaml.safe_dump(entry["scenario"], file)
        file.flush()
        with lab_up(Path(file.name)) as lab:
            address = lab.addresses[server]
            lab.exec(server, "iperf3", "-s", "-D", "-B", address)
            wait_for_port(lab, server, 5201, listening=True)
            stress = cpu_contention() if draw.cpu_contention else None
            try:
                spec = {"udp": True, "duration_s": RAMP_STEP_S, "omit_s": 0, "bitrate_bps": rates[0],
                        "ramp_bps": rates, "reverse": draw.reverse_test}  # fmt: skip
                ramps = [measured_run(lab, client, address, spec) for _ in range(RAMPS_PER_SCENARIO if rates else 0)]
            finally:
                stop_contention(stress)
    return {
        "name": entry["name"],
        "recorded_at": datetime.now(UTC).isoformat(),
        "rates_bps": rates,
        "ramps": ramps,
    }


def record_corpus_ramps(paths: list[Path], only: str | None) -> None:
    RAMPS_OUTPUT.mkdir(parents=True, exist_ok=True)
    for path in paths:
        with gzip.open(path, "rt") as lines:
            entries = [json.loads(line) for line in lines if line.strip()]
        chosen = [entry for entry in entries if not entry.get("error") and entry["draw"]["limit"] in RAMPED_LIMITS
                  and (not only or only in entry["name"])]  # fmt: skip
        if not chosen:
            continue
        out_path = RAMPS_OUTPUT / path.name
        partial = out_path.with_suffix(".partial")
        with gzip.open(partial, "wt") as out:
            for number, entry in enumerate(chosen, start=1):
                began = time.monotonic()
                try:
                    recorded = record_ramps(entry)
                except Exception as error:  # noqa: BLE001 (one broken scenario must not lose the rest)
                    recorded = {
                        "name": entry["name"],
                        "error": str(error)[-2000:],
                        "ramps": [],
                    }
                out.write(json.dumps(recorded, separators=(",", ":")) + "\n")
                out.flush()
                print(f"[{path.name} {number}/{len(chosen)}] {entry['name']}: {len(recorded['ramps'])} ramps"
                      f"{' ERROR ' + recorded['error'][-200:] if 'error' in recorded else ''} "
                      f"({time.monotonic() - began:.0f} s)", flush=True)  # fmt: skip
        partial.rename(out_path)


def retruth(path: Path) -> int:
    """Rewrites every scenario's truth in a corpus file from its draw, with today's rules:
    the truth is a function of the configuration, so it can be recomputed without the lab."""
    with gzip.open(path, "rt") as lines:
        entries = [json.loads(line) for line in lines if line.strip()]
    for entry in entries:
        entry["truth"] = truth(from_description(entry["draw"]))
    with gzip.open(path, "wt") as out:
        out.writelines(json.dumps(entry, separators=(",", ":")) + "\n" for entry in entries)
    return len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--only", help="record only the draws whose names contain this")
    parser.add_argument(
        "--retruth",
        type=Path,
        nargs="*",
        help="recompute the truth of these corpus files and stop",
    )
    parser.add_argument(
        "--ramps",
        type=Path,
        nargs="*",
        help="record policer ramps for these corpus files and stop",
    )
    args = parser.parse_args()
    if args.ramps is not None:
        record_corpus_ramps(args.ramps or sorted(OUTPUT.glob("*.jsonl.gz")), args.only)
        return
    if args.retruth:
        for path in args.retruth:
            print(f"{path}: {retruth(path)} scenarios")
        return
    OUTPUT.mkdir(parents=True, exist_ok=True)
    draws = [d for d in matrix(args.seed, args.count, args.first) if not args.only or args.only in d.name]
    path = OUTPUT / f"seed{args.seed}-{args.first:03d}-{args.first + args.count - 1:03d}.jsonl.gz"
    partial = path.with_suffix(".partial")
    started = time.monotonic()
    with gzip.open(partial, "wt") as out:
        for number, draw in enumerate(draws, start=1):
            began = time.monotonic()
            try:
                entry = record(draw)
            except Exception as error:  # noqa: BLE001 (one broken scenario must not lose the rest)
                entry = {
                    "name": draw.name,
                    "draw": describe(draw),
                    "truth": truth(draw),
                    "error": str(error)[-2000:],
                }
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")
            out.flush()
            print(
                f"[{number}/{len(draws)}] {draw.name}: {len(entry.get('runs', []))} runs"
                f"{' ERROR ' + entry['error'][-200:] if 'error' in entry else ''} ({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    partial.rename(path)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB) in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
