"""POST /tasks, step by step as pScheduler's tasks.py and the task table's trigger do it.

Order and answers follow the real server: JSON and schema (400), TaskSpecification (400), the
test plugin's spec-is-valid (400, or 500 for throughput, see schemas.py), archiver data (400),
lead-bind (400), limits (403 "Task forbidden by limits:"), participants' APIs (500), a common
tool (422), then the database's own checks, whose exceptions surface as a bare 500.
"""

from __future__ import annotations

import copy
import json
import math
import secrets
import ssl
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from . import catalog, limits, schemas
from .archiver import curl_error, jq_compiles
from .iso8601 import is_duration, parse_duration, parse_timestamp
from .model import Task
from .responses import INTERNAL_PROBLEM, ApiError, bad_request, forbidden, no_can_do, server_error

JSON = dict[str, Any]
PLUGIN_ROOT = "/usr/libexec/pscheduler/classes"
THROUGHPUT_CRASH = (
    "Traceback (most recent call last):\n"
    f'  File "{PLUGIN_ROOT}/test/throughput/spec-is-valid", line 22, in <module>\n'
    "    pscheduler.succeed.json({\n"
    "AttributeError: 'function' object has no attribute 'json'"
)
FOREVER = ("forever", "infinity", "doomsday")


@dataclass(frozen=True)
class PostingContext:
    """What the node knows when a task arrives."""

    local_host: str  # pscheduler.api_local_host(): fills a null lead, names this node in hrefs
    local_names: frozenset[str]  # addresses and names that are "on this host" (lead-bind)
    requester_class: limits.RequesterClass
    speed: float
    now: datetime
    hints: JSON
    check_participants: bool
    participant_apis: Mapping[str, str] = field(default_factory=dict)
    without_tools: frozenset[str] = frozenset()


def decomment(value: Any) -> Any:
    """pscheduler.json_load strips '#' keys (its low-budget comments) at any depth."""
    if isinstance(value, dict):
        return {key: decomment(item) for key, item in value.items() if not key.startswith("#")}
    if isinstance(value, list):
        return [decomment(item) for item in value]
    return value


def load_json(body: bytes, max_schema: int) -> JSON:
    """pscheduler.json_load(max_schema=...): ValueError with pScheduler's wording."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError as error:
        raise ApiError(500, INTERNAL_PROBLEM) from error
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ValueError(f"Invalid JSON: {error}") from error
    if not isinstance(document, dict):
        raise ValueError("JSON must be an object")
    number = document.get("schema", 1)
    if not isinstance(number, int) or isinstance(number, bool):
        raise ValueError("Schema value must be an integer")
    if number > max_schema:
        raise ValueError(f"Schema version {number} is not supported (highest is {max_schema})")
    cleaned = decomment(document)
    assert isinstance(cleaned, dict)
    return cleaned


def api_root_for(participant: str, participant_apis: Mapping[str, str]) -> str:
    """pscheduler.api_url_hostport: https://host[:port]/pscheduler, unless a test mapped it."""
    if participant in participant_apis:
        return participant_apis[participant].rstrip("/")
    return f"https://{participant}/pscheduler"


def _failure_text(url: str, error: BaseException, timeout_s: float) -> str:
    """What pycurl would have said, since pScheduler's url_get reports curl's message."""
    parts = urlsplit(url)
    reason = getattr(error, "reason", error)
    cause = reason if isinstance(reason, BaseException) else error
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return curl_error(parts.hostname or "", port, cause, int(timeout_s), time.monotonic())


