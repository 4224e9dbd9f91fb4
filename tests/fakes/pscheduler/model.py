"""The fake node's database: tasks, runs, archivings and the log of archiver push attempts.

Everything lives in memory behind one lock (NodeState.lock); field names follow pScheduler's
tables (task, run, archiving) so the JSON builders below read like run_json() and friends.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from .iso8601 import format_duration, record_time, record_time_precise

JSON = dict[str, Any]

RunState = Literal[
    "pending", "on-deck", "running", "cleanup", "finished", "overdue", "missed", "failed", "preempted", "nonstart",
    "canceled",
]  # fmt: skip
ForcedState = Literal["nonstart", "missed", "failed", "preempted", "canceled"]
FORCED_STATES: tuple[ForcedState, ...] = ("nonstart", "missed", "failed", "preempted", "canceled")

# run_state.sql: display text, finished, success (None = neither).
RUN_STATES: dict[str, tuple[str, bool, bool | None]] = {
    "pending": ("Pending", False, None),
    "on-deck": ("On Deck", False, None),
    "running": ("Running", False, None),
    "cleanup": ("Cleanup", True, None),
    "finished": ("Finished", True, True),
    "overdue": ("Overdue", True, False),
    "missed": ("Missed", True, False),
    "failed": ("Failed", True, False),
    "preempted": ("Preempted", True, False),
    "nonstart": ("Non-Starter", True, False),
    "canceled": ("Canceled", True, None),
}


def sanitized(value: Any) -> Any:
    """pscheduler.json_decomment(prefix='_', null=True): private values become null at any depth."""
    if isinstance(value, dict):
        return {key: None if key.startswith("_") else sanitized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [sanitized(item) for item in value]
    return value


@dataclass
class Forced:
    """An outcome a test imposed on a future run."""

    state: ForcedState
    errors: str | None


@dataclass
class Task:
    uuid: str
    json: JSON  # what was posted, after tool choice and limit rewrites (no `participants`)
    participants: list[str | None]
    participant: int
    added: datetime
    duration: timedelta
    completion: timedelta
    start: datetime | None
    slip: timedelta
    repeat: timedelta | None
    until: datetime | None
    max_runs: int | None
    hints: JSON
    diags: str
    cli: list[str]
    participant_key: str | None = None
    repeat_cron: str | None = None
    enabled: bool = True
    runs: int = 0
    runs_started: int = 0
    first_start: datetime | None = None
    participant_apis: list[str] = field(default_factory=list)

    @property
    def test_type(self) -> str:
        return str(self.json["test"]["type"])

    @property
    def spec(self) -> JSON:
        spec = self.json["test"]["spec"]
        assert isinstance(spec, dict)
        return spec

    @property
    def tool(self) -> str:
        return str(self.json["tool"])

    def detail(self, scheduling_class: str) -> JSON:
        """The `detail` object pScheduler's task trigger keeps in json_detail."""
        return {
            "added": record_time(self.added),
            "anytime": scheduling_class == "background-multi",
            "cli": list(self.cli),
            "diags": self.diags,
            "duration": format_duration(self.duration),
            "enabled": self.enabled,
            "exclusive": scheduling_class == "exclusive",
            "hints": dict(self.hints),
            "multi-result": scheduling_class == "background-multi",
            "participant": self.participant,
            "participants": list(self.participants),
            "post": "P0D",
            "runs": self.runs,
            "runs-started": self.runs_started,
            "slip": format_duration(self.slip),
            "start": record_time(self.start) if self.start else None,
        }

    def json_detail(self, scheduling_class: str) -> JSON:
        body = copy.deepcopy(self.json)
        body["detail"] = self.detail(scheduling_class)
        return body


