"""Retried measurements and how their rows are judged. Rates and paced loss depend on the
emulator being scheduled on time, so such a check is measured up to MEASUREMENT_ATTEMPTS
times and passes when one run meets its bound; one that failed every time while the
hypervisor took at least STEAL_LIMIT_PERCENT of the CPU is shown, not judged, and so is a
paced check, which needs the emulator on time within a few milliseconds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from .machine import cpu_shares, cpu_times
from .report import Row, add

# On two cores shared with iperf3 a stall now and then drops a paced burst. A rate check
# passes when one of this many runs meets its bound, and the table says which attempt did.
MEASUREMENT_ATTEMPTS = 3
# CPU steal (time the hypervisor gave to other guests) above which a failed rate, loss or
# cluster check is not judged; see record_attempts.
STEAL_LIMIT_PERCENT = 10.0
T = TypeVar("T")


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


def record_attempts(row: Row, attempts: Attempts[T], paced: bool = False) -> None:
    """Records a retried measurement's row, with the attempt that it shows. One that failed in
    every attempt while the hypervisor took at least STEAL_LIMIT_PERCENT of the CPU is shown,
    not judged: the emulator paces packets in user space, and a starved emulator measures the
    machine, not the scenario."""
    bound = row.bound
    starved = not row.ok and attempts.least_steal_percent >= STEAL_LIMIT_PERCENT
    if starved:
        bound = f"not judged: steal >= {attempts.least_steal_percent:.0f} % in every attempt; {bound}"
    elif paced:
        # Pacing just under a policer or a 32 KB queue leaves the emulator about 3 ms of
        # slack; on this 2-core VM it misses that now and then even without steal (CI,
        # 2026-11-23: 1.7 % lost, 52 of 95 Mbit/s). Shown; the unpaced checks carry the seeds.
        bound = f"shown, needs the emulator on time within ~3 ms; {bound}"
    add(
        replace(
            row,
            measured=row.measured + attempts.suffix(),
            bound=bound,
            asserted=not (starved or paced),
            starved_steal_percent=attempts.least_steal_percent if starved else None,
        )
    )
