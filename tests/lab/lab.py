"""Drives fathom-lab from Python: bring a scenario up, run commands in its hosts, change a
link, and always tear down."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
LAB_BIN = ROOT / "agents" / "bin" / "fathom-lab"
SCENARIOS = ROOT / "deploy" / "lab" / "scenarios"
# The root namespace's address on the lab's management bridge (fathom-lab up --management).
MANAGEMENT_ADDRESS = "198.19.0.1"


# `fathom-lab up` and `down` wait for the root-change lock a browser test holds while a spec
# runs (up to 120 s; root_change_lock_shared), then take seconds.
LAB_CHANGE_TIMEOUT_S = 250
ROOT_LOCK = Path(os.environ.get("FATHOM_LAB_ROOT_LOCK", "/run/lock/fathom-lab-root.lock"))


@contextmanager
def root_changes_held_off() -> Iterator[None]:
    """Holds the lab's root-change lock shared for the block: no lab comes up or goes down
    meanwhile, so the root namespace's interfaces and addresses stay as they are (Chromium
    aborts requests in flight when they change; agents/internal/lab/topo/rootlock.go). Where
    the lock file cannot be opened, the block runs without it."""
    try:
        handle = ROOT_LOCK.open("a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield


def lab_command(verb: str, state_dir: str | Path, *args: str) -> list[str]:
    """A fathom-lab command line for the lab whose state is in state_dir."""
    return [str(LAB_BIN), verb, "--state-dir", str(state_dir), *args]


def lab_state(state_dir: str | Path) -> dict[str, Any]:
    """What `fathom-lab up` wrote about a running lab (its emulator's pid, ECMP routers)."""
    state: dict[str, Any] = json.loads((Path(state_dir) / "state.json").read_text())
    return state


@dataclass(frozen=True)
class Lateness:
    """Departures counted by how late the emulator sent them against their schedule:
    counts[i] no later than bounds_us[i] µs, the last count later than every bound."""

    bounds_us: tuple[int, ...]
    counts: tuple[int, ...]

    def __sub__(self, earlier: Lateness) -> Lateness:
        return Lateness(self.bounds_us, tuple(a - b for a, b in zip(self.counts, earlier.counts, strict=True)))

    def __add__(self, other: Lateness) -> Lateness:
        return Lateness(self.bounds_us, tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)))

    def later_than(self, bound_us: int) -> int:
        """Departures later than bound_us (one of the bounds; none counted without bounds)."""
        if not self.bounds_us:
            return 0
        return sum(self.counts[self.bounds_us.index(bound_us) + 1 :])

    def share_later_than(self, bound_us: int) -> float:
        total = sum(self.counts)
        return self.later_than(bound_us) / total if total else 0.0

    def describe(self) -> str:
        total = sum(self.counts)
        return (
            f"emulator: {self.later_than(1000)} of {total} departures >1 ms late, {self.later_than(3000)} >3 ms"
            f" ({self.later_than(300)} >0.3 ms)"
        )


def sum_lateness(parts: Iterable[Lateness]) -> Lateness:
    """Several links' (or spans') departures counted together; no departures without parts."""
    total: Lateness | None = None
    for part in parts:
        total = part if total is None else total + part
    return total if total is not None else Lateness((), (0,))


