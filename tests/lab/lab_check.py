"""`make lab-test`: brings up every lab scenario and checks that the emulated paths behave as
configured: RTTs, ECMP clusters per flow, ECMP members as traceroute hops, throughput
against min(rate, window/RTT), the policer, loss rates and live changes. Prints one table,
configured against measured, and exits non-zero when a bound is missed.

`python -m tests.lab.lab_check [SCENARIO ...]` runs only the named scenarios (and not the
lifecycle checks). The checks live in checks_*.py, which scenario runs which in
scenario_checks.py, the retry-and-steal rule in attempts.py, the table in report.py."""

from __future__ import annotations

import subprocess
import sys

from .attempts import STEAL_LIMIT_PERCENT
from .checks_lifecycle import lab_namespaces, lifecycle, nothing_left_behind
from .lab import lab_up
from .machine import cpu_times, load_average, machine_row
from .report import print_table, record
from .scenario_checks import SCENARIO_CHECKS


def main(names: list[str]) -> int:
    started = cpu_times()
    load_at_start = load_average()
    namespaces_before = lab_namespaces()
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
    nothing_left_behind(namespaces_before)
    failed = print_table(STEAL_LIMIT_PERCENT)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
