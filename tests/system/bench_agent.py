"""`make bench-agent` (issue 17): the agent's footprint, each figure beside its target, in one
table: binary size, idle RSS and CPU, and RSS during a throughput test.

The system tests' stack (gunicorn, Celery, the private PostgreSQL and Redis) with its two
real enrolled agents on loopback: sys-a on 127.0.0.2 and sys-b on 127.0.0.3, each with its own
iperf3 port. Figures come from /proc: VmRSS and VmHWM from status, CPU from stat as the
CPU-seconds the agent consumed (utime + stime), not wall time, so a busy shared machine does
not inflate them.

- Idle: for FATHOM_BENCH_AGENT_IDLE_S (60 s) both agents only poll their plan (every 5 s,
  the stack's setting; the default is 30 s) and ping each other (10 packets every 10 s): a
  busier idle than a default deployment's. Each idle figure is the larger of the two agents'.
- Throughput: a mesh plans one 20 s iperf3 test sys-a -> sys-b. Both agents' and their
  children's VmHWM are reset first, so each peak is the test's. An agent's peak is the larger
  of its VmHWM at the end and its VmRSS sampled every 0.2 s (the kernel updates the high
  water mark lazily: a sample can exceed it); a child's is its VmHWM, sampled as often, since
  an exited child's is gone.

At the end the agents get SIGTERM; any child of theirs still running is counted and killed.

    make bench-agent
    FATHOM_BENCH_AGENT_IDLE_S=300 make bench-agent   # a longer idle window
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packages.elf import is_static

from .conftest import AGENT_BIN, ARTIFACTS, Agent, Stack, stop_process, wait_for
from .lab_agents import apply_meshes

IDLE_S = float(os.environ.get("FATHOM_BENCH_AGENT_IDLE_S", "60"))
SAMPLE_S = 0.2
THROUGHPUT_TIMEOUT_S = 240
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
BINARY_TARGET_MIB = 20
IDLE_RSS_TARGET_MIB = 30
IDLE_CPU_TARGET = 0.01  # of one core
THROUGHPUT_RSS_TARGET_MIB = 50
Line = tuple[str, str, str, bool | None]  # figure, measured, target, meets (None: not judged)


@dataclass
class Child:
    """A process an agent started; (pid, started) names it even after its pid is reused."""

    pid: int
    started: int  # clock ticks after boot
    role: str  # "iperf3 server", "iperf3 client", "ping", ...
    hwm_kib: int = 0


def throughput_mesh(sender: Agent, receiver: Agent) -> dict[str, Any]:
    """One 20 s iperf3 test sender -> receiver, every minute without slip so that the first
    slot starts within a minute of the planning lead. The port is the receiver's own: agents
    sharing loopback cannot all listen on iperf3's default."""
    return {
        "name": "bench-throughput",
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": sender.name, "side": "a"}, {"agent": receiver.name, "side": "b"}],
        "tests": [{"name": "tput", "test_type": "throughput", "interval_s": 60, "slip_s": 0,
                   "spec": {"duration_s": 20, "port": receiver.iperf3_port}}],
    }  # fmt: skip


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat from field 3 (state) on: the command in field 2 may hold spaces."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def status_kib(pid: int, field: str) -> int:
    """VmRSS or VmHWM of /proc/<pid>/status in KiB (0 once the process is a zombie)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def cpu_s(pid: int) -> tuple[float, float]:
    """CPU-seconds a process used itself (utime + stime) and its reaped children used."""
    utime, stime, cutime, cstime = (int(value) for value in stat_fields(pid)[11:15])
    return (utime + stime) / CLOCK_TICKS, (cutime + cstime) / CLOCK_TICKS


def reset_hwm(pid: int) -> None:
    """Sets VmHWM back to the current VmRSS (Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def find_children(agents: dict[int, str], children: dict[tuple[int, int], Child]) -> None:
    """Adds the agents' current children to `children` (no /proc/<pid>/task/*/children here:
    not every kernel has it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat_fields(int(entry.name))
            parent = int(fields[1])
            if parent in agents and (int(entry.name), int(fields[19])) not in children:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                role = Path(argv[0].decode()).name
                if role == "iperf3":
                    role += " server" if b"-s" in argv else " client"
                child = Child(int(entry.name), int(fields[19]), role)
                children[(child.pid, child.started)] = child


def alive(child: Child) -> bool:
    try:
        return int(stat_fields(child.pid)[19]) == child.started
    except (OSError, IndexError, ValueError):
        return False


def sample(
    agents: dict[int, str], children: dict[tuple[int, int], Child], done: Callable[[], bool], every_s: float
) -> dict[str, int]:
    """Until done(): the agents' largest VmRSS (returned, KiB by name) and their children's
    VmHWM, every every_s."""
    rss_kib = dict.fromkeys(agents.values(), 0)
    while not done():
        for pid, name in agents.items():
            rss_kib[name] = max(rss_kib[name], status_kib(pid, "VmRSS"))
        find_children(agents, children)
        for child in children.values():
            with contextlib.suppress(OSError):
                if alive(child):
                    child.hwm_kib = max(child.hwm_kib, status_kib(child.pid, "VmHWM"))
        time.sleep(every_s)
    return rss_kib


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def peak(children: dict[tuple[int, int], Child], role: str) -> int:
    return max((child.hwm_kib for child in children.values() if child.role == role), default=0)


def stop_agents(stack: Stack, children: dict[tuple[int, int], Child]) -> int:
    """SIGTERM to the agents; kills and counts their children still running afterwards."""
    for name in [name for name in stack.processes if name.startswith("agent-")]:
        stop_process(stack.processes.pop(name))
    time.sleep(1)
    left = [child for child in children.values() if alive(child)]
    for child in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)
    return len(left)


def table(lines: list[Line]) -> str:
    rows = [("figure", "measured", "target", "meets")]
    rows += [(name, measured, target, {None: "", True: "yes", False: "NO"}[ok]) for name, measured, target, ok in lines]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]

    def fmt(row: tuple[str, ...]) -> str:
        cells = (cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))
        return "  ".join([row[0].ljust(widths[0]), *cells])

    judged = [ok for *_, ok in lines if ok is not None]
    return "\n".join(
        [fmt(rows[0]), fmt(tuple("-" * width for width in widths)), *map(fmt, rows[1:]), "",
         f"{sum(judged)} of {len(judged)} judged figures meet their targets."]
    )  # fmt: skip


def test_agent_footprint(stack: Stack, tmp_path: Path) -> None:
    a, b = stack.agents
    agents = {stack.processes[f"agent-{agent.name}"].pid: agent.name for agent in stack.agents}
    children: dict[tuple[int, int], Child] = {}
    lines: list[Line] = []
    size = AGENT_BIN.stat().st_size
    static = "static" if is_static(AGENT_BIN) else "NOT static"
    lines.append((f"binary size ({static})", f"{size / MIB:.1f} MiB", f"< {BINARY_TARGET_MIB} MiB",
                  size < BINARY_TARGET_MIB * MIB and static == "static"))  # fmt: skip
    try:
        pinging = "SELECT count(DISTINCT source_id) FROM measurements_run WHERE test_type = 'ping'"
        wait_for("both agents' first ping results", lambda: stack.query(pinging)[0][0] == 2, 120)
        # Idle.
        before = {pid: cpu_s(pid) for pid in agents}
        began = time.monotonic()
        idle_rss = sample(agents, children, lambda: time.monotonic() - began >= IDLE_S, 1.0)
        elapsed = time.monotonic() - began
        after = {pid: cpu_s(pid) for pid in agents}
        stack.assert_running()
        own = max(after[pid][0] - before[pid][0] for pid in agents)
        spawned = max(after[pid][1] - before[pid][1] for pid in agents)
        hwm = max(status_kib(pid, "VmHWM") for pid in agents)
        rss = max(idle_rss.values())
        lines += [
            (f"idle RSS, agent (largest VmRSS over {elapsed:.0f} s)", mib(rss), f"< {IDLE_RSS_TARGET_MIB} MiB",
             rss < IDLE_RSS_TARGET_MIB * 1024),
            ("idle peak RSS since start, agent (VmHWM)", mib(hwm), f"< {IDLE_RSS_TARGET_MIB} MiB",
             hwm < IDLE_RSS_TARGET_MIB * 1024),
            (f"idle CPU, agent ({own:.2f} CPU-s in {elapsed:.0f} s)", f"{own / elapsed:.2%}",
             f"< {IDLE_CPU_TARGET:.0%} of a core", own / elapsed < IDLE_CPU_TARGET),
            (f"idle CPU, its ping children ({spawned:.2f} CPU-s)", f"{spawned / elapsed:.2%}",
             f"< {IDLE_CPU_TARGET:.0%} of a core", spawned / elapsed < IDLE_CPU_TARGET),
            ("idle RSS, iperf3 server child (VmHWM)", mib(peak(children, "iperf3 server")), "none: Debian's iperf3",
             None),
        ]  # fmt: skip

        # One throughput test sys-a -> sys-b, each peak reset first.
        find_children(agents, children)
        for pid in agents:
            reset_hwm(pid)
        for child in children.values():
            child.hwm_kib = 0
            with contextlib.suppress(OSError):
                if alive(child):
                    reset_hwm(child.pid)
        planned = time.monotonic()
        apply_meshes(stack, tmp_path, [throughput_mesh(a, b)])
        run: list[tuple[Any, ...]] = []

        def stored() -> bool:
            stack.assert_running()
            assert time.monotonic() - planned < THROUGHPUT_TIMEOUT_S, "no throughput result within the timeout"
            run[:] = stack.query(
                "SELECT status, error, (summary->>'receiver_bits_per_s')::float FROM measurements_run"
                " WHERE test_type = 'throughput' AND source_id = %s",
                a.agent_id,
            )
            return bool(run)

        throughput_rss = sample(agents, children, stored, SAMPLE_S)
        apply_meshes(stack, tmp_path, [{"name": "bench-throughput", "enabled": False}])
        status, error, rate_bps = run[0]
        assert status == "ok", f"the throughput test failed: {error}"
        for pid, name in agents.items():
            top = max(status_kib(pid, "VmHWM"), throughput_rss[name])
            side = "sending" if name == a.name else "receiving"
            lines.append((f"throughput test, agent {side} (peak RSS)", mib(top), f"< {THROUGHPUT_RSS_TARGET_MIB} MiB",
                          top < THROUGHPUT_RSS_TARGET_MIB * 1024))  # fmt: skip
        for role in ("iperf3 client", "iperf3 server"):
            lines.append((f"throughput test, {role} child (VmHWM)", mib(peak(children, role)),
                          "none: Debian's iperf3", None))  # fmt: skip
    finally:
        left = stop_agents(stack, children)
    lines.append(("children left running after SIGTERM to the agents", str(left), "0", left == 0))
    text = (
        f"bench-agent: 2 agents on loopback, {os.cpu_count()} cores; idle: plan poll every 5 s, 10 pings every 10 s;"
        f" throughput: 20 s iperf3 {a.name} -> {b.name} at {rate_bps / 1e9:.1f} Gbit/s\n\n{table(lines)}"
    )
    (ARTIFACTS / "bench-agent.txt").write_text(text + "\n")
    print("\n" + text)