def url_get_json(url: str, timeout_s: float = 10.0) -> tuple[int, Any]:
    """pscheduler.url_get(throw=False) with verify_keys=False: (status, JSON or text)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, timeout=timeout_s, context=context) as response:  # noqa: S310
            text = response.read().decode()
            status = int(response.status)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (OSError, ValueError) as error:
        return 400, _failure_text(url, error, timeout_s)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def url_send(url: str, method: str, body: bytes | None, timeout_s: float = 10.0) -> tuple[int, str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(url, data=body, method=method)  # noqa: S310
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:  # noqa: S310
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (OSError, ValueError) as error:
        return 400, _failure_text(url, error, timeout_s)


def _validate_test(task: JSON) -> None:
    test_type = task["test"]["type"]
    if test_type not in catalog.TESTS:
        raise server_error(
            f"Unable to validate test spec: [Errno 2] No such file or directory: "
            f"'{PLUGIN_ROOT}/test/{test_type}/spec-is-valid'"
        )
    try:
        problem = schemas.spec_error(test_type, task["test"]["spec"])
    except schemas.ThroughputValidatorCrash as crash:
        raise server_error(f"Unable to validate test spec: {THROUGHPUT_CRASH}") from crash
    if problem:
        raise bad_request(f"Invalid test specification: {problem}")


def _validate_archives(task: JSON) -> None:
    for archive in task.get("archives", []):
        name = archive["archiver"]
        if name not in catalog.ARCHIVERS:
            raise server_error(
                "Unable to validate test spec: [Errno 2] No such file or directory: "
                f"'{PLUGIN_ROOT}/archiver/{name}/data-is-valid'"
            )
        problem = schemas.http_data_error(archive["data"])
        if problem:
            raise bad_request(f"Invalid archiver data: {problem}")
        if "transform" in archive:
            complaint = jq_compiles(archive["transform"])
            if complaint:
                raise server_error(f"Invalid transform: {complaint}")


def _offers(participant: str, test: JSON, context: PostingContext) -> list[str] | None:
    """Asks a non-lead participant's API which tools can run the test (what the lead does)."""
    root = api_root_for(participant, context.participant_apis)
    status, api_level = url_get_json(f"{root}/api")
    if status == 400:
        raise ValueError(str(api_level))
    if status in (202, 204, 205, 206, 207, 208, 226) or 300 <= status <= 499:
        raise ValueError("Host is not running pScheduler")
    if status != 200:
        raise ValueError(f"returned status {status}: {api_level}")
    if not isinstance(api_level, int):
        raise ValueError(f"{participant} returned bad API value {api_level}")
    query = urlencode({"test": json.dumps(test, separators=(",", ":")), "api": api_level})
    status, offered = url_get_json(f"{root}/tools?{query}")
    if status != 200:
        raise ValueError(f"{status}: {offered}")
    if not isinstance(offered, list):
        return None
    names: list[str] = []
    for offer in offered:
        if api_level >= 6 and isinstance(offer, dict) and "can-run" in offer:
            if offer["can-run"].get("can-run"):
                names.append(str(offer["tool"]["name"]))
        elif isinstance(offer, dict):
            names.append(str(offer.get("name")))
    return names


def _pick_tool(offers: list[list[str] | None], preferred: list[str] | None) -> str | None:
    """tasks.py pick_tool: tools every participant offers, by preference list or summed position."""
    count: dict[str, int] = {}
    score: dict[str, int] = {}
    for offer in offers:
        for position, name in enumerate(offer or []):
            count[name] = count.get(name, 0) + 1
            score[name] = score.get(name, 0) + position
    common = {name: score[name] for name in count if count[name] == len(offers)}
    if not common:
        return None
    if preferred is None:
        return sorted(common.items(), key=lambda item: item[1])[0][0]
    return next((name for name in preferred if name in common), None)


def _no_tool_message(participants: list[str], offers: list[list[str] | None]) -> str:
    blocks = []
    for participant, offer in zip(participants, offers, strict=True):
        if not offer:
            blocks.append(f"{participant}:\n\n  Offered nothing.")
            continue
        listed = "\n    ".join(offer)
        blocks.append(f"{participant}:\n\n  Offered\n    {listed}\n  Declined nothing.")
    return "None of the participants could run this test:\n\n" + "\n".join(blocks)


def _start_time(text: Any, now: datetime) -> datetime | None:
    if text is None or text == "soonest":
        return None
    if isinstance(text, str) and text.startswith("@") and is_duration(text[1:]):
        step = parse_duration(text[1:]).total_seconds()
        epoch = now.timestamp()
        return datetime.fromtimestamp(math.ceil(epoch / step) * step, tz=now.tzinfo)
    if is_duration(text):
        return now + parse_duration(str(text))
    return parse_timestamp(str(text))


def _until_time(text: Any, now: datetime) -> datetime | None:
    if text is None or text in FOREVER:
        return None
    if is_duration(text):
        return now + parse_duration(str(text))
    return parse_timestamp(str(text))


@dataclass(frozen=True)
class Schedule:
    start: datetime | None
    slip: timedelta
    repeat: timedelta | None
    repeat_cron: str | None
    until: datetime | None
    max_runs: int | None


def parse_schedule(task: JSON, now: datetime) -> Schedule:
    """The task trigger's schedule reading; its exceptions reach clients as a bare 500."""
    if "schedule" not in task:
        raise server_error(INTERNAL_PROBLEM)  # "Task package has no schedule section."
    schedule = task["schedule"]
    repeat = parse_duration(schedule["repeat"]) if "repeat" in schedule else None
    cron = schedule.get("repeat-cron")
    if repeat is not None and repeat.total_seconds() <= 0:
        raise server_error(INTERNAL_PROBLEM)  # "Cannot divide by a zero interval"
    start = _start_time(schedule.get("start"), now)
    max_runs = schedule.get("max-runs")
    until = _until_time(schedule.get("until"), now)
    if repeat is None and cron is None:
        max_runs, until = 1, None
    if until is not None and until <= now:
        raise server_error(INTERNAL_PROBLEM)  # "Until must be in the future."
    if start is not None and until is not None and until <= start:
        raise server_error(INTERNAL_PROBLEM)  # "Until must be after the start."
    slip = parse_duration(schedule["slip"]) if "slip" in schedule else timedelta(0)
    return Schedule(start, slip, repeat, cron, until, max_runs)