@dataclass
class Lab:
    scenario: dict[str, Any]
    state_dir: Path
    addresses: dict[str, str]
    # The hosts' IPv6 addresses (those with an IPv6 link), and which routers the checks see:
    # "routers" for IPv4, "routers6" for the view that ipv6() gives.
    addresses6: dict[str, str] = field(default_factory=dict)
    routers_key: str = "routers"

    def ipv6(self) -> Lab:
        """The same lab seen over IPv6: every check then pings, traces and sends to the
        hosts' IPv6 addresses, and expects the members' IPv6 routers."""
        return replace(self, addresses=self.addresses6, routers_key="routers6")

    def exec(self, host: str, *command: str, timeout: float = 120) -> str:
        run = subprocess.run(
            lab_command("exec", self.state_dir, host, "--", *command),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if run.returncode != 0:
            raise RuntimeError(f"{host}: {' '.join(command)} failed ({run.returncode}): {run.stderr.strip()[-500:]}")
        return run.stdout

    def spawn(self, host: str, *command: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            lab_command("exec", self.state_dir, host, "--", *command),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def set(self, link: str, **values: float) -> None:
        pairs = [f"{key.replace('__', '.')}={value}" for key, value in values.items()]
        subprocess.run(lab_command("set", self.state_dir, link, *pairs), check=True, capture_output=True)

    def lateness(self, links: Collection[str] | None = None) -> Lateness:
        """The emulator's departures so far, by how late they left, summed over `links` (every
        link by default)."""
        by_link = self.lateness_by_link()
        return sum_lateness(late for link, late in by_link.items() if links is None or link in links)

    def lateness_by_link(self) -> dict[str, Lateness]:
        """The emulator's departures so far, by how late they left, for each link (both
        directions, ECMP members included)."""
        out = subprocess.run(lab_command("stats", self.state_dir, "--json"), check=True, capture_output=True, text=True)
        body = json.loads(out.stdout)
        bounds = tuple(int(bound) for bound in body["late_bounds_us"])
        counts: dict[str, list[int]] = {}
        for direction in body["stats"]:
            link = counts.setdefault(direction["link"], [0] * (len(bounds) + 1))
            for index, count in enumerate(direction["counters"].get("Late") or []):
                link[index] += int(count)
        return {link: Lateness(bounds, tuple(link_counts)) for link, link_counts in counts.items()}

    def routers(self, link: str) -> tuple[list[str], list[str]]:
        """The router addresses of a link's ECMP members, a->b and b->a (empty without ECMP)."""
        a_to_b, b_to_a = lab_state(self.state_dir).get(self.routers_key, {}).get(link, [[], []])
        return list(a_to_b), list(b_to_a)

    def host_sysctl(self, host: str, key: str) -> str | None:
        for spec in self.scenario["hosts"]:
            if spec["name"] == host:
                value = (spec.get("sysctls") or {}).get(key)
                return str(value) if value is not None else None
        return None


@contextmanager
def lab_up(name_or_path: str | Path, env: dict[str, str] | None = None, management: bool = False) -> Iterator[Lab]:
    """A scenario by name (deploy/lab/scenarios/NAME.yaml) or path, up for the block. With
    management, every host also reaches the root namespace at MANAGEMENT_ADDRESS (agents
    talk to the server that way; probes still take the emulated links)."""
    path = Path(name_or_path) if isinstance(name_or_path, Path) else SCENARIOS / f"{name_or_path}.yaml"
    scenario = yaml.safe_load(path.read_text())
    with tempfile.TemporaryDirectory(prefix="fathom-lab-") as tmp:
        state = Path(tmp)
        up = subprocess.run(
            lab_command("up", tmp, *(["--management"] if management else []), str(path)),
            capture_output=True,
            text=True,
            timeout=LAB_CHANGE_TIMEOUT_S,
            env={**os.environ, **(env or {})},
        )
        if up.returncode != 0:
            raise RuntimeError(f"fathom-lab up {path.name}: {up.stderr.strip()}")
        try:
            hosts = subprocess.run(lab_command("hosts", tmp), check=True, capture_output=True, text=True).stdout
            # "NAME ADDRESS [MANAGEMENT-ADDRESS]" per host
            addresses = {line.split()[0]: line.split()[1] for line in hosts.splitlines() if line.strip()}
            addresses6 = {h["name"]: h["address6"] for h in lab_state(state)["hosts"] if h.get("address6")}
            yield Lab(scenario, state, addresses, addresses6)
        finally:
            subprocess.run(lab_command("down", tmp), capture_output=True, timeout=LAB_CHANGE_TIMEOUT_S)


PING_SUMMARY = re.compile(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
PING_LOSS = re.compile(r"(\d+) packets transmitted, (\d+) received")


def ping(lab: Lab, source: str, destination: str, count: int = 20, interval: float = 0.05) -> tuple[float, int, int]:
    """Min RTT in ms, packets sent and received."""
    out = lab.exec(
        source,
        "ping", "-n", "-q", "-c", str(count), "-i", str(interval), "-W", "2",
        "-I", lab.addresses[source], lab.addresses[destination],
    )  # fmt: skip
    summary, loss = PING_SUMMARY.search(out), PING_LOSS.search(out)
    if summary is None or loss is None:
        raise RuntimeError(f"unreadable ping output: {out}")
    return float(summary.group(1)), int(loss.group(1)), int(loss.group(2))


PING_REPLY = re.compile(r"^(?:\[(\d+\.\d+)\])?.*time=([\d.]+) ms", re.MULTILINE)


def ping_replies(out: str) -> list[tuple[float, float]]:
    """(when it came as Unix time, from `ping -D`, else nan; RTT in ms) per reply in the
    output of a ping without -q."""
    return [(float(m.group(1) or "nan"), float(m.group(2))) for m in PING_REPLY.finditer(out)]


TRACEROUTE_HOP = re.compile(r"^\s*(\d+)\s+(\S+)(?:\s+([\d.]+) ms)?", re.MULTILINE)


def traceroute(lab: Lab, source: str, destination: str, sport: int, max_hops: int = 5) -> list[tuple[str, float]]:
    """Debian's traceroute with UDP probes from one source port to one destination port, so
    that all its probes are one flow, which ECMP keeps on one member. (address, RTT in ms)
    per hop; ("*", nan) for a hop that did not answer."""
    out = lab.exec(
        source,
        "traceroute", "-n", "-U", "-p", "33434", f"--sport={sport}", "-q", "1", "-w", "1", "-m", str(max_hops),
        "-s", lab.addresses[source], lab.addresses[destination],
    )  # fmt: skip
    return [(m.group(2), float(m.group(3) or "nan")) for m in TRACEROUTE_HOP.finditer(out)]


@contextmanager
def icmp_errors_unlimited(lab: Lab, host: str) -> Iterator[None]:
    """Lifts a host's ICMP error rate limit for the block. Linux sends a peer a burst of 6
    errors, then one a second (net.ipv4.icmp_ratelimit, per namespace; IPv6's
    net.ipv6.icmp.ratelimit likewise), so traceroutes in quick succession would see the
    destination's port unreachable as "*" from the 7th on."""
    keys = ["net.ipv4.icmp_ratelimit", "net.ipv6.icmp.ratelimit"]
    old = {key: lab.exec(host, "sysctl", "-n", key).strip() for key in keys}
    for key in keys:
        lab.exec(host, "sysctl", "-q", "-w", f"{key}=0")
    try:
        yield
    finally:
        for key in keys:
            lab.exec(host, "sysctl", "-q", "-w", f"{key}={old[key]}")


# iperf3 sends a UDP test's stream handshake once and never again (esnet/iperf#862): one lost
# datagram fails the run with this error after 30 s, before any data went out. Over the
# tigo-jive head-end's 0.05 % loss that happened once in a CI run; such a run is run again.
UDP_HANDSHAKE_LOST = "unable to read from stream socket"


def iperf3(lab: Lab, client: str, server: str, *options: str, seconds: int = 8, omit: int = 3) -> dict[str, Any]:
    """Runs iperf3 from client to server and returns its JSON."""
    result = iperf3_once(lab, client, server, *options, seconds=seconds, omit=omit)
    if "-u" in options and UDP_HANDSHAKE_LOST in str(result.get("error", "")):
        result = iperf3_once(lab, client, server, *options, seconds=seconds, omit=omit)
    if "error" in result:
        raise RuntimeError(f"iperf3: {result['error']}")
    return result


def iperf3_once(lab: Lab, client: str, server: str, *options: str, seconds: int, omit: int) -> dict[str, Any]:
    address = lab.addresses[server]
    wait_for_port(lab, server, 5201, listening=False)  # the previous one-off server has exited
    lab.exec(server, "iperf3", "-s", "-D", "-1", "-B", address)
    wait_for_port(lab, server, 5201, listening=True)
    out = lab.exec(
        client,
        "iperf3", "-c", address, "-B", lab.addresses[client], "-J", "-t", str(seconds), "-O", str(omit), *options,
        "--connect-timeout", "3000",
        timeout=seconds + omit + 60,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out)
    return result


def iperf3_end(result: dict[str, Any]) -> dict[str, Any]:
    """The summary at the end of iperf3's JSON: totals and each stream's sender figures."""
    end = result["end"]
    assert isinstance(end, dict)
    return end


def steady_rate_bps(result: dict[str, Any]) -> float:
    """What the receiver got, in bits per second, the omitted slow start (-O) left out."""
    received = iperf3_end(result)["sum_received"]
    assert isinstance(received, dict)
    return float(received["bits_per_second"])


def sender_stats(result: dict[str, Any]) -> dict[str, float]:
    """The first stream's sender figures (max_snd_wnd: the largest window the receiver offered)."""
    sender: dict[str, float] = iperf3_end(result)["streams"][0]["sender"]
    return sender


def wait_for_port(lab: Lab, host: str, port: int, listening: bool, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if bool(lab.exec(host, "ss", "-Hltn", f"sport = :{port}").strip()) == listening:
            return
        time.sleep(0.05)
    raise RuntimeError(f"{host}: port {port} {'never listened' if listening else 'still listening'} after {timeout} s")


FLOW_RTT_SCRIPT = """
import json, socket, sys, time
src, dst, port, flows, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
samples = {p: [] for p in range(41000, 41000 + flows)}
for _ in range(rounds):
    for p in samples:  # round-robin, so a slow moment touches every flow alike
        s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, bytes(8))  # RST on close: no TIME_WAIT
        s.bind((src, p))
        t0 = time.perf_counter()
        s.connect((dst, port))
        samples[p].append((time.perf_counter() - t0) * 1000)
        s.close()
print(json.dumps(samples))
"""


def flow_rtts(lab: Lab, source: str, destination: str, flows: int = 32, rounds: int = 10) -> dict[int, list[float]]:
    """TCP handshake time per source port: each port is a flow that ECMP hashes on its own."""
    listener = lab.spawn(destination, "python3", "-c", LISTENER_SCRIPT, lab.addresses[destination], "7001")
    try:
        assert listener.stdout is not None
        listener.stdout.readline()  # "ready"
        out = lab.exec(
            source, "python3", "-c", FLOW_RTT_SCRIPT,
            lab.addresses[source], lab.addresses[destination], "7001", str(flows), str(rounds),
        )  # fmt: skip
    finally:
        listener.kill()
        listener.wait()
    return {int(port): values for port, values in json.loads(out).items()}


LISTENER_SCRIPT = """
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1024)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.close()
"""