@dataclass
class Archiving:
    index: int  # position in the task's archives
    spec: JSON  # the archive spec, with `runs` defaulted as the trigger does
    archiver: JSON  # the archiver's enumeration
    created: datetime
    ttl_expires: datetime | None
    next_attempt: datetime | None
    attempts: int = 0
    last_attempt: datetime | None = None
    completed: bool = False
    archived: bool = False
    in_flight: bool = False
    diags: list[JSON] = field(default_factory=list)

    @property
    def data(self) -> JSON:
        data = self.spec.get("data", {})
        assert isinstance(data, dict)
        return data

    def as_json(self) -> JSON:
        """archiving_json(): row_to_json of the archiving row, so last_attempt keeps its underscore."""
        return {
            "spec": copy.deepcopy(self.spec),
            "archiver": copy.deepcopy(self.archiver),
            "archiver_data": copy.deepcopy(self.data),
            "completed": self.completed,
            "archived": self.archived,
            "last_attempt": record_time_precise(self.last_attempt) if self.last_attempt else None,
            "diags": copy.deepcopy(self.diags),
        }


@dataclass
class Run:
    uuid: str
    task_uuid: str
    start: datetime
    end: datetime
    state: str
    added: datetime
    finish_at: datetime  # when the tool is done and the result gets merged
    errors: str | None = None
    result: JSON | None = None
    result_full: list[JSON | None] | None = None
    result_merged: JSON | None = None
    limit_diags: str | None = None
    clock_survey: list[JSON] | None = None
    forced: Forced | None = None
    live: bool = False
    reports: int = 0  # a background-multi run's results so far (powstream's intervals)
    archivings: list[Archiving] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return RUN_STATES[self.state][1]

    def as_json(self, task: Task) -> JSON:
        """run_json(): the record GET .../runs/<run> returns, before the API adds its hrefs."""
        record: JSON = {
            "start-time": record_time(self.start),
            "end-time": record_time(self.end),
            "duration": format_duration(self.end - self.start),
            "participant": task.participant,
            "participants": list(task.participants),
            "participant-data": {"schema": 1},
            "participant-data-full": [{"schema": 1} for _ in task.participants],
            "result": copy.deepcopy(self.result),
            "result-full": copy.deepcopy(self.result_full),
            "result-merged": copy.deepcopy(self.result_merged),
            "state": self.state,
            "state-display": RUN_STATES[self.state][0],
            "errors": self.errors,
            "added": record_time(self.added),
            "priority": None,
            "limit-diags": self.limit_diags,
        }
        if self.clock_survey is not None:
            record["clock-survey"] = copy.deepcopy(self.clock_survey)
        if self.archivings:
            record["archivings"] = [archiving.as_json() for archiving in self.archivings]
        return record


@dataclass(frozen=True)
class PushAttempt:
    """One http-archiver delivery attempt, as the fake saw it (for tests; not a pScheduler object)."""

    task: str
    run: str
    archive: int  # index in the task's archives
    attempt: int  # 1-based
    time: str
    method: str
    url: str
    headers: dict[str, str]
    status: int | None
    succeeded: bool
    error: str | None
    retry: str | None
    body_bytes: int

    def as_json(self) -> JSON:
        return {
            "task": self.task,
            "run": self.run,
            "archive": self.archive,
            "attempt": self.attempt,
            "time": self.time,
            "method": self.method,
            "url": self.url,
            "headers": dict(self.headers),
            "status": self.status,
            "succeeded": self.succeeded,
            "error": self.error,
            "retry": self.retry,
            "body_bytes": self.body_bytes,
        }


class NodeState:
    """All mutable state; callers hold `lock` while reading or changing it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.tasks: dict[str, Task] = {}
        self.runs: dict[str, Run] = {}
        self.push_attempts: list[PushAttempt] = []
        self.forced: dict[str | None, list[Forced]] = {}  # task uuid (None = any task) -> queue

    def reset(self) -> None:
        with self.lock:
            self.tasks.clear()
            self.runs.clear()
            self.push_attempts.clear()
            self.forced.clear()
            self.changed.notify_all()

    def runs_of(self, task_uuid: str) -> list[Run]:
        return sorted((run for run in self.runs.values() if run.task_uuid == task_uuid), key=lambda run: run.start)

    def take_forced(self, task_uuid: str) -> Forced | None:
        for key in (task_uuid, None):
            queue = self.forced.get(key)
            if queue:
                return queue.pop(0)
        return None
