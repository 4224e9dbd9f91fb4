"""The fake node's daemons in one place: the scheduler that puts runs on the timeline, the runner
that moves them through their states, and the archiver that pushes finished runs.

Time is the node's own clock (real time plus `clock_offset_s`), so a skewed node schedules and
stamps everything skewed, as a real one would. `speed` divides how long runs take, so tests need
not wait out a real iperf3 duration; schedules (start, repeat, slip) are taken as given.
"""

from __future__ import annotations

import copy
import logging
import math
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from . import archiver, catalog, limits, posting, results
from .iso8601 import ceil_second, clock_time, isodate_time, parse_duration
from .model import FORCED_STATES, RUN_STATES, Archiving, Forced, ForcedState, NodeState, PushAttempt, Run, Task

JSON = dict[str, Any]
log = logging.getLogger(__name__)

# Runs that hold their slot on the timeline (others free it for exclusive tests).
SLOT_HOLDING = {"pending", "on-deck", "running", "cleanup", "finished", "failed", "overdue"}


@dataclass
class NodeConfig:
    fixtures_dir: Path
    hostname: str = "localhost"
    api_host: str | None = None  # PSCHEDULER_LOCALHOST; default 127.0.0.1:<port>
    clock_offset_s: float = 0.0
    clock_synchronized: bool = True
    speed: float = 1.0
    live_iperf3: bool = False
    requester_class: limits.RequesterClass = "default"
    first_run_delay_s: float = 2.0
    horizon: timedelta = timedelta(days=1)
    max_pending_runs: int = 25
    check_participants: bool = True
    participant_apis: dict[str, str] = field(default_factory=dict)
    without_tools: frozenset[str] = frozenset()  # installed tools left out (a node without twping)
    tick_s: float = 0.05
    seed: int | None = None


def _cron_values(text: str, low: int, high: int) -> set[int]:
    if text == "*":
        return set(range(low, high + 1))
    values: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        values.update(range(int(first), int(last or first) + 1))
    return values


def cron_next(spec: str, after: datetime, limit: timedelta) -> datetime | None:
    """The first minute after `after` matching a POSIX cron spec (searched up to `limit` ahead)."""
    minute, hour, day, month, weekday = spec.split()
    minutes, hours = _cron_values(minute, 0, 59), _cron_values(hour, 0, 23)
    days, months, weekdays = _cron_values(day, 1, 31), _cron_values(month, 1, 12), _cron_values(weekday, 0, 6)
    candidate = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while candidate <= after + limit:
        day_ok = candidate.day in days
        weekday_ok = (candidate.isoweekday() % 7) in weekdays
        # POSIX cron: when both day fields are restricted, either may match.
        date_ok = (day_ok or weekday_ok) if day != "*" and weekday != "*" else (day_ok and weekday_ok)
        if candidate.minute in minutes and candidate.hour in hours and candidate.month in months and date_ok:
            return candidate
        candidate += timedelta(minutes=1)
    return None


