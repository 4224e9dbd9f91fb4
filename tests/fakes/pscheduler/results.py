"""What a finished run holds: replayed recorded results, forced failures, or a real iperf3 run.

The shapes follow pScheduler's runner and tools: `result` is the lead's local result,
`result-full` one entry per participant, `result-merged` what the tool's merged-results makes of
them (iperf3: the source's result with "Participant N:" diags; ping/traceroute: a small object
that keeps only the test's fields, so a failed rtt/trace run merges to {"schema": 1,
"succeeded": false}).
"""

from __future__ import annotations

import copy
import ipaddress
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import tools
from .catalog import IPERF3_DEFAULT_PORT
from .iso8601 import parse_duration, whole_seconds

JSON = dict[str, Any]

FIXTURE_FILES = {
    "throughput": "result-throughput.json",
    "throughput-udp": "result-throughput-udp.json",
    "rtt": "result-rtt.json",
    "trace": "result-trace.json",
    "latency": "result-latency-twping.json",
    "latencybg": "result-latencybg.json",
}


@dataclass(frozen=True)
class RunOutcome:
    """The results and final state a run ends with."""

    state: str
    result: JSON | None
    result_full: list[JSON | None] | None
    result_merged: JSON | None
    errors: str | None = None


class Fixtures:
    """Recorded pScheduler merged results, read once per file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[str, JSON] = {}

    def merged(self, test_type: str, spec: JSON) -> JSON:
        key = "throughput-udp" if test_type == "throughput" and spec.get("udp") is True else test_type
        if key not in FIXTURE_FILES:
            raise KeyError(f"no recorded result for test type {test_type!r}")
        if key not in self._cache:
            loaded = json.loads((self.directory / FIXTURE_FILES[key]).read_text())
            assert isinstance(loaded, dict)
            self._cache[key] = loaded
        return copy.deepcopy(self._cache[key])


def _strip_participant_prefix(diags: Any) -> Any:
    if isinstance(diags, str) and diags.startswith("Participant 0:\n"):
        return diags[len("Participant 0:\n") :].rstrip("\n")
    return diags


def _merge_iperf3(local: JSON, remote: JSON | None, two_ended: bool) -> JSON:
    """iperf3's merged-results: the source's result, diags relabelled per participant."""
    merged = copy.deepcopy(local)
    diags = ""
    if local.get("diags"):
        diags += f"Participant 0:\n{local['diags']}\n"
    if two_ended and remote and remote.get("diags"):
        diags += f"Participant 1:\n{remote['diags']}\n"
    merged["diags"] = diags
    return merged


def _single_participant_full(test_type: str, merged: JSON) -> JSON:
    """The ping/traceroute tools' local result wraps the test result in `result`."""
    diags = merged.get("diags") or {"rtt": "ping", "latency": "twping"}.get(test_type, "traceroute")
    inner = {key: value for key, value in merged.items() if key != "diags"}
    return {"schema": 1, "succeeded": bool(merged.get("succeeded")), "diags": diags, "error": None, "result": inner}


def replayed(test_type: str, spec: JSON, participants: int, fixtures: Fixtures) -> RunOutcome:
    """A successful run that reports the recorded result for its test type."""
    merged = fixtures.merged(test_type, spec)
    if test_type == "throughput":
        local = copy.deepcopy(merged)
        local["diags"] = _strip_participant_prefix(local.get("diags"))
        full: list[JSON | None] = [local]
        if participants > 1:
            full.append(copy.deepcopy(local))  # the receiver's own view, approximated by the sender's
        return RunOutcome("finished" if merged.get("succeeded") else "failed", local, full, merged)
    local = _single_participant_full(test_type, merged)
    return RunOutcome("finished" if merged.get("succeeded") else "failed", local, [local], merged)


def tool_failure(test_type: str, participants: int, errors: str) -> RunOutcome:
    """The tool exited non-zero: the runner's own failure result, then the tool's merge of it."""
    local: JSON = {
        "succeeded": False,
        "error": f"Tool failed: {errors}",
        "diags": f"Tool standard output:\n\nNone\n\nTool standard error:\n\n{errors}\n",
    }
    full: list[JSON | None] = [local, *([None] * (participants - 1))]
    if test_type == "throughput":
        merged = _merge_iperf3(local, None, participants > 1)
    else:
        merged = {"schema": 1, "succeeded": False}
    return RunOutcome("failed", local, full, merged, errors)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def iperf3_command(spec: JSON) -> list[str]:
    """The client command line pScheduler's iperf3 tool builds for a single-ended run."""
    binary = shutil.which("iperf3") or "/usr/bin/iperf3"
    port = spec.get("single-ended-port", IPERF3_DEFAULT_PORT)
    duration = whole_seconds(parse_duration(spec["duration"])) if "duration" in spec else 10
    args = [binary, "-p", str(port), "-c", str(spec["dest"]), "-t", str(duration), "--json"]
    if "parallel" in spec:
        args += ["-P", str(spec["parallel"])]
    if "window-size" in spec:
        args += ["-w", str(spec["window-size"])]
    if "omit" in spec:
        args += ["-O", str(whole_seconds(parse_duration(spec["omit"])))]
    if "bandwidth" in spec:
        args += ["-b", str(spec["bandwidth"])]
    if spec.get("udp"):
        args.append("-u")
    if spec.get("reverse"):
        args.append("-R")
    return args


def live_iperf3(spec: JSON, timeout_s: float) -> RunOutcome:
    """Runs the real iperf3 client against a loopback iperf3 server and reports what it measured."""
    dest = str(spec.get("dest", ""))
    if not is_loopback(dest):
        return tool_failure("throughput", 1, f"fake pScheduler runs iperf3 only against loopback, not {dest!r}")
    command = iperf3_command(spec)
    command_line = " ".join(command)
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        local: JSON = {
            "succeeded": False,
            "diags": command_line,
            "error": "The iperf3 command failed during execution. See server logs for more details.",
        }
        return RunOutcome("failed", local, [local], _merge_iperf3(local, None, False))
    try:
        document = json.loads(completed.stdout)
    except ValueError:
        document = {"error": completed.stdout or completed.stderr}
    diags = f"{command_line}\n\n{completed.stdout}" if completed.returncode == 0 else command_line
    local = tools.iperf3_to_result(document, exit_status=completed.returncode, diags=diags)
    merged = _merge_iperf3(local, None, False)
    return RunOutcome("finished" if merged.get("succeeded") else "failed", local, [local], merged)
