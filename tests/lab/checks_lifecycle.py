"""Checks of the lab's own life, not of a scenario's paths: two labs side by side, a busy
state directory refused, `down` after a killed emulator, and no lab namespaces left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time

from .lab import SCENARIOS, lab_command, lab_state
from .report import record


def lifecycle() -> None:
    """Two labs of one scenario run side by side; a killed emulator leaves nothing after
    `down`; a second `up` in the same state directory is refused while the first runs."""
    name = "lifecycle"
    scenario = str(SCENARIOS / "single-path.yaml")
    others = lab_namespaces()  # labs this run did not start are not its to count
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        try:
            subprocess.run(lab_command("up", first, scenario), check=True, capture_output=True)
            subprocess.run(lab_command("up", second, scenario), check=True, capture_output=True)
            both = len(lab_namespaces() - others)
            again = subprocess.run(lab_command("up", first, scenario), capture_output=True, text=True)
            record(
                name,
                "two labs of one scenario side by side; a busy state dir refused",
                "4 namespaces, second up refused",
                f"{both} namespaces, second up exit {again.returncode}: {again.stderr.strip()[-60:]}",
                "distinct prefixes, clear refusal",
                both == 4 and again.returncode == 1 and "already up" in again.stderr,
            )
            os.kill(lab_state(first)["pid"], signal.SIGKILL)
            time.sleep(0.3)
            subprocess.run(lab_command("down", first), check=True, capture_output=True)
            left = len(lab_namespaces() - others)
            record(
                name,
                "emulator killed with SIGKILL, then `down`",
                "its 2 namespaces removed, the other lab's 2 kept",
                f"{left} namespaces left",
                "exactly the other lab's",
                left == 2,
            )
        finally:
            subprocess.run(lab_command("down", first), capture_output=True)
            subprocess.run(lab_command("down", second), capture_output=True)


def lab_namespaces() -> set[str]:
    """The network namespaces of labs up on this machine (fathom-lab names them flXXXX-HOST)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if re.match(r"fl[0-9a-f]{4}-", line)}


def nothing_left_behind(before: set[str]) -> None:
    """No namespace of this run's labs is left; labs already up before it (another user's, a
    killed run's) are named but are not this run's to judge."""
    now = lab_namespaces()
    left = sorted(now - before)
    others = sorted(now & before)
    measured = ", ".join(left) or "none"
    if others:
        measured += f" (and {len(others)} of labs up before this run, not counted: {', '.join(others[:4])})"
    record("all", "nothing left behind", "no namespaces of this run's labs", measured, "none", not left)