def build_task(body: bytes, context: PostingContext) -> tuple[Task, list[str]]:
    """Validates and admits a posted task; returns it with the API roots of its other participants."""
    try:
        task = load_json(body, max_schema=5)
    except ValueError as error:
        raise bad_request(f"Invalid task specification: {error}") from error
    problem = schemas.task_error(task)
    if problem:
        raise bad_request(f"Invalid task specification: {problem}")
    _validate_test(task)
    _validate_archives(task)
    lead_bind = task.get("lead-bind")
    if lead_bind is not None and lead_bind not in context.local_names:
        raise bad_request(f"Lead bind '{lead_bind}' is not  on this host")

    verdict = limits.evaluate(task, context.hints, context.requester_class)
    if not verdict.passed:
        raise forbidden("Task forbidden by limits:\n" + verdict.diags)
    task = verdict.task
    _validate_test(task)

    test_type = task["test"]["type"]
    spec = task["test"]["spec"]
    participants = catalog.participants(test_type, spec)
    if participants[0] is None:
        participants[0] = context.local_host
    names = [str(participant) for participant in participants]

    offers: list[list[str] | None] = [[t for t in catalog.TOOL_ORDER[test_type] if t not in context.without_tools]]
    roots: list[str] = []
    for participant in names[1:]:
        if not context.check_participants:
            offers.append(list(catalog.TOOL_ORDER[test_type]))
            continue
        try:
            offers.append(_offers(participant, task["test"], context))
        except ValueError as error:
            raise server_error(f"Error getting tools from {participant}: {error}") from error
        roots.append(api_root_for(participant, context.participant_apis))
    preferred = task.get("tools")
    tool = _pick_tool(offers, list(preferred) if isinstance(preferred, list) else None)
    if tool is None:
        raise no_can_do(_no_tool_message(names, offers))
    task["tool"] = tool

    schedule = parse_schedule(task, context.now)
    duration = catalog.tool_duration(test_type, spec) / context.speed
    completion = min(catalog.tool_completion(test_type, spec) / context.speed, duration)
    participant_key = None
    if len(names) > 1:
        participant_key = str(task["_key"]) if "_key" in task else secrets.token_urlsafe(48)[:64]
    admitted = Task(
        uuid=str(uuid.uuid4()),
        json=copy.deepcopy(task),
        participants=list(participants),
        participant=0,
        added=context.now,
        duration=duration,
        completion=completion,
        start=schedule.start,
        slip=schedule.slip,
        repeat=schedule.repeat,
        until=schedule.until,
        max_runs=schedule.max_runs,
        hints=dict(context.hints),
        diags=verdict.diags,
        cli=catalog.cli(spec),
        participant_key=participant_key,
        repeat_cron=schedule.repeat_cron,
    )
    return admitted, roots


def post_to_participants(task: Task, roots: list[str]) -> None:
    """Gives every other participant the task with the same UUID (POST /tasks/<uuid>?participant=N)."""
    package = copy.deepcopy(task.json)
    package["participants"] = list(task.participants)
    if task.participant_key is not None and "_key" not in package:
        package["_key"] = task.participant_key
    body = json.dumps(package).encode()
    for number, root in enumerate(roots, start=1):
        status, text = url_send(f"{root}/tasks/{task.uuid}?participant={number}", "POST", body)
        if status != 200:
            name = task.participants[number]
            raise server_error(f"Error while tasking {name}: Unable to post task to {name}: {text.strip()}")


def delete_at_participants(task: Task) -> None:
    """api_task_disable slings a DELETE at the other participants, with the participant key."""
    suffix = f"?key={quote(task.participant_key)}" if task.participant_key else ""
    for root in task.participant_apis:
        url_send(f"{root}/tasks/{task.uuid}{suffix}", "DELETE", None)


def accept_participant_task(body: bytes, task_uuid: str, participant: int, context: PostingContext) -> Task:
    """POST /tasks/<uuid>?participant=N from a lead: stored, limit-checked, never scheduled here."""
    try:
        task = load_json(body, max_schema=4)
    except ValueError as error:
        raise bad_request(f"Invalid JSON: {error}") from error
    verdict = limits.evaluate(task, context.hints, context.requester_class)
    if not verdict.passed:
        raise forbidden("Task forbidden by limits:\n" + verdict.diags)
    participants = task.pop("participants", None)
    if not isinstance(participants, list):
        raise bad_request("Task error: 'participants'")
    if participant >= len(participants):
        raise bad_request("Task error: Participant number is invalid for this test")
    test_type = task["test"]["type"]
    spec = task["test"]["spec"]
    return Task(
        uuid=task_uuid,
        json=task,
        participants=participants,
        participant=participant,
        added=context.now,
        duration=catalog.tool_duration(test_type, spec) / context.speed,
        completion=catalog.tool_completion(test_type, spec) / context.speed,
        start=None,
        slip=timedelta(0),
        repeat=None,
        until=None,
        max_runs=None,
        hints=dict(context.hints),
        diags="\n".join(verdict.diags.split("\n")),
        cli=catalog.cli(spec),
        participant_key=str(task.get("_key")) if task.get("_key") else None,
    )
