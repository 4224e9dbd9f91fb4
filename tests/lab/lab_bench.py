"""`make lab-bench`: how much the user-space emulator carries and what it costs in RTT.

For one emulated 50 ms link at MTU 1500 and 9000: the most one TCP flow gets through
(iperf3, big buffers, slow start omitted), then the RTT that ping sees while UDP loads the
link at 50 % and 90 % of that maximum, against the configured 50 ms. The emulator's CPU
profile during the maximum run says what limits it. Figures only; nothing is asserted."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .lab import LAB_BIN, Lab, iperf3, lab_up, ping_replies, steady_rate_bps

ONE_WAY_MS = 25
BUFFERS = "4096 131072 268435456"
SCENARIO = """name: bench-mtu{mtu}
hosts:
  - name: a
    sysctls: {{net.ipv4.tcp_rmem: "{buffers}", net.ipv4.tcp_wmem: "{buffers}"}}
  - name: b
    sysctls: {{net.ipv4.tcp_rmem: "{buffers}", net.ipv4.tcp_wmem: "{buffers}"}}
links:
  - name: l
    between: [a, b]
    mtu: {mtu}
    both: {{delay_ms: {delay}}}
"""


def ping_under_load(lab: Lab, rate_mbps: float, mtu: int) -> list[float]:
    """Ping RTTs (ms) while UDP at rate_mbps runs from a to b."""
    samples: list[float] = []

    def pinger() -> None:
        out = lab.exec("a", "ping", "-n", "-i", "0.05", "-c", "80", "-I", lab.addresses["a"], lab.addresses["b"])
        samples.extend(rtt for _, rtt in ping_replies(out))

    thread = threading.Thread(target=pinger)
    thread.start()
    iperf3(lab, "a", "b", "-u", "-b", f"{rate_mbps:.0f}M", "-l", str(mtu - 28), seconds=5, omit=0)
    thread.join()
    return samples


def profile_top(binary: Path, profile: Path, lines: int = 8) -> str:
    run = subprocess.run(
        ["go", "tool", "pprof", "-top", "-nodecount", str(lines), str(binary), str(profile)],
        capture_output=True,
        text=True,
        cwd=LAB_BIN.parents[1],
    )
    return run.stdout.strip() if run.returncode == 0 else f"(no profile: {run.stderr.strip()[-200:]})"


def main() -> int:
    rows = []
    profiles = []
    with tempfile.TemporaryDirectory(prefix="fathom-lab-bench-") as tmp:
        for mtu in (1500, 9000):
            path = Path(tmp) / f"bench-mtu{mtu}.yaml"
            path.write_text(SCENARIO.format(mtu=mtu, buffers=BUFFERS, delay=ONE_WAY_MS))
            profile = Path(tmp) / f"cpu-{mtu}.pprof"
            with lab_up(path, env={"FATHOM_LAB_CPUPROFILE": str(profile)}) as lab:
                max_mbps = steady_rate_bps(iperf3(lab, "a", "b", seconds=8, omit=3)) / 1e6
                idle = ping_under_load(lab, 1, mtu)
                loaded = {share: ping_under_load(lab, share * max_mbps, mtu) for share in (0.5, 0.9)}
            profiles.append((mtu, profile_top(LAB_BIN, profile)))
            base = 2 * ONE_WAY_MS
            rows.append(
                (
                    mtu,
                    max_mbps,
                    statistics.median(idle) - base,
                    *(statistics.median(loaded[s]) - base for s in (0.5, 0.9)),
                    *(max(loaded[s]) - base for s in (0.5, 0.9)),
                )
            )
    print(f"one emulated link, {2 * ONE_WAY_MS} ms RTT; RTT error = ping RTT minus {2 * ONE_WAY_MS} ms")
    print(
        f"{'MTU':>5}  {'max TCP (Mbit/s)':>16}  {'idle err (ms)':>13}  {'50% load med':>12}  {'90% load med':>12}"
        f"  {'50% load max':>12}  {'90% load max':>12}"
    )
    for row_mtu, max_mbps, idle_err, med50, med90, max50, max90 in rows:
        errors = "  ".join(f"{value:>12.3f}" for value in (med50, med90, max50, max90))
        print(f"{row_mtu:>5}  {max_mbps:>16.0f}  {idle_err:>13.3f}  {errors}")
    for mtu, top in profiles:
        print(f"\nemulator CPU profile during the MTU {mtu} runs (top functions):\n{top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
