"""The pScheduler REST API (pschedulerapiserver: admin, tests, tools, archivers, tasks, runs),
answered from the fake node's state. URLs in answers are built from the request's Host header,
as Flask's request.base_url does.
"""

from __future__ import annotations

import copy
import json
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from . import catalog, posting
from .iso8601 import isodate_time, parse_timestamp, record_time
from .model import RUN_STATES, Run, Task, sanitized
from .node import Node
from .responses import (
    INTERNAL_PROBLEM,
    ApiError,
    Response,
    bad_request,
    forbidden,
    not_found,
    ok_json,
    ok_text,
    server_error,
    text_error,
)
from .schemas import ThroughputValidatorCrash, spec_error

JSON = dict[str, Any]
MAX_API = 6
ROOT = "/pscheduler"
STARTED = time.time()


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # below /pscheduler, without the query
    query: Mapping[str, str]
    body: bytes
    client: str
    server: str
    host: str  # the Host header (host[:port])

    def arg(self, name: str) -> str | None:
        return self.query.get(name)

    def flag(self, name: str) -> bool:
        """arg_boolean: present with no value, or true/yes/1."""
        value = self.query.get(name)
        return value is not None and value.lower() in ("", "true", "yes", "1")

    def integer(self, name: str) -> int | None:
        value = self.query.get(name)
        if value is None:
            return None
        try:
            return int(value)
        except ValueError as error:
            raise ValueError("Invalid integer.") from error

    def cardinal(self, name: str) -> int | None:
        value = self.query.get(name)
        if value is None:
            return None
        try:
            number = int(value)
        except ValueError:
            number = 0
        if number < 1:
            raise ValueError("Invalid cardinal; expecting integer > 0")
        return number

    def timestamp(self, name: str) -> datetime | None:
        value = self.query.get(name)
        if value is None:
            return None
        try:
            return parse_timestamp(value)
        except ValueError as error:
            raise ValueError("Invalid ISO8601 date") from error

    @property
    def pretty(self) -> bool:
        return self.flag("pretty")

    @property
    def base_url(self) -> str:
        return f"https://{self.host}{ROOT}{self.path}"

    def root_url(self, path: str = "") -> str:
        return f"https://{self.host}{ROOT}/{path}"


