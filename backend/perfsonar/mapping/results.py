"""to_result: a placed pScheduler run as one item of contract/result-batch.v1. It checks the
run against its placement, decides the result's status from the run's state, and hands a
successful run's merged result to its kind's module (throughput, rtt, trace, latency)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from perfsonar.choices import RUN_FAILED, RUN_NEVER_STARTED, RUN_UNDERWAY, RunOutcome
from perfsonar.mapping.fields import as_boolean, as_text, as_uuid, clip, fail, optional_text, required, utc_text
from perfsonar.mapping.kinds import KIND_OF_TEST, TEST_OF_KIND, no_kind_reason
from perfsonar.mapping.latency import session_start, to_latency
from perfsonar.mapping.placement import Placement
from perfsonar.mapping.rtt import to_ping
from perfsonar.mapping.runs import PsRun, result_id
from perfsonar.mapping.throughput import to_throughput
from perfsonar.mapping.trace import to_trace

MAX_ERROR_LENGTH = 2000  # the contract's bound on a result's error
LATENCYBG_RUN = (
    "a latencybg task's long run carries no result of its own; each result powstream reports is a run of its own"
)

# The kind's part of an ok result (result["ping"], ...), from the run's merged result.
_SECTION_OF_KIND: dict[str, Callable[[PsRun, dict[str, Any], Placement], dict[str, Any]]] = {
    "throughput": to_throughput,
    "ping": to_ping,
    "trace": to_trace,
    "latency": to_latency,
}
# When an ok result's measurement began, where the run's start does not say it.
_START_OF_KIND: dict[str, Callable[[PsRun, dict[str, Any]], datetime]] = {"latency": session_start}


def _kind(run: PsRun, placement: Placement) -> str:
    if placement.test_type not in TEST_OF_KIND:
        fail(
            "placement/test_type",
            f"{placement.test_type!r} is not a Fathom kind pScheduler can run ({', '.join(TEST_OF_KIND)})",
        )
    if not run.test_type:
        return placement.test_type
    kind = KIND_OF_TEST.get(run.test_type)
    if kind is None:
        fail("test/type", no_kind_reason(run.test_type))
    if kind != placement.test_type:
        fail("test/type", f"a pScheduler {run.test_type} run cannot be a Fathom {placement.test_type} result")
    return kind


def _outcome(run: PsRun, placement: Placement) -> tuple[str, str]:
    """(status, error) of the run; a run still under way cannot be mapped yet."""
    result = run.result
    # The archiver may read a run whose merged result is in before its state moves on.
    if run.state == RunOutcome.FINISHED or (run.state in RUN_UNDERWAY and result is not None):
        if result is None:
            if run.test_type == "latencybg":
                fail("result", f"missing from a {run.state} run: {LATENCYBG_RUN}")
            fail("result", f"missing from a {run.state} run")
        if as_boolean(required(result, "succeeded", "result"), "result/succeeded"):
            return "ok", ""
        error = optional_text(result.get("error"), "result/error", 100_000).strip()
        return "failed", clip(error or "the pScheduler run did not succeed and gave no reason", MAX_ERROR_LENGTH)
    if run.state in RUN_FAILED:
        result_error = ""
        if result is not None:
            result_error = optional_text(result.get("error"), "result/error", 100_000).strip()
        reason = run.errors.strip() or result_error or run.state_display.strip() or run.state
        status = "missed" if run.state in RUN_NEVER_STARTED and placement.slot_id else "failed"
        return status, clip(f"pScheduler run {run.state}: {reason}", MAX_ERROR_LENGTH)
    if run.state in RUN_UNDERWAY:
        fail("run/state", f"the run is still {run.state}: map it once it has finished")
    fail("run/state", f"{run.state!r} is not a pScheduler run state")


def to_result(run: PsRun, placement: Placement) -> dict[str, Any]:
    """One item of contract/result-batch.v1 (without plan_version) for `run` as placed."""
    kind = _kind(run, placement)
    if run.start.tzinfo is None or run.end.tzinfo is None:
        fail("run/start-time", "times must carry a UTC offset")
    if run.end < run.start:
        fail("run/end-time", f"{utc_text(run.end)} is before the start, {utc_text(run.start)}")
    status, error = _outcome(run, placement)
    result: dict[str, Any] = {
        "id": str(result_id(run.href)),
        "test_type": kind,
        "test_id": as_text(placement.test_id, "placement/test_id", 200),
        "peer_id": None if placement.peer_id is None else as_uuid(placement.peer_id, "placement/peer_id"),
        "target": as_text(placement.target, "placement/target", 255),
        "started_at": utc_text(run.start),
        "ended_at": utc_text(run.end),
        "status": status,
        "error": error,
    }
    if not result["test_id"] or not result["target"]:
        fail("placement", "test_id and target must not be empty")
    if placement.slot_id is not None:
        result["slot_id"] = as_uuid(placement.slot_id, "placement/slot_id")
    if status == "ok":
        assert run.result is not None  # _outcome found it
        result[kind] = _SECTION_OF_KIND[kind](run, run.result, placement)
        if kind in _START_OF_KIND:
            result["started_at"] = utc_text(_START_OF_KIND[kind](run, result[kind]))
    return result
