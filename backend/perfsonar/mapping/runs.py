"""PsRun: one pScheduler run, read from the http archiver's push (run_from_archive) or the
node's API (run_from_record), and the Fathom result id of a run (result_id)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from perfsonar.mapping.fields import (
    as_object,
    as_seconds,
    as_text,
    as_timestamp,
    as_uuid,
    at,
    fail,
    optional_object,
    optional_text,
    required,
)
from perfsonar.mapping.kinds import KIND_OF_TEST, no_kind_reason

MAX_URL_LENGTH = 2000

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_RUN_PATH = re.compile(rf"/tasks/(?P<task>{_UUID})/runs/(?P<run>{_UUID})/?")
_TASK_PATH = re.compile(rf"/tasks/(?P<task>{_UUID})/?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class PsRun:
    """One pScheduler run, from the archiver's push or the node's API."""

    href: str  # the run's URL on the node
    task_href: str
    state: str  # pScheduler run state: finished, failed, nonstart, ...
    start: datetime  # timezone-aware
    end: datetime
    errors: str  # the run's errors text ("" when none)
    test_type: str  # pScheduler test type (rtt, throughput, trace, ...); "" when unknown
    spec: dict[str, Any]  # the test spec; {} when unknown
    tool: str  # e.g. "iperf3"; "" when unknown
    result: dict[str, Any] | None = None  # the merged result
    reference: dict[str, Any] | None = None  # the task's reference
    state_display: str = ""  # e.g. "Non-Starter"


def _href(value: Any, path: str, pattern: re.Pattern[str]) -> tuple[str, re.Match[str]]:
    written = as_text(value, path, MAX_URL_LENGTH)
    try:
        parts = urlsplit(written)
        _ = parts.port  # urlsplit checks the port only when it is asked for
    except ValueError as error:
        fail(path, f"{written!r} is not a URL: {error}")
    match = pattern.search(parts.path)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or match is None or match.end() != len(parts.path):
        what = "run (.../tasks/<uuid>/runs/<uuid>)" if pattern is _RUN_PATH else "task (.../tasks/<uuid>)"
        fail(path, f"{written!r} is not a pScheduler {what} URL")
    return written, match


def _run_hrefs(run_href: Any, task_href: Any, run_path: str, task_path: str) -> tuple[str, str, str]:
    """(run URL, task URL, run id); a missing task URL is the one the run's URL names."""
    href, run_match = _href(run_href, run_path, _RUN_PATH)
    if task_href is None:
        return href, href[: href.rindex("/runs/")], run_match["run"].lower()
    task, task_match = _href(task_href, task_path, _TASK_PATH)
    if task_match["task"].lower() != run_match["task"].lower():
        fail(task_path, f"task {task_match['task']} is not the task of the run {href}")
    return href, task, run_match["run"].lower()


def _test(test: Any, path: str) -> tuple[str, dict[str, Any]]:
    test = as_object(test, path)
    test_type = as_text(required(test, "type", path), at(path, "type"), 64)
    spec = optional_object(test.get("spec"), at(path, "spec")) or {}
    return test_type, spec


