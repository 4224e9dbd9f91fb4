"""`make lab-test`: brings up every lab scenario and checks that the emulated paths behave as
configured: RTTs, ECMP clusters per flow, ECMP members as traceroute hops, throughput
against min(rate, window/RTT), the policer, loss rates and live changes. Prints one table,
configured against measured, and exits non-zero when a bound is missed."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from .lab import LAB_BIN, SCENARIOS, Lab, flow_rtts, icmp_errors_unlimited, iperf3, lab_up, ping, traceroute

RTT_TOLERANCE_MS = 0.5
# Rates and paced loss depend on the emulator being scheduled on time; on two cores shared
# with iperf3 a stall now and then drops a paced burst. A rate check passes when one of
# this many runs meets its bound, and the table says which attempt did.
MEASUREMENT_ATTEMPTS = 3
# CPU steal (time the hypervisor gave to other guests) above which a failed rate, loss or
# cluster check is not judged; see record_attempts.
STEAL_LIMIT_PERCENT = 10.0
T = TypeVar("T")
# What the emulator carries on this 2-core machine with iperf3 on both ends (see `make
# lab-bench`). A window ceiling above it cannot be reproduced, so it is shown, not asserted.
EMULATOR_CAPACITY_MBPS = 3000


@dataclass
class Row:
    scenario: str
    check: str
    configured: str
    measured: str
    bound: str
    ok: bool
    asserted: bool = True
    # Not judged: the least CPU steal any attempt of a failed measurement saw, when that
    # starved the emulator (see record_attempts).
    starved_steal_percent: float | None = None


ROWS: list[Row] = []


def record(
    scenario: str,
    check: str,
    configured: str,
    measured: str,
    bound: str,
    ok: bool,
    asserted: bool = True,
    starved_steal_percent: float | None = None,
) -> None:
    row = Row(scenario, check, configured, measured, bound, ok, asserted, starved_steal_percent)
    ROWS.append(row)
    status = ("PASS" if ok else "FAIL") if asserted else ("STARVED" if not_judged(row) else "SHOW")
    print(f"  {status}  {check}: configured {configured}, measured {measured} ({bound})", flush=True)


def cpu_times() -> list[int]:
    """user nice system idle iowait irq softirq steal, summed over CPUs (jiffies)."""
    with open("/proc/stat") as stat:
        return [int(field) for field in stat.readline().split()[1:9]]


@dataclass(frozen=True)
class CpuShares:
    """Percent of all CPU time between two cpu_times() readings."""

    busy: float
    iowait: float
    steal: float


def cpu_shares(before: list[int], after: list[int]) -> CpuShares:
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta) or 1
    return CpuShares(
        busy=100 * (total - delta[3] - delta[4]) / total, iowait=100 * delta[4] / total, steal=100 * delta[7] / total
    )


def check_rtt(scenario: str, lab: Lab, source: str, destination: str, expected_ms: list[float]) -> None:
    measured, _, received = ping(lab, source, destination)
    nearest = min(expected_ms, key=lambda e: abs(e - measured))
    record(
        scenario,
        f"ping min RTT {source}->{destination}",
        " or ".join(f"{e:g} ms" for e in expected_ms),
        f"{measured:.3f} ms",
        f"within {RTT_TOLERANCE_MS} ms",
        received > 0 and abs(measured - nearest) <= RTT_TOLERANCE_MS,
    )


def check_flow_clusters(scenario: str, lab: Lab, source: str, destination: str, expected_ms: list[float]) -> None:
    """Every flow's fastest handshake sits within the tolerance of one member's RTT, and every
    member is seen. The minimum, not the median: the configured delay is the floor, and a
    stalled emulator or Python only ever adds to it."""

    def measure() -> tuple[dict[float, list[float]], list[float], int]:
        per_flow = [min(values) for values in flow_rtts(lab, source, destination).values()]
        clusters: dict[float, list[float]] = {e: [] for e in expected_ms}
        stray = []
        for value in per_flow:
            nearest = min(expected_ms, key=lambda e: abs(e - value))
            if abs(value - nearest) <= RTT_TOLERANCE_MS:
                clusters[nearest].append(value)
            else:
                stray.append(value)
        return clusters, stray, len(per_flow)

    def within(measured: tuple[dict[float, list[float]], list[float], int]) -> bool:
        return not measured[1] and all(measured[0].values())

    attempts = first_passing(measure, within)
    clusters, stray, flows = attempts.value
    summary = ", ".join(
        f"{len(v)} flows at {statistics.median(v):.2f} ms" if v else f"none at {e:g} ms" for e, v in clusters.items()
    )
    if stray:
        summary += f", {len(stray)} outside ({', '.join(f'{s:.2f}' for s in stray[:4])})"
    record_attempts(
        scenario,
        f"per-flow RTT clusters {source}->{destination} ({flows} flows)",
        " and ".join(f"{e:g} ms" for e in expected_ms),
        summary,
        f"each flow within {RTT_TOLERANCE_MS} ms of a member, every member seen",
        within(attempts.value),
        attempts,
    )


def check_traceroute_members(
    scenario: str, lab: Lab, source: str, destination: str, link: str, flows: int = 32
) -> None:
    """traceroute from one UDP source port per flow: the first hops over all flows are exactly
    the ECMP members' routers (each hop's RTT is its member's), then the destination."""
    routers = lab.routers(link)[0]
    first_hops: dict[str, list[float]] = {}
    unreached = []
    with icmp_errors_unlimited(lab, destination):
        for sport in range(41000, 41000 + flows):
            hops = traceroute(lab, source, destination, sport) or [("no output", math.nan)]
            first_hops.setdefault(hops[0][0], []).append(hops[0][1])
            if len(hops) != 2 or hops[-1][0] != lab.addresses[destination]:
                unreached.append(f"{sport}: {' '.join(address for address, _ in hops)}")
    seen = ", ".join(
        f"{address} ({len(rtts)} flows, {statistics.median(rtts):.2f} ms)"
        for address, rtts in sorted(first_hops.items())
    )
    record(
        scenario,
        f"traceroute {source}->{destination}: first hops over {flows} UDP flows",
        f"member routers {', '.join(routers)}, then {lab.addresses[destination]}",
        f"{seen}; destination at hop 2 in {flows - len(unreached)} of {flows}"
        + (f" (not: {'; '.join(unreached[:3])})" if unreached else ""),
        "first hops = member routers, destination at hop 2",
        set(first_hops) == set(routers) and not unreached,
    )


