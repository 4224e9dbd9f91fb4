"""The perfSONAR toolkit's default pscheduler_limits.conf, applied the way the limit processor does.

The fake listens on loopback only, so every requester is really 127.0.0.1, which a real node
would class as a local interface ("friendlies"). Fathom talks to nodes from elsewhere, so the fake
classes requesters as "default" unless told otherwise; "hostile" is the hackers/bogons class that
is refused outright. The diagnostics text follows limitprocessor.py and applicationset.py.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from .iso8601 import is_duration, parse_duration

JSON = dict[str, Any]
RequesterClass = Literal["default", "friendly", "hostile"]

LIMIT_REASONS = {
    "throughput-default-parallel": "Throughput may only have six or fewer parallel streams.",
    "throughput-default-time": "Duration for throughput must be 60 seconds or less.",
    "throughput-default-udp": "UDP throughput bandwidth must be less than 50 Mb/s",
    "throughput-sane-parallel": "Throughput may only have 15 or fewer parallel streams.",
}


@dataclass(frozen=True)
class LimitVerdict:
    passed: bool
    diags: str
    task: JSON  # after the rewriter


def _duration_s(spec: JSON) -> float | None:
    value = spec.get("duration")
    return parse_duration(value).total_seconds() if isinstance(value, str) and is_duration(value) else None


def _limit_failure(name: str, task: JSON) -> str | None:
    """One limit from the default config: None when it passes, else its reason."""
    test = task.get("test", {})
    spec = test.get("spec", {}) if isinstance(test.get("spec"), dict) else {}
    if name == "allowed-tests":
        return "Test type is not in list" if test.get("type") in ("s3throughput", "idleex") else None
    if name == "never":
        return "Forced failure"
    if test.get("type") != "throughput":
        return None
    parallel = spec.get("parallel")
    if name == "throughput-default-parallel" and isinstance(parallel, int) and parallel > 6:
        return LIMIT_REASONS[name]
    if name == "throughput-sane-parallel" and isinstance(parallel, int) and parallel > 15:
        return LIMIT_REASONS[name]
    duration_s = _duration_s(spec)
    if name == "throughput-default-time" and duration_s is not None and duration_s > 60:
        return LIMIT_REASONS[name]
    if name == "throughput-default-udp" and spec.get("udp") is True:
        bandwidth = spec.get("bandwidth")
        if bandwidth is None or (isinstance(bandwidth, int) and bandwidth > 50_000_000):
            return LIMIT_REASONS[name]
    return None


def _rewrite(task: JSON) -> tuple[JSON, list[str]]:
    """The default rewrite: throughput, latency(bg) and idle tests run at least 5 seconds."""
    rewritten = copy.deepcopy(task)
    test = rewritten.get("test", {})
    spec = test.get("spec")
    duration_s = _duration_s(spec) if isinstance(spec, dict) else None
    if (
        test.get("type") in ("idle", "idlebgm", "latency", "latencybg", "throughput")
        and isinstance(spec, dict)
        and duration_s is not None
        and duration_s < 5
    ):
        spec["duration"] = "PT5S"
        return rewritten, ["Bumped duration to 5-second minimum"]
    return rewritten, []


APPLICATIONS: dict[RequesterClass, tuple[str, list[str], bool]] = {
    "hostile": ("Hosts we don't want running any tests", ["never"], True),
    "friendly": ("Hosts we trust to do (almost) everything", ["throughput-sane-parallel"], False),
    "default": (
        "Defaults applied to non-friendly hosts",
        ["allowed-tests", "throughput-default-parallel", "throughput-default-time", "throughput-default-udp"],
        False,
    ),
}

IDENTIFIED = {
    "default": "everybody",
    "friendly": "everybody, local-interfaces",
    "hostile": "everybody, hackers",
}
CLASSIFIED = {"default": "default", "friendly": "default, friendlies", "hostile": "default, hostiles"}


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


def _application(requester_class: RequesterClass, task: JSON) -> tuple[bool, list[str]]:
    description, limits, stop_on_failure = APPLICATIONS[requester_class]
    lines = [f"Application: {description}"]
    group: list[str] = []
    passes = 0
    for limit in limits:
        reason = _limit_failure(limit, task)
        if reason is None:
            group.append(f"Limit '{limit}' passed")
            passes += 1
        else:
            group.append(f"Limit '{limit}' failed: {reason}")
    fails = len(limits) - passes
    passed = fails == 0
    group.append(
        f"Want all, {passes}/{len(limits)} passed, {fails}/{len(limits)} failed: {'PASS' if passed else 'FAIL'}"
    )
    app_diags = [f"Group 1: {line}" for line in group]
    app_diags.append(f"Application {'PASSES' if passed else 'FAILS'}")
    lines.extend(_indent(line) for line in app_diags)
    if passed:
        lines.append("Passed one application.  Stopping.")
    elif stop_on_failure:
        lines.append("Failed; stop forced")
    return passed, lines


def evaluate(task: JSON, hints: JSON, requester_class: RequesterClass) -> LimitVerdict:
    """Rewrites the task, applies the applications for the requester's class, and explains why."""
    diags = ["Hints:"]
    diags.extend(_indent(f"{name}: {hints[name]}") for name in sorted(hints))
    diags.append(f"Identified as {IDENTIFIED[requester_class]}")
    diags.append(f"Classified as {CLASSIFIED[requester_class]}")
    rewritten, changes = _rewrite(task)
    if changes:
        diags.append("Rewriter made changes:")
        diags.extend("  " + change for change in changes)
    order: list[RequesterClass] = ["hostile", "friendly", "default"]
    applicable = [name for name in order if name == requester_class or name == "default"]
    passed = False
    app_lines: list[str] = []
    for name in applicable:
        passed, lines = _application(name, rewritten)
        app_lines.extend(lines)
        if passed or APPLICATIONS[name][2]:
            break
    diags.append("\n".join(app_lines))
    diags.append(f"Proposal {'meets' if passed else 'does not meet'} limits")
    diags.append("Priority set to default of 0")
    return LimitVerdict(passed, "\n".join(diags), rewritten)