class Node:
    """State plus the threads that advance it; every public method is safe to call from any thread."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        self.state = NodeState()
        self.fixtures = results.Fixtures(config.fixtures_dir)
        self.clock_offset_s = config.clock_offset_s
        self.clock_synchronized = config.clock_synchronized
        self.requester_class: limits.RequesterClass = config.requester_class
        self.local_host = config.api_host or "127.0.0.1"
        self.paused = False
        self.archiving_blocked = False
        self._random = random.Random(config.seed)  # noqa: S311 - slip placement, not security
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._deliveries = 0  # archiver attempts under way (under state.lock)

    # -- clock ---------------------------------------------------------------------------------

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.clock_offset_s)

    def clock_state(self) -> JSON:
        """/clock as a chrony-synchronized node reports it."""
        return {
            "time": clock_time(self.now()),
            "synchronized": self.clock_synchronized,
            "offset": self.clock_offset_s,
            "source": "chrony",
            "reference": "fake-ntp (127.0.0.1)",
        }

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="fake-pscheduler-daemons", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self.state.lock:
            self.state.changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # a bug in one tick must not stop the node's clockwork
                log.exception("fake pScheduler tick failed")
            with self.state.lock:
                self.state.changed.wait(timeout=self.config.tick_s)

    # -- tasks ---------------------------------------------------------------------------------

    def posting_context(self, hints: JSON) -> posting.PostingContext:
        names = {"127.0.0.1", "::1", "localhost", self.config.hostname, self.local_host.split(":")[0]}
        return posting.PostingContext(
            local_host=self.local_host,
            local_names=frozenset(names),
            requester_class=self.requester_class,
            speed=self.config.speed,
            now=self.now(),
            hints=hints,
            check_participants=self.config.check_participants,
            participant_apis=dict(self.config.participant_apis),
            without_tools=self.config.without_tools,
        )

    def admit(self, task: Task) -> None:
        with self.state.lock:
            if task.uuid in self.state.tasks:
                raise ValueError("Task already exists.  All participants must be on separate systems.")
            self.state.tasks[task.uuid] = task
            self.state.changed.notify_all()

    def disable(self, task_uuid: str) -> Task | None:
        """DELETE /tasks/<uuid>: the task stays, disabled; future runs go, current ones are canceled."""
        with self.state.lock:
            task = self.state.tasks.get(task_uuid)
            if task is None:
                return None
            if not task.enabled:
                return task
            task.enabled = False
            now = self.now()
            for run in self.state.runs_of(task_uuid):
                if run.start > now:
                    del self.state.runs[run.uuid]
                elif run.start <= now < run.end and run.state != "nonstart":
                    run.state = "canceled"
            self.state.changed.notify_all()
        if task.participant == 0 and task.participant_apis:
            threading.Thread(target=posting.delete_at_participants, args=(task,), daemon=True).start()
        return task

    # -- controls (tests) ----------------------------------------------------------------------

    def force(self, state: ForcedState, errors: str | None, task_uuid: str | None = None, count: int = 1) -> None:
        """The next `count` runs of a task (or of any task) to reach their start end in `state` with `errors`."""
        if state not in FORCED_STATES:
            raise ValueError(f"state must be one of {', '.join(FORCED_STATES)}")
        with self.state.lock:
            queue = self.state.forced.setdefault(task_uuid, [])
            queue.extend(Forced(state, errors) for _ in range(count))

    def reset(self) -> None:
        with self.state.lock:
            self.state.reset()
            self.clock_offset_s = self.config.clock_offset_s
            self.clock_synchronized = self.config.clock_synchronized
            self.requester_class = self.config.requester_class
            self.paused = False
            self.archiving_blocked = False

    # -- the daemons ---------------------------------------------------------------------------

    def tick(self) -> None:
        launches: list[tuple[str, int]] = []
        with self.state.lock:
            now = self.now()
            for task in list(self.state.tasks.values()):
                self._schedule(task, now)
            for run in sorted(self.state.runs.values(), key=lambda item: item.start):
                self._advance(run, now)
            for run in self.state.runs.values():
                for index, archiving in enumerate(run.archivings):
                    if archiving.completed or archiving.in_flight:
                        continue
                    if archiving.ttl_expires is not None and archiving.ttl_expires < now:
                        archiving.completed = True
                        archiving.next_attempt = None
                        expired = {"return-code": 1, "stdout": "", "stderr": "Time to live expired"}
                        archiving.diags.append({**expired, "time": isodate_time(now)})
                    elif archiving.next_attempt is not None and archiving.next_attempt <= now:
                        archiving.in_flight = True
                        launches.append((run.uuid, index))
        for run_uuid, index in launches:
            with self.state.lock:
                self._deliveries += 1
            threading.Thread(target=self._delivery, args=(run_uuid, index), daemon=True).start()

    def _delivery(self, run_uuid: str, index: int) -> None:
        try:
            self._archive(run_uuid, index)
        finally:
            with self.state.lock:
                self._deliveries -= 1

    def settle(self, timeout_s: float = 30.0) -> None:
        """Forgets every task and run and returns once no push is under way: a test that ends
        while the archiver puts a run to the receiver must not clear the receiver's database
        under that request."""
        self.reset()
        deadline = time.monotonic() + timeout_s
        while True:
            with self.state.lock:
                if self._deliveries == 0:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self._deliveries} archiver pushes still under way after {timeout_s} s")
            time.sleep(0.05)

    def _first_time(self, task: Task, now: datetime) -> datetime:
        if task.start is not None and task.start > now:
            return task.start
        return ceil_second(now + timedelta(seconds=self.config.first_run_delay_s))

    def _next_time(self, task: Task, now: datetime) -> datetime | None:
        """task_next_run(): the next slot on the task's grid after now, its start and its latest run."""
        runs = self.state.runs_of(task.uuid)
        if task.runs == 0 or not runs:
            return self._first_time(task, now)
        latest = max(run.start for run in runs)
        after = max(now, task.start or now, latest)
        if task.repeat_cron is not None:
            return cron_next(task.repeat_cron, after, self.config.horizon + timedelta(days=1))
        assert task.repeat is not None and task.first_start is not None
        step = task.repeat.total_seconds()
        intervals = math.floor((after - task.first_start).total_seconds() / step) + 1
        return task.first_start + timedelta(seconds=step * intervals)

    def _schedule(self, task: Task, now: datetime) -> None:
        if not task.enabled or task.participant != 0:
            return
        if catalog.scheduling_class(task.test_type) == "background-multi":
            if task.runs == 0:
                start = self._first_time(task, now)
                self._post_run(task, start, now, end=task.until or start + task.duration)
            return
        pending = sum(1 for run in self.state.runs_of(task.uuid) if run.state == "pending")
        while pending < self.config.max_pending_runs:
            if task.max_runs is not None and task.runs >= task.max_runs:
                return
            if task.repeat is None and task.repeat_cron is None and task.runs > 0:
                return
            trynext = self._next_time(task, now)
            if trynext is None or (task.until is not None and trynext >= task.until):
                return
            if trynext >= now + self.config.horizon - task.slip:
                return
            self._post_run(task, trynext, now)
            pending += 1

    def _slip_limit(self, task: Task) -> timedelta:
        slip = task.slip
        if task.repeat is not None and slip + task.duration >= task.repeat:
            slip = max(task.repeat - task.duration, timedelta(0))
        return slip

    def _place(self, task: Task, trynext: datetime) -> datetime | None:
        """The scheduler's choice of start within the slip window; exclusive tests avoid each other."""
        slip = self._slip_limit(task)
        exclusive = catalog.scheduling_class(task.test_type) == "exclusive"
        busy = [
            (run.start, run.end)
            for run in self.state.runs.values()
            if exclusive
            and run.state in SLOT_HOLDING
            and catalog.scheduling_class(self.state.tasks[run.task_uuid].test_type) == "exclusive"
        ]

        def earliest_free(begin: datetime) -> datetime:
            moved = True
            while moved:
                moved = False
                for start, end in busy:
                    if start < begin + task.duration and end > begin:
                        begin, moved = end, True
            return begin

        starts = [trynext]
        if task.json.get("schedule", {}).get("sliprand") and slip > timedelta(0):
            offset = timedelta(seconds=self._random.uniform(0.0, slip.total_seconds()))
            starts.insert(0, trynext + offset)
        for begin in starts:
            chosen = earliest_free(begin)
            if chosen <= trynext + slip:
                return chosen
        return None

    def _post_run(self, task: Task, trynext: datetime, now: datetime, end: datetime | None = None) -> None:
        """Puts a run on the timeline: pending, or a non-starter when limits or the schedule say no."""
        verdict = limits.evaluate(task.json, task.hints, self.requester_class)
        errors: str | None = None
        start = trynext
        if not verdict.passed:
            errors = "Run forbidden by limits:\n" + verdict.diags
        else:
            placed = self._place(task, trynext)
            if placed is None:
                errors = "No times available for this run."
            else:
                start = placed
        run = Run(
            uuid=str(uuid.uuid4()),
            task_uuid=task.uuid,
            start=start,
            end=end or start + task.duration,
            state="pending" if errors is None else "nonstart",
            added=now,
            finish_at=start + task.completion,
            errors=errors,
            limit_diags=verdict.diags,
        )
        self.state.runs[run.uuid] = run
        if task.first_start is None:
            task.first_start = trynext
        task.runs += 1
        self.state.changed.notify_all()

    def _advance(self, run: Run, now: datetime) -> None:
        task = self.state.tasks.get(run.task_uuid)
        if task is None:
            return
        if run.state == "pending" and now >= run.start:
            self._start_run(task, run)
        elif run.state == "running" and not run.live:
            two_ended = len(task.participants) > 1
            background_multi = catalog.scheduling_class(task.test_type) == "background-multi"
            due = run.end if two_ended or background_multi else run.finish_at
            if background_multi:
                self._report_intervals(task, run, now)
            if now < due:
                return
            if background_multi:
                run.state = "finished"  # its reports were inserted above, up to its end
                return
            forced = run.forced
            if forced is not None and forced.state == "failed":
                outcome = results.tool_failure(task.test_type, len(task.participants), forced.errors or "Tool failed")
            else:
                outcome = self._replayed(task)
            self._finish(task, run, outcome, now)

    def _replayed(self, task: Task) -> results.RunOutcome:
        """The recorded result of the task's test, or the tool's failure when none can be had."""
        try:
            return results.replayed(task.test_type, task.spec, len(task.participants), self.fixtures)
        except (OSError, KeyError, ValueError) as error:
            return results.tool_failure(task.test_type, len(task.participants), f"fake pScheduler: {error}")

    def _report_intervals(self, task: Task, run: Run, now: datetime) -> None:
        """powstream's reports: every packet-count packets while the long run lasts, the runner
        inserts a run of its own, stamped when reported (start = end), carrying that interval's
        result (the recorded latencybg result), and archives it."""
        spec = task.spec
        every = timedelta(
            seconds=int(spec.get("packet-count", 600)) * float(spec.get("packet-interval", 0.1)) / self.config.speed
        )
        while run.start + every * (run.reports + 1) <= min(now, run.end):
            run.reports += 1
            reported = run.start + every * run.reports
            report = Run(
                uuid=str(uuid.uuid4()), task_uuid=task.uuid, start=reported, end=reported, state="running",
                added=reported, finish_at=reported,
            )  # fmt: skip
            self.state.runs[report.uuid] = report
            self._finish(task, report, self._replayed(task), now)

    def _start_run(self, task: Task, run: Run) -> None:
        """The runner's run_start(); a forced outcome is taken by the next run of the task to start."""
        if self.paused:
            run.state = "missed"
            run.result = {"succeeded": False, "diags": "System was paused."}
            self.state.changed.notify_all()
            return
        forced = run.forced = self.state.take_forced(task.uuid)
        if forced is not None and forced.state in ("nonstart", "missed", "canceled"):
            run.state, run.errors = forced.state, forced.errors
        elif forced is not None and forced.state == "preempted":
            run.state, run.errors = "preempted", forced.errors
            run.result = {"succeeded": False, "diags": "Run was preempted."}
        else:
            run.state = "running"
            task.runs_started += 1
            live = (
                self.config.live_iperf3
                and task.test_type == "throughput"
                and len(task.participants) == 1
                and forced is None
            )
            if live:
                run.live = True
                threading.Thread(target=self._run_iperf3, args=(task, run), daemon=True).start()
        self.state.changed.notify_all()

    def _run_iperf3(self, task: Task, run: Run) -> None:
        time.sleep(catalog.IPERF3_WAIT_SLEEP_S / self.config.speed)
        spec = copy.deepcopy(task.spec)
        seconds = parse_duration(spec["duration"]).total_seconds() if "duration" in spec else 10.0
        outcome = results.live_iperf3(spec, timeout_s=seconds + 15.0)
        with self.state.lock:
            if self.state.runs.get(run.uuid) is run and run.state == "running":
                self._finish(task, run, outcome, self.now())

    def _finish(self, task: Task, run: Run, outcome: results.RunOutcome, now: datetime) -> None:
        """Stores the merged result; the archiving trigger then queues the task's archives."""
        run.state = outcome.state
        run.result = outcome.result
        run.result_full = outcome.result_full
        run.result_merged = outcome.result_merged
        run.errors = outcome.errors
        if run.state != "finished":
            run.clock_survey = [self.clock_state() for _ in task.participants]
        if run.result_merged is not None and task.participant == 0:
            success = RUN_STATES[run.state][2]
            for number, archive in enumerate(task.json.get("archives", [])):
                spec = copy.deepcopy(archive)
                spec.setdefault("runs", "succeeded")
                if not archiver.eligible(str(spec["runs"]), success):
                    continue
                ttl = parse_duration(spec["ttl"]) if "ttl" in spec else None
                run.archivings.append(
                    Archiving(
                        index=number,
                        spec=spec,
                        archiver=catalog.enumeration("archiver", str(spec["archiver"])),
                        created=now,
                        ttl_expires=now + ttl if ttl is not None else None,
                        next_attempt=now,
                    )
                )
        self.state.changed.notify_all()

    def _archive(self, run_uuid: str, index: int) -> None:
        """One archiver attempt for one archiving of a run (archiver.raw's ArchiveWorker)."""
        with self.state.lock:
            run = self.state.runs.get(run_uuid)
            task = self.state.tasks.get(run.task_uuid) if run else None
            if run is None or task is None:
                return
            archiving = run.archivings[index]
            scheduling_class = catalog.scheduling_class(task.test_type)
            document: Any = archiver.envelope(task, run, scheduling_class, self.local_host, archiving.spec, "1.0")
            data = copy.deepcopy(archiving.data)
            attempts_before = archiving.attempts
            blocked = self.archiving_blocked
        permanent = False
        delivery: archiver.Delivery | None = None
        result: JSON = {"succeeded": True, "error": "Archiving stopped by transform."}
        if "transform" in archiving.spec:
            document, problem = archiver.transform(archiving.spec["transform"], document)
            if problem:
                result, permanent = {"succeeded": False, "error": problem}, True
        if not permanent and document is not None:
            delivery = archiver.deliver(data, archiver.archive_json_body(document), blocked)
            result = {"succeeded": True} if delivery.succeeded else {"succeeded": False, "error": delivery.error}
            if not delivery.succeeded and "retry-policy" in data:
                wait = archiver.retry_wait(data["retry-policy"], attempts_before)
                if wait is not None:
                    result["retry"] = wait
        with self.state.lock:
            if self.state.runs.get(run_uuid) is not run:
                return  # the fake was reset meanwhile
            now = self.now()
            archiving.attempts += 1
            archiving.last_attempt = now
            archiving.diags.append(archiver.attempt_diag(isodate_time(now), result))
            archiving.in_flight = False
            if permanent or result["succeeded"] or "retry" not in result:
                archiving.completed = True
                archiving.archived = bool(result["succeeded"]) and not permanent
                archiving.next_attempt = None
            else:
                archiving.next_attempt = now + parse_duration(str(result["retry"]))
            self.state.push_attempts.append(
                PushAttempt(
                    task=task.uuid,
                    run=run.uuid,
                    archive=archiving.index,
                    attempt=archiving.attempts,
                    time=isodate_time(now),
                    method=delivery.method if delivery else "",
                    url=delivery.url if delivery else str(data.get("_url")),
                    headers=dict(delivery.headers) if delivery else {},
                    status=delivery.status if delivery else None,
                    succeeded=bool(result["succeeded"]),
                    error=result.get("error"),
                    retry=result.get("retry"),
                    body_bytes=delivery.body_bytes if delivery else 0,
                )
            )
            self.state.changed.notify_all()