def check_traceroute_direct(scenario: str, lab: Lab, source: str, destination: str, flows: int = 4) -> None:
    """Without ECMP a link is no router hop: the destination is hop 1, whatever the flow."""
    with icmp_errors_unlimited(lab, destination):
        paths = {
            tuple(address for address, _ in traceroute(lab, source, destination, sport))
            for sport in range(41000, 41000 + flows)
        }
    record(
        scenario,
        f"traceroute {source}->{destination} (no ECMP) over {flows} UDP flows",
        f"{lab.addresses[destination]} at hop 1",
        "; ".join(" ".join(path) for path in sorted(paths)),
        "destination is hop 1",
        paths == {(lab.addresses[destination],)},
    )


def steady_rate_bps(result: dict[str, object]) -> float:
    end = result["end"]
    assert isinstance(end, dict)
    received = end["sum_received"]
    assert isinstance(received, dict)
    return float(received["bits_per_second"])


def sender_stats(result: dict[str, object]) -> dict[str, float]:
    end = result["end"]
    assert isinstance(end, dict)
    sender: dict[str, float] = end["streams"][0]["sender"]
    return sender


@dataclass
class Attempts(Generic[T]):
    """A measurement's first passing run (or its last), which attempt that was, and the least
    CPU steal the hypervisor took during any attempt."""

    value: T
    number: int
    least_steal_percent: float

    def suffix(self) -> str:
        return f" (attempt {self.number})" if self.number > 1 else ""


