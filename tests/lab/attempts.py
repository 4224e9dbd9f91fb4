"""Retried measurements and how their rows are judged. Rates and paced loss depend on the
emulator being scheduled on time, so such a check is measured up to MEASUREMENT_ATTEMPTS
times and passes when one run meets its bound; one that failed every time while the
hypervisor took at least STEAL_LIMIT_PERCENT of the CPU is shown, not judged. A paced
check needs the emulator on time within a few milliseconds: each of its runs carries the
emulator's own pacing lateness, and one that failed while the emulator left packets late
is shown with that figure, not judged; failed with the emulator on time, it fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from .lab import Lab, Lateness
from .machine import cpu_shares, cpu_times
from .report import Row, add

# On two cores shared with iperf3 a stall now and then drops a paced burst. A rate check
# passes when one of this many runs meets its bound, and the table says which attempt did.
MEASUREMENT_ATTEMPTS = 3
# CPU steal (time the hypervisor gave to other guests) above which a failed rate, loss or
# cluster check is not judged; see record_attempts.
STEAL_LIMIT_PERCENT = 10.0
# A paced run is the emulator's fault, not the scenario's, when at least this share of its
# departures left over 1 ms late: a 32 KB queue at 95 Mbit/s drains in 2.7 ms, and a
# policer's burst in less, so a millisecond's bunching is what starts their drops.
EMULATOR_LATE_SHARE = 1e-4
T = TypeVar("T")


@dataclass
class Attempts(Generic[T]):
    """A measurement's first passing run (or its last), which attempt that was, and the least
    CPU steal the hypervisor took during any attempt."""

    value: T
    number: int
    least_steal_percent: float
    # The emulator's pacing lateness during the attempt shown (with a lab to ask).
    lateness: Lateness | None = None

    def suffix(self) -> str:
        return f" (attempt {self.number})" if self.number > 1 else ""

    def emulator_late(self, bound_us: int = 1000, share: float = EMULATOR_LATE_SHARE) -> bool:
        """Whether at least `share` of the emulator's departures during the attempt left more
        than bound_us late."""
        return self.lateness is not None and self.lateness.share_later_than(bound_us) >= share


def first_passing(measure: Callable[[], T], passes: Callable[[T], bool], lab: Lab | None = None) -> Attempts[T]:
    """The first of up to MEASUREMENT_ATTEMPTS measurements that passes, or the last one;
    with a lab, each attempt is measured with the emulator's pacing lateness during it."""
    least_steal, attempt, before = 100.0, 1, cpu_times()
    while True:
        late_before = lab.lateness() if lab else None
        value = measure()
        lateness = lab.lateness() - late_before if lab and late_before is not None else None
        after = cpu_times()
        least_steal = min(least_steal, cpu_shares(before, after).steal)
        if passes(value) or attempt == MEASUREMENT_ATTEMPTS:
            return Attempts(value, attempt, least_steal, lateness)
        attempt, before = attempt + 1, after


def record_attempts(
    row: Row, attempts: Attempts[T], late_bound_us: int = 1000, late_share: float = EMULATOR_LATE_SHARE
) -> None:
    """Records a retried measurement's row, with the attempt that it shows. One that failed in
    every attempt while the hypervisor took at least STEAL_LIMIT_PERCENT of the CPU is shown,
    not judged: the emulator paces packets in user space, and a starved emulator measures the
    machine, not the scenario. So is a run that failed while the emulator itself left packets
    late (attempts measured with a lab): at least late_share of its departures over
    late_bound_us; the row says how late."""
    bound = row.bound
    measured = row.measured + attempts.suffix()
    starved = not row.ok and attempts.least_steal_percent >= STEAL_LIMIT_PERCENT
    emulator_late = not row.ok and not starved and attempts.emulator_late(late_bound_us, late_share)
    if attempts.lateness is not None:
        measured += f"; {attempts.lateness.describe()}"
    if starved:
        bound = f"not judged: steal >= {attempts.least_steal_percent:.0f} % in every attempt; {bound}"
    elif emulator_late:
        bound = f"not judged: the emulator, not the path, missed the schedule; {bound}"
    add(
        replace(
            row,
            measured=measured,
            bound=bound,
            asserted=not (starved or emulator_late),
            starved_steal_percent=attempts.least_steal_percent if starved else None,
            emulator_late=attempts.lateness.describe() if emulator_late and attempts.lateness else None,
        )
    )