def _tool(value: Any, path: str) -> str:
    """The archiver sends the tool as {name, version}; a task names it as a string."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return optional_text(value.get("name"), at(path, "name"), 64)
    return as_text(value, path, 64)


def _old_envelope(body: dict[str, Any]) -> str | None:
    """Why a body is pScheduler's old archiver input, {data, result: {id, schedule, test,
    tool, participants, result}, attempts}, or None when it is not one. That envelope names
    neither the task nor the run, so no Fathom task or result id can be found for it."""
    inner = body.get("result")
    if "run" in body or "task" in body or not isinstance(inner, dict) or "test" not in inner:
        return None
    why = (
        "this is pScheduler's old archiver envelope {data, result: {id, schedule, test, ...}, attempts}, "
        "which names no task or run to place the result by (the http archiver sends both)"
    )
    test = inner["test"]
    test_type = test.get("type") if isinstance(test, dict) else None
    if isinstance(test_type, str) and test_type not in KIND_OF_TEST:
        why += ". Besides, " + no_kind_reason(test_type[:64])
    return why


def run_from_archive(body: Any) -> PsRun:
    """The run in an http archiver body (§3 of the interop reference: id, schedule, test,
    tool, participants, result, reference, task, run), as pScheduler sends it without a
    transform."""
    body = as_object(body, "body")
    if body.get("run") is None and (old := _old_envelope(body)) is not None:
        fail("run", f"missing: {old}")
    run = as_object(required(body, "run", ""), "run")
    task = optional_object(body.get("task"), "task") or {}
    task_href, task_path = run.get("task-href"), "run/task-href"
    if task_href is None:
        task_href, task_path = task.get("href"), "task/href"
    href, task_href, run_id = _run_hrefs(required(run, "href", "run"), task_href, "run/href", task_path)
    if body.get("id") is not None and as_uuid(body["id"], "id") != run_id:
        fail("id", f"{body['id']} is not the run of run/href {href}")
    schedule = optional_object(body.get("schedule"), "schedule") or {}
    if run.get("start-time") is not None:
        start = as_timestamp(run["start-time"], "run/start-time")
    else:
        start = as_timestamp(required(schedule, "start", "schedule"), "schedule/start")
    if run.get("end-time") is not None:
        end = as_timestamp(run["end-time"], "run/end-time")
    else:
        end = start + timedelta(seconds=as_seconds(required(schedule, "duration", "schedule"), "schedule/duration"))
    test_type, spec = _test(required(body, "test", ""), "test")
    return PsRun(
        href=href,
        task_href=task_href,
        state=as_text(required(run, "state", "run"), "run/state", 32),
        start=start,
        end=end,
        errors=optional_text(run.get("errors"), "run/errors", 100_000),
        test_type=test_type,
        spec=spec,
        tool=_tool(body.get("tool"), "tool"),
        result=optional_object(body.get("result"), "result"),
        reference=optional_object(body.get("reference"), "reference"),
        state_display=optional_text(run.get("state-display"), "run/state-display", 64),
    )


def run_from_record(record: Any, task: dict[str, Any] | None = None) -> PsRun:
    """The run in a GET .../runs/<id> record (the poll path). Its test, tool and reference
    come from the task JSON when given; without it they are unknown, and to_result takes the
    test from the placement."""
    record = as_object(record, "record")
    href, task_href, _ = _run_hrefs(required(record, "href", ""), record.get("task-href"), "href", "task-href")
    test_type, tool, reference = "", "", None
    spec: dict[str, Any] = {}
    if task is not None:
        task = as_object(task, "task")
        if task.get("href") is not None:
            _run_hrefs(href, task["href"], "href", "task/href")
        test_type, spec = _test(required(task, "test", "task"), "task/test")
        tool = _tool(task.get("tool"), "task/tool")
        reference = optional_object(task.get("reference"), "task/reference")
    return PsRun(
        href=href,
        task_href=task_href,
        state=as_text(required(record, "state", ""), "state", 32),
        start=as_timestamp(required(record, "start-time", ""), "start-time"),
        end=as_timestamp(required(record, "end-time", ""), "end-time"),
        errors=optional_text(record.get("errors"), "errors", 100_000),
        test_type=test_type,
        spec=spec,
        tool=tool,
        result=optional_object(record.get("result-merged"), "result-merged"),
        reference=reference,
        state_display=optional_text(record.get("state-display"), "state-display", 64),
    )


def task_uuid(href: str) -> str:
    """The task UUID (lower case) a pScheduler run or task URL names, or "" for neither."""
    match = _RUN_PATH.search(href) or _TASK_PATH.search(href)
    return match["task"].lower() if match else ""


def result_id(run_href: str) -> uuid.UUID:
    """The Fathom result id of a pScheduler run: uuid5 of its task's and its own UUIDs. Not of
    the whole href: a node writes pushed hrefs with its own host name (or the archive's
    uri-host) and polled ones with the host Fathom asked, so one run has several hrefs."""
    _, match = _href(run_href, "run/href", _RUN_PATH)
    return uuid.uuid5(uuid.NAMESPACE_URL, f"pscheduler:tasks/{match['task'].lower()}/runs/{match['run'].lower()}")