def first_passing(measure: Callable[[], T], passes: Callable[[T], bool]) -> Attempts[T]:
    """The first of up to MEASUREMENT_ATTEMPTS measurements that passes, or the last one."""
    least_steal, attempt, before = 100.0, 1, cpu_times()
    while True:
        value = measure()
        after = cpu_times()
        least_steal = min(least_steal, cpu_shares(before, after).steal)
        if passes(value) or attempt == MEASUREMENT_ATTEMPTS:
            return Attempts(value, attempt, least_steal)
        attempt, before = attempt + 1, after


def measured_once(measure: Callable[[], T]) -> Attempts[T]:
    """One measurement, for a check that is shown, not judged: retrying it proves nothing."""
    return first_passing(measure, lambda _: True)


def record_attempts(
    scenario: str,
    check: str,
    configured: str,
    measured: str,
    bound: str,
    ok: bool,
    attempts: Attempts[T],
    paced: bool = False,
) -> None:
    """Records a retried measurement. One that failed in every attempt while the hypervisor
    took at least STEAL_LIMIT_PERCENT of the CPU is shown, not judged: the emulator paces
    packets in user space, and a starved emulator measures the machine, not the scenario."""
    starved = not ok and attempts.least_steal_percent >= STEAL_LIMIT_PERCENT
    if starved:
        bound = f"not judged: steal >= {attempts.least_steal_percent:.0f} % in every attempt; {bound}"
    elif paced:
        # Pacing just under a policer or a 32 KB queue leaves the emulator about 3 ms of
        # slack; on this 2-core VM it misses that now and then even without steal (CI,
        # 2026-11-23: 1.7 % lost, 52 of 95 Mbit/s). Shown; the unpaced checks carry the seeds.
        bound = f"shown, needs the emulator on time within ~3 ms; {bound}"
    record(
        scenario,
        check,
        configured,
        measured + attempts.suffix(),
        bound,
        ok,
        asserted=not (starved or paced),
        starved_steal_percent=attempts.least_steal_percent if starved else None,
    )


def check_throughput(
    scenario: str,
    lab: Lab,
    source: str,
    destination: str,
    rate_mbps: float | None,
    *options: str,
    paced: bool = False,
) -> None:
    """Steady throughput (slow start omitted) against min(rate, window/RTT), where the window
    is the largest the receiver advertised (max_snd_wnd, per stream) and the RTT the path's
    minimum (ping), since TCP's own RTT includes the queue it builds."""
    path_rtt_ms, _, _ = ping(lab, source, destination, count=10)
    min_rtt_s = path_rtt_ms / 1000

    def measure() -> tuple[float, float, float, float]:
        """Measured rate, ceiling, window and the window's rate, from one iperf3 run."""
        result = iperf3(lab, source, destination, *options)
        end = result["end"]
        streams = len(end["streams"]) if isinstance(end, dict) else 1
        window = float(sender_stats(result).get("max_snd_wnd", 0)) * streams
        window_mbps = window * 8 / min_rtt_s / 1e6 if window and min_rtt_s else math.inf
        return steady_rate_bps(result) / 1e6, min(rate_mbps or math.inf, window_mbps), window, window_mbps

    def within(run: tuple[float, float, float, float]) -> bool:
        return run[1] > EMULATOR_CAPACITY_MBPS or abs(run[0] - run[1]) <= 0.10 * run[1]

    attempts = measured_once(measure) if paced else first_passing(measure, within)
    measured, ceiling, window, window_mbps = attempts.value
    limit = "rate" if rate_mbps is not None and rate_mbps <= window_mbps else "window"
    check = f"TCP throughput {source}->{destination}{' ' + ' '.join(options) if options else ''}"
    details = f"{limit}: wnd {window / 1024:.0f} KiB, min RTT {min_rtt_s * 1000:.2f} ms" + (
        f", rate {rate_mbps:g}" if rate_mbps else ""
    )
    if ceiling > EMULATOR_CAPACITY_MBPS:
        details += f"; above the emulator's {EMULATOR_CAPACITY_MBPS} Mbit/s, not asserted"
    configured = f"{ceiling:.1f} Mbit/s ({details})"
    if ceiling > EMULATOR_CAPACITY_MBPS:
        record(scenario, check, configured, f"{measured:.1f} Mbit/s", "within 10 %", True, asserted=False)
        return
    ok = within(attempts.value)
    record_attempts(scenario, check, configured, f"{measured:.1f} Mbit/s", "within 10 %", ok, attempts, paced)