def _uuid_ok(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


Handler = Callable[["PSchedulerApi", Request, re.Match[str]], Response]


class PSchedulerApi:
    """Routes a request below /pscheduler to the handler pScheduler's Flask app would use."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.routes: list[tuple[re.Pattern[str], dict[str, Handler]]] = [
            (re.compile(r"^/?$"), {"GET": PSchedulerApi.root}),
            (re.compile(r"^/api$"), {"GET": PSchedulerApi.api}),
            (re.compile(r"^/hostname$"), {"GET": PSchedulerApi.hostname}),
            (re.compile(r"^/schedule-horizon$"), {"GET": PSchedulerApi.schedule_horizon}),
            (re.compile(r"^/clock$"), {"GET": PSchedulerApi.clock}),
            (re.compile(r"^/status$"), {"GET": PSchedulerApi.status}),
            (re.compile(r"^/contexts$"), {"GET": PSchedulerApi.contexts}),
            (re.compile(r"^/(?P<kind>tests|tools|archivers)$"), {"GET": PSchedulerApi.plugins}),
            (re.compile(r"^/(?P<kind>tests|tools|archivers)/(?P<name>[^/]+)$"), {"GET": PSchedulerApi.plugin}),
            (re.compile(r"^/tests/(?P<name>[^/]+)/spec/is-valid$"), {"GET": PSchedulerApi.spec_is_valid}),
            (re.compile(r"^/tests/(?P<name>[^/]+)/participants$"), {"GET": PSchedulerApi.test_participants}),
            (re.compile(r"^/tasks$"), {"GET": PSchedulerApi.tasks_list, "POST": PSchedulerApi.tasks_post}),
            (
                re.compile(r"^/tasks/(?P<task>[^/]+)$"),
                {
                    "GET": PSchedulerApi.task_get,
                    "POST": PSchedulerApi.task_participant_post,
                    "DELETE": PSchedulerApi.task_delete,
                },
            ),
            (re.compile(r"^/tasks/(?P<task>[^/]+)/cli$"), {"GET": PSchedulerApi.task_cli}),
            (re.compile(r"^/tasks/(?P<task>[^/]+)/runs$"), {"GET": PSchedulerApi.runs_list}),
            (
                re.compile(r"^/tasks/(?P<task>[^/]+)/runs/(?P<run>[^/]+)$"),
                {"GET": PSchedulerApi.run_get, "DELETE": PSchedulerApi.run_delete},
            ),
            (re.compile(r"^/tasks/(?P<task>[^/]+)/runs/(?P<run>[^/]+)/result$"), {"GET": PSchedulerApi.run_result}),
        ]

    def handle(self, request: Request) -> Response:
        try:
            api_level = request.integer("api")
        except ValueError as error:
            given = request.arg("api")
            return text_error(400, f"Invalid API value '{given}': Invalid API value {given}: {error}")
        if api_level is not None and api_level > MAX_API:
            return text_error(501, f"No API above {MAX_API} is supported")
        for pattern, methods in self.routes:
            match = pattern.match(request.path)
            if match is None:
                continue
            handler = methods.get(request.method)
            if handler is None:
                # Flask's MethodNotAllowed reaches pScheduler's catch-all Exception handler.
                return text_error(500, INTERNAL_PROBLEM)
            try:
                return handler(self, request, match)
            except ApiError as error:
                return text_error(error.status, error.message)
        return text_error(404, "Resource not found.")

    # -- answers shared by several routes ------------------------------------------------------

    @staticmethod
    def checked(request: Request, data: Any, required_key: str | None) -> Response:
        """ok_json_sanitize_checked: private values shown only to a caller with the task's key."""
        provided = request.arg("key")
        if required_key is None or provided is None:
            return ok_json(sanitized(data), request.pretty)
        if provided == required_key:
            return ok_json(data, request.pretty)
        raise forbidden()

    def _task(self, task_uuid: str) -> Task:
        if not _uuid_ok(task_uuid):
            raise not_found()
        task = self.node.state.tasks.get(task_uuid)
        if task is None:
            raise not_found()
        return task

    @staticmethod
    def _required_key(task: Task) -> str | None:
        if task.participant > 0:
            return task.participant_key
        key = task.json.get("_key")
        return str(key) if key is not None else None

    def _task_json(self, task: Task, href: str, detail: bool) -> JSON:
        body = task.json_detail(catalog.scheduling_class(task.test_type))
        body["href"] = href
        body.pop("participants", None)
        if detail:
            body["detail"].update(
                {
                    "href": href,
                    "runs-href": f"{href}/runs",
                    "first-run-href": f"{href}/runs/first",
                    "next-run-href": f"{href}/runs/next",
                }
            )
        else:
            body.pop("detail", None)
        return body

    # -- host facts ------------------------------------------------------------------------------

    def root(self, request: Request, match: re.Match[str]) -> Response:
        host = urlsplit(f"https://{request.host}").hostname
        return ok_json(f"This is the pScheduler API server on {host} ({self.node.config.hostname})", request.pretty)

    def api(self, request: Request, match: re.Match[str]) -> Response:
        return ok_json(MAX_API, request.pretty)

    def hostname(self, request: Request, match: re.Match[str]) -> Response:
        return ok_json(self.node.config.hostname, request.pretty)

    def schedule_horizon(self, request: Request, match: re.Match[str]) -> Response:
        return ok_json("P1D", request.pretty)

    def clock(self, request: Request, match: re.Match[str]) -> Response:
        return ok_json(self.node.clock_state(), request.pretty)

    def status(self, request: Request, match: re.Match[str]) -> Response:
        now = self.node.now()
        uptime = f"PT{int(time.time() - STARTED)}S"
        service = {"uptime": uptime, "updates": 1, "last": record_time(now), "next_time": "PT1S"}
        with self.node.state.lock:
            runs = list(self.node.state.runs.values())
        finished = [run.end for run in runs if RUN_STATES[run.state][1]]
        return ok_json(
            {
                "time": isodate_time(now),
                "limits": {"ok": True},
                "services": {name: dict(service) for name in ("archiver", "runner", "scheduler", "ticker")},
                "runs": {
                    "last-finished": record_time(max(finished)) if finished else None,
                    "last-scheduled": record_time(max(run.added for run in runs)) if runs else None,
                },
            },
            request.pretty,
        )

    def contexts(self, request: Request, match: re.Match[str]) -> Response:
        return ok_json([], request.pretty)

    # -- plugins ---------------------------------------------------------------------------------

    def plugins(self, request: Request, match: re.Match[str]) -> Response:
        kind = match["kind"]
        if kind == "tools" and request.arg("test") is not None:
            return self._tools_for_test(request)
        table = {"tests": catalog.TESTS, "tools": catalog.TOOLS, "archivers": catalog.ARCHIVERS}[kind]
        items = []
        for name in sorted(table):
            if kind == "tools" and name in self.node.config.without_tools:
                continue
            body = catalog.enumeration(kind[:-1], name)
            body["href"] = f"{request.base_url}/{name}"
            items.append(body if request.flag("expanded") else body["href"])
        return ok_json(items, request.pretty)

    def _tools_for_test(self, request: Request) -> Response:
        try:
            test = posting.decomment(json.loads(request.arg("test") or ""))
        except ValueError as error:
            raise server_error(INTERNAL_PROBLEM) from error
        test_type = test.get("type") if isinstance(test, dict) else None
        without = self.node.config.without_tools
        names = [name for name in catalog.TOOL_ORDER.get(str(test_type), []) if name not in without]
        api_level = request.integer("api") or 1
        if api_level < 6:
            return ok_json([catalog.enumeration("tool", name) for name in names], request.pretty)
        offers = [
            {"can-run": {"can-run": name in names}, "tool": catalog.enumeration("tool", name)}
            for name in sorted(catalog.TOOLS)
            if name not in without
        ]
        for offer in offers:
            if not offer["can-run"]["can-run"]:
                offer["can-run"]["reasons"] = ["Unsupported test type"]
        return ok_json(offers, request.pretty)

    def plugin(self, request: Request, match: re.Match[str]) -> Response:
        kind, name = match["kind"], match["name"]
        table = {"tests": catalog.TESTS, "tools": catalog.TOOLS, "archivers": catalog.ARCHIVERS}[kind]
        if name not in table or (kind == "tools" and name in self.node.config.without_tools):
            raise not_found(f'No {kind[:-1]} "{name}" is available.')
        body = catalog.enumeration(kind[:-1], name)
        body["href"] = request.base_url
        return ok_json(body, request.pretty)

    def _spec_arg(self, request: Request, name: str) -> JSON:
        if name not in catalog.TESTS:
            raise not_found(f'No test "{name}" is available.')
        text = request.arg("spec")
        if text is None:
            raise bad_request("No test spec provided")
        try:
            spec = json.loads(text)
        except ValueError as error:
            raise bad_request(f"Invalid JSON: {error}") from error
        if not isinstance(spec, dict):
            raise bad_request("JSON must be an object")
        return spec

    def spec_is_valid(self, request: Request, match: re.Match[str]) -> Response:
        spec = self._spec_arg(request, match["name"])
        try:
            problem = spec_error(match["name"], spec)
        except ThroughputValidatorCrash as crash:
            raise server_error(f"Unable to validate test spec: {posting.THROUGHPUT_CRASH}") from crash
        return ok_json({"valid": problem is None, **({"error": problem} if problem else {})}, request.pretty)

    def test_participants(self, request: Request, match: re.Match[str]) -> Response:
        spec = self._spec_arg(request, match["name"])
        listed = catalog.participants(match["name"], spec)
        body: JSON = {"participants": listed}
        if listed[0] is None:
            body["null-reason"] = "No source specified"
        return ok_json(body, request.pretty)

    # -- tasks -----------------------------------------------------------------------------------

    def tasks_list(self, request: Request, match: re.Match[str]) -> Response:
        wanted: Any = None
        text = request.arg("json")
        if text is not None:
            try:
                wanted = posting.decomment(json.loads(text))
            except ValueError as error:
                raise bad_request(f"Invalid JSON: {error}") from error
        expanded, detail = request.flag("expanded"), request.flag("detail")
        with self.node.state.lock:
            tasks = sorted(self.node.state.tasks.values(), key=lambda task: task.added)
            listed: list[Any] = []
            for task in tasks:
                href = f"{request.base_url}/{task.uuid}"
                if wanted is not None:
                    document = task.json_detail(catalog.scheduling_class(task.test_type))
                    if not contains(document, wanted):
                        continue
                listed.append(self._task_json(task, href, detail) if expanded else href)
        return ok_json(sanitized(listed), request.pretty)

    def tasks_post(self, request: Request, match: re.Match[str]) -> Response:
        context = self.node.posting_context({"requester": request.client, "server": request.server})
        task, roots = posting.build_task(request.body, context)
        if roots:
            posting.post_to_participants(task, roots)
            task.participant_apis = roots
        self.node.admit(task)
        url = f"{request.base_url}/{task.uuid}"
        if not request.flag("expanded"):
            return ok_json(url)
        params = [name for name in ("detail", "pretty") if request.flag(name)]
        location = url + ("?" + "&".join(params) if params else "")
        return Response(303, (location + "\n").encode(), "text/html; charset=utf-8", {"Location": location})

    def task_get(self, request: Request, match: re.Match[str]) -> Response:
        with self.node.state.lock:
            task = self._task(match["task"])
            body = self._task_json(task, request.base_url, request.flag("detail"))
            required = self._required_key(task)
        return self.checked(request, body, required)

    def task_participant_post(self, request: Request, match: re.Match[str]) -> Response:
        try:
            participant = request.cardinal("participant")
        except ValueError as error:
            raise bad_request(f"Invalid participant: {error}") from error
        if participant is None:
            raise bad_request("Invalid participant: Invalid cardinal; expecting integer > 0")
        context = self.node.posting_context({"requester": request.client, "server": request.server})
        task = posting.accept_participant_task(request.body, match["task"], participant, context)
        try:
            self.node.admit(task)
        except ValueError as error:
            raise bad_request(f"Task error: {error}") from error
        return ok_text(request.base_url)

    def task_delete(self, request: Request, match: re.Match[str]) -> Response:
        if not _uuid_ok(match["task"]) or self.node.disable(match["task"]) is None:
            raise not_found()
        return ok_text()

    def task_cli(self, request: Request, match: re.Match[str]) -> Response:
        with self.node.state.lock:
            task = self._task(match["task"])
            return ok_json([task.test_type, *task.cli], request.pretty)

    # -- runs ------------------------------------------------------------------------------------

    def runs_list(self, request: Request, match: re.Match[str]) -> Response:
        task_uuid = match["task"]
        if not _uuid_ok(task_uuid):
            raise not_found()
        try:
            start, end = request.timestamp("start"), request.timestamp("end")
            limit = request.cardinal("limit")
        except ValueError as error:
            raise bad_request(str(error)) from error
        upcoming = request.flag("upcoming")
        with self.node.state.lock:
            now = self.node.now()
            selected = []
            for run in self.node.state.runs_of(task_uuid):
                if start is not None and run.start < start:
                    continue
                if end is not None and run.end > end:
                    continue
                if upcoming and not (
                    (run.start <= now < run.end or run.start > now)
                    and run.state in ("pending", "on-deck", "running", "nonstart")
                ):
                    continue
                selected.append(f"{request.base_url}/{run.uuid}")
        return ok_json(selected[:limit] if limit else selected, request.pretty)

    def _first_run(self, task_uuid: str, future: bool) -> Run | None:
        now = self.node.now()
        for run in self.node.state.runs_of(task_uuid):
            if not future or run.start >= now:
                return run
        return None

    def run_get(self, request: Request, match: re.Match[str]) -> Response:
        task_uuid, run_id = match["task"], match["run"]
        if not _uuid_ok(task_uuid) or (run_id not in ("first", "next") and not _uuid_ok(run_id)):
            raise not_found()
        wait_local, wait_merged = request.flag("wait-local"), request.flag("wait-merged")
        if wait_local and wait_merged:
            raise bad_request("Cannot wait on local and merged results")
        try:
            wait_s = request.integer("wait")
        except ValueError as error:
            raise server_error(INTERNAL_PROBLEM) from error
        wait_s = 30 if wait_s is None else wait_s
        if wait_s < 0:
            raise bad_request("Wait time must be >= 0")
        if run_id in ("first", "next"):
            # runs.py waits in 1 s sleeps but counts tries at 0.5 s, so it can wait twice as long.
            tries = int(wait_s / 0.5) if wait_s > 0 else 1
            found: Run | None = None
            while tries > 0:
                with self.node.state.lock:
                    found = self._first_run(task_uuid, run_id == "next")
                if found is not None:
                    break
                if wait_s > 0:
                    time.sleep(1.0)
                tries -= 1
            if found is None:
                raise not_found()
            run_id = found.uuid
        tries = wait_s * 2 if (wait_local or wait_merged) else 1
        while True:
            with self.node.state.lock:
                task = self.node.state.tasks.get(task_uuid)
                run = self.node.state.runs.get(run_id)
                if task is None or run is None or run.task_uuid != task_uuid:
                    raise not_found()
                record = run.as_json(task)
                finished = run.finished
            pending = (wait_local and record["result"] is None) or (
                wait_merged and (record["result-full"] is None or not finished)
            )
            tries -= 1
            if not (wait_local or wait_merged) or not pending or tries <= 0:
                break
            time.sleep(0.5)
        parts = request.path.split("/")
        parts[-1] = run_id
        href = f"https://{request.host}{ROOT}{'/'.join(parts)}"
        record["href"] = href
        record["task-href"] = request.root_url(f"tasks/{task_uuid}")
        record["result-href"] = f"{href}/result"
        if record["participants"] and record["participants"][0] is None:
            record["participants"][0] = request.host
        return self.checked(request, record, self._required_key(task))

    def run_delete(self, request: Request, match: re.Match[str]) -> Response:
        task_uuid, run_id = match["task"], match["run"]
        if not _uuid_ok(task_uuid) or not _uuid_ok(run_id):
            raise not_found()
        with self.node.state.lock:
            run = self.node.state.runs.get(run_id)
            if task_uuid not in self.node.state.tasks or run is None or run.task_uuid != task_uuid:
                raise not_found()
            del self.node.state.runs[run_id]
        return ok_text()

    def run_result(self, request: Request, match: re.Match[str]) -> Response:
        task_uuid, run_id = match["task"], match["run"]
        if not _uuid_ok(task_uuid) or not _uuid_ok(run_id):
            raise not_found()
        wait = request.flag("wait")
        form = request.arg("format") or "application/json"
        if form not in ("application/json", "text/html", "text/plain"):
            raise bad_request(f"Unsupported format {form}")

        def merged() -> tuple[Task, JSON | None]:
            with self.node.state.lock:
                task = self.node.state.tasks.get(task_uuid)
                run = self.node.state.runs.get(run_id)
                if task is None or run is None or run.task_uuid != task_uuid:
                    raise not_found()
                return task, copy.deepcopy(run.result_merged)

        task, result = merged()
        # runs.py's wait logic is inverted: without ?wait it retries once after 0.25 s, then 404s.
        if not wait and result is None:
            time.sleep(0.25)
            raise not_found()
        if form == "application/json":
            key = task.json.get("_key") or task.participant_key
            return self.checked(request, result, str(key) if key else None)
        if result is None or not result.get("succeeded"):
            text = "Run failed." if form == "text/plain" else "<p>Run failed.</p>"
            return ok_text(text, form)
        return ok_text(summary_text(task.test_type, result, form == "text/html"), form)


def contains(document: Any, wanted: Any) -> bool:
    """PostgreSQL jsonb @> (containment), which GET /tasks?json= applies to the task."""
    if isinstance(wanted, dict):
        return isinstance(document, dict) and all(
            key in document and contains(document[key], value) for key, value in wanted.items()
        )
    if isinstance(wanted, list):
        if not isinstance(document, list):
            return False
        return all(any(contains(item, element) for item in document) for element in wanted)
    if isinstance(wanted, bool) or isinstance(document, bool):
        return wanted is document
    return bool(document == wanted)


def summary_text(test_type: str, result: JSON, html: bool) -> str:
    """A short rendering in place of the test plugins' result-format output."""
    if test_type == "throughput":
        bits = result.get("summary", {}).get("summary", {}).get("throughput-bits")
        line = f"Summary: {bits / 1e6:.2f} Mbps" if isinstance(bits, int | float) else "Summary: unknown"
    elif test_type == "rtt":
        line = f"{result.get('sent')} sent, {result.get('received')} received, {result.get('loss')} loss"
    else:
        line = f"{len(result.get('paths', [[]])[0])} hops"
    return f"<p>{line}</p>" if html else line
