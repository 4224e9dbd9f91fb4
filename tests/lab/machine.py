"""What the machine gave the lab: CPU time shares from /proc/stat (busy, iowait and the steal
a hypervisor took for other guests) and the load average. The emulator paces packets in
user space, so the rate checks measure the machine as much as the scenario."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .report import record


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


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


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