def check_policer(scenario: str, lab: Lab, source: str, destination: str, policed_mbps: float) -> None:
    tcp = steady_rate_bps(iperf3(lab, source, destination, seconds=8, omit=2)) / 1e6
    record(
        scenario,
        f"TCP through the policer {source}->{destination}",
        f"policer {policed_mbps:g} Mbit/s",
        f"{tcp:.1f} Mbit/s",
        "below half the policed rate",
        tcp < policed_mbps / 2,
    )
    target = 0.9 * policed_mbps

    def paced_loss_percent() -> float:
        udp = iperf3(
            lab, source, destination, "-u", "-b", f"{target}M", "-l", "1400", "--pacing-timer", "100", seconds=6, omit=0
        )
        end = udp["end"]
        assert isinstance(end, dict)
        return float(end["sum"]["lost_percent"])

    attempts = measured_once(paced_loss_percent)
    record_attempts(
        scenario,
        f"UDP paced at 90 % of the policer {source}->{destination}",
        f"{target:g} Mbit/s, head-end loss 0.05 %",
        f"{attempts.value:.3f} % lost",
        "nearly lossless (< 1 %)",
        attempts.value < 1,
        attempts,
        paced=True,
    )


def check_loss(scenario: str, lab: Lab, source: str, destination: str, link: str, loss: float) -> None:
    def measure() -> tuple[int, int]:
        """Packets sent and lost by one paced UDP run while the link drops `loss` of them."""
        lab.set(link, a_to_b__loss=loss)
        try:
            udp = iperf3(lab, source, destination, "-u", "-b", "40M", "-l", "1000", seconds=5, omit=0)
        finally:
            lab.set(link, a_to_b__loss=0)
        end = udp["end"]
        assert isinstance(end, dict)
        return int(end["sum"]["packets"]), int(end["sum"]["lost_packets"])

    def within(run: tuple[int, int]) -> bool:
        total, lost = run
        return abs(lost - total * loss) <= 4 * math.sqrt(total * loss * (1 - loss))

    # A stalled emulator drops more than it was told to (its queue overflows), never fewer.
    attempts = first_passing(measure, within)
    total, lost = attempts.value
    expected = total * loss
    sigma = math.sqrt(total * loss * (1 - loss))
    record_attempts(
        scenario,
        f"random loss {source}->{destination} (set {link} a_to_b.loss={loss})",
        f"{loss * 100:g} % of {total} packets = {expected:.0f}",
        f"{lost} lost",
        f"within 4 sigma ({4 * sigma:.0f})",
        within(attempts.value),
        attempts,
    )


def check_set_latency(scenario: str, lab: Lab, source: str, destination: str, link: str, delay_ms: float) -> None:
    """Pings every 20 ms while `set` changes the delay; the first reply with the new RTT
    must come within a second of the command."""
    pinger = lab.spawn(
        source, "ping", "-n", "-D", "-i", "0.02", "-c", "150", "-I", lab.addresses[source], lab.addresses[destination]
    )
    time.sleep(1.0)
    changed_at = time.time()
    threading.Thread(target=lambda: lab.set(link, delay_ms=delay_ms)).start()
    out, _ = pinger.communicate(timeout=30)
    new_rtt = 2 * delay_ms
    first = None
    for line in out.splitlines():
        match = re.match(r"\[(\d+\.\d+)\].*time=([\d.]+) ms", line)
        if match and abs(float(match.group(2)) - new_rtt) < 2 and float(match.group(1)) >= changed_at:
            first = float(match.group(1)) - changed_at
            break
    record(
        scenario,
        f"`fathom-lab set {link} delay_ms={delay_ms:g}` takes effect",
        f"RTT {new_rtt:g} ms",
        "never" if first is None else f"first new RTT after {first * 1000:.0f} ms",
        "within 1 s",
        first is not None and first <= 1.0,
    )


def single_path(lab: Lab) -> None:
    name = "single-path"
    check_rtt(name, lab, "west", "east", [40])
    check_flow_clusters(name, lab, "west", "east", [40])
    check_throughput(name, lab, "west", "east", 200)
    check_loss(name, lab, "west", "east", "wan", 0.01)
    check_set_latency(name, lab, "west", "east", "wan", 30)


def grnet_ecmp(lab: Lab) -> None:
    name = "grnet-ecmp"
    check_rtt(name, lab, "dca", "dcb", [7.8, 11.9])
    check_rtt(name, lab, "dca", "dcc", [8])
    check_flow_clusters(name, lab, "dca", "dcb", [7.8, 11.9])
    check_flow_clusters(name, lab, "dca", "dcc", [8])
    check_traceroute_members(name, lab, "dca", "dcb", "ab")
    check_traceroute_direct(name, lab, "dcb", "dca")
    check_throughput(name, lab, "dca", "dcb", None)


def grnet_ecmp_tuned(lab: Lab) -> None:
    name = "grnet-ecmp-tuned"
    check_rtt(name, lab, "dca", "dcb", [7.8, 11.9])
    check_throughput(name, lab, "dca", "dcb", None)


def slac_uvic(lab: Lab) -> None:
    name = "slac-uvic"
    check_rtt(name, lab, "slac", "uvic", [65])
    check_throughput(name, lab, "slac", "uvic", 300)
    check_throughput(name, lab, "slac", "uvic", 300, "-P", "8")


def tigo_jive(lab: Lab) -> None:
    name = "tigo-jive"
    check_rtt(name, lab, "tigo", "jive", [310])
    check_policer(name, lab, "tigo", "jive", 90)


def fast_to_slow(lab: Lab) -> None:
    name = "fast-to-slow"
    check_rtt(name, lab, "fast", "slow", [36])
    unpaced = steady_rate_bps(iperf3(lab, "fast", "slow")) / 1e6
    record(
        name,
        "unpaced TCP fast->slow into the shallow queue",
        "bottleneck 100 Mbit/s, queue 32 KB",
        f"{unpaced:.1f} Mbit/s",
        "below 80 % of the bottleneck",
        unpaced < 80,
    )
    # Paced 5 % under the bottleneck into a 32 KB queue, the emulator has about 3 ms of slack:
    # one stall on two busy cores drops a burst and CUBIC halves. Shown, not asserted.
    check_throughput(name, lab, "fast", "slow", 95, "--fq-rate", "95M", paced=True)


def transatlantic(lab: Lab) -> None:
    name = "transatlantic"
    check_rtt(name, lab, "geneva", "ny6", [148])
    check_throughput(name, lab, "geneva", "ny6", 2000)
    check_throughput(name, lab, "geneva", "ny16", 2000)


def demo(lab: Lab) -> None:
    name = "demo"
    for source, destination, expected in (
        ("frankfurt", "athens", [7.8, 11.9]),
        ("frankfurt", "geneva", [9.0]),
        ("athens", "geneva", [38.0]),
        ("geneva", "newyork", [148.0]),
        ("frankfurt", "newyork", [84.0]),
        ("athens", "newyork", [122.0]),
    ):
        check_rtt(name, lab, source, destination, expected)
    check_flow_clusters(name, lab, "frankfurt", "athens", [7.8, 11.9])
    check_traceroute_members(name, lab, "frankfurt", "athens", "fa")


SCENARIO_CHECKS: dict[str, Callable[[Lab], None]] = {
    "single-path": single_path,
    "grnet-ecmp": grnet_ecmp,
    "grnet-ecmp-tuned": grnet_ecmp_tuned,
    "slac-uvic": slac_uvic,
    "tigo-jive": tigo_jive,
    "fast-to-slow": fast_to_slow,
    "transatlantic": transatlantic,
    "demo": demo,
}


def lifecycle() -> None:
    """Two labs of one scenario run side by side; a killed emulator leaves nothing after
    `down`; a second `up` in the same state directory is refused while the first runs."""
    name = "lifecycle"
    scenario = str(SCENARIOS / "single-path.yaml")
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        lab = [str(LAB_BIN)]
        try:
            subprocess.run([*lab, "up", "--state-dir", first, scenario], check=True, capture_output=True)
            subprocess.run([*lab, "up", "--state-dir", second, scenario], check=True, capture_output=True)
            both = len(leftover_namespaces())
            again = subprocess.run([*lab, "up", "--state-dir", first, scenario], capture_output=True, text=True)
            record(
                name,
                "two labs of one scenario side by side; a busy state dir refused",
                "4 namespaces, second up refused",
                f"{both} namespaces, second up exit {again.returncode}: {again.stderr.strip()[-60:]}",
                "distinct prefixes, clear refusal",
                both == 4 and again.returncode == 1 and "already up" in again.stderr,
            )
            pid = json.loads((Path(first) / "state.json").read_text())["pid"]
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.3)
            subprocess.run([*lab, "down", "--state-dir", first], check=True, capture_output=True)
            left = len(leftover_namespaces())
            record(
                name,
                "emulator killed with SIGKILL, then `down`",
                "its 2 namespaces removed, the other lab's 2 kept",
                f"{left} namespaces left",
                "exactly the other lab's",
                left == 2,
            )
        finally:
            subprocess.run([*lab, "down", "--state-dir", first], capture_output=True)
            subprocess.run([*lab, "down", "--state-dir", second], capture_output=True)


def leftover_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if re.match(r"fl[0-9a-f]{4}-", line)]


def not_judged(row: Row) -> bool:
    return row.starved_steal_percent is not None


def verdict(row: Row) -> str:
    if row.starved_steal_percent is not None:
        return f"NOT JUDGED (steal >= {row.starved_steal_percent:.0f} % in every attempt)"
    if not row.asserted:
        return "shown"
    return "yes" if row.ok else f"NO ({row.bound})"


def machine_row(start: list[int], load_at_start: str) -> None:
    """What the machine gave the lab: every rate check depends on the emulator being
    scheduled on time, so a CI log must show whether other work or a hypervisor took the CPU."""
    shares = cpu_shares(start, cpu_times())
    record(
        "all",
        "the machine while the lab ran",
        f"{os.cpu_count()} CPUs, load {load_at_start} before the first scenario",
        f"busy {shares.busy:.0f} %, steal {shares.steal:.1f} %, iowait {shares.iowait:.1f} %",
        "context for the rate checks",
        True,
        asserted=False,
    )


def main(names: list[str]) -> int:
    started = cpu_times()
    with open("/proc/loadavg") as loadavg:
        load_at_start = " ".join(loadavg.read().split()[:3])
    if not names:
        lifecycle()
    for name in names or list(SCENARIO_CHECKS):
        print(f"== {name}", flush=True)
        try:
            with lab_up(name) as lab:
                SCENARIO_CHECKS[name](lab)
        # One broken scenario must not hide the others' results.
        except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
            record(name, "scenario ran", "all checks", f"error: {error}", "no error", False)
    machine_row(started, load_at_start)
    left = leftover_namespaces()
    record("all", "nothing left behind", "no lab namespaces", ", ".join(left) or "none", "none", not left)

    headers = ("scenario", "check", "configured", "measured")
    widths = [max(len(h), *(len(getattr(r, h)) for r in ROWS)) for h in headers]
    print()
    print("  ".join(f"{h:<{w}}" for h, w in zip(headers, widths, strict=True)) + "  ok")
    for r in ROWS:
        print(
            f"{r.scenario:<{widths[0]}}  {r.check:<{widths[1]}}  {r.configured:<{widths[2]}}  "
            f"{r.measured:<{widths[3]}}  {verdict(r)}"
        )
    failed = sum(r.asserted and not r.ok for r in ROWS)
    starved = sum(not_judged(r) for r in ROWS)
    shown = sum(not r.asserted for r in ROWS) - starved
    print(
        f"lab checks: {len(ROWS) - failed - shown - starved} passed, {failed} failed, {shown} shown without a bound,"
        f" {starved} not judged (the machine was starved: steal >= {STEAL_LIMIT_PERCENT:g} %)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
