"""The fake's own control API under /_fake/ (never on a real node), for tests driving it over HTTP.

GET  /_fake/state                      clock, down mode, firewall, pause, requester class
POST /_fake/clock       {"offset_s": 5.0, "synchronized": true}
POST /_fake/down        {"mode": "refuse"|"close"|"503", "for_s": 3}
POST /_fake/up
POST /_fake/archiving   {"blocked": true}        pushes fail as "Connection refused"
POST /_fake/force       {"state": "failed", "errors": "...", "task": "<uuid>"|null, "count": 1}
POST /_fake/pause       {"paused": true}         runs due while paused are missed
POST /_fake/limits      {"requester_class": "default"|"friendly"|"hostile"}
POST /_fake/lose-answers {"count": 1}        POST /tasks creates the task but never answers
GET  /_fake/tasks, /_fake/runs[?task=<uuid>], /_fake/archivings
POST /_fake/reset
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from .limits import RequesterClass
from .model import FORCED_STATES, ForcedState
from .responses import Response, ok_json, text_error

if TYPE_CHECKING:
    from .server import FakePScheduler

DOWN_MODES = ("refuse", "close", "503")
REQUESTER_CLASSES = ("default", "friendly", "hostile")


class ControlError(ValueError):
    pass


def _body(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as error:
        raise ControlError(f"body is not JSON: {error}") from error
    if not isinstance(body, dict):
        raise ControlError("body must be a JSON object")
    return body


def _number(body: dict[str, Any], key: str) -> float:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlError(f"{key} must be a number")
    return float(value)


def _flag(body: dict[str, Any], key: str) -> bool:
    value = body.get(key)
    if not isinstance(value, bool):
        raise ControlError(f"{key} must be true or false")
    return value


def handle_control(fake: FakePScheduler, method: str, path: str, query: dict[str, str], raw: bytes) -> Response:
    try:
        return _dispatch(fake, method, path.rstrip("/"), query, raw)
    except ControlError as error:
        return text_error(400, str(error))


def _dispatch(fake: FakePScheduler, method: str, path: str, query: dict[str, str], raw: bytes) -> Response:
    if method == "GET":
        if path == "/_fake/state":
            return ok_json(fake.control_state())
        if path == "/_fake/tasks":
            return ok_json(fake.tasks())
        if path == "/_fake/runs":
            return ok_json(fake.runs(query.get("task")))
        if path == "/_fake/archivings":
            return ok_json(fake.archive_attempts())
        return text_error(404, f"no control endpoint GET {path}")
    if method != "POST":
        return text_error(405, f"{method} not allowed on {path}")
    body = _body(raw)
    if path == "/_fake/clock":
        fake.set_clock_offset(_number(body, "offset_s"))
        if "synchronized" in body:
            fake.set_clock_synchronized(_flag(body, "synchronized"))
    elif path == "/_fake/down":
        mode = body.get("mode", "refuse")
        if mode not in DOWN_MODES:
            raise ControlError(f"mode must be one of {', '.join(DOWN_MODES)}")
        fake.go_down(mode, _number(body, "for_s") if "for_s" in body else None)
    elif path == "/_fake/up":
        fake.go_up()
    elif path == "/_fake/archiving":
        fake.block_archiving(_flag(body, "blocked"))
    elif path == "/_fake/force":
        state = body.get("state")
        if state not in FORCED_STATES:
            raise ControlError(f"state must be one of {', '.join(FORCED_STATES)}")
        errors = body.get("errors")
        if errors is not None and not isinstance(errors, str):
            raise ControlError("errors must be a string")
        task = body.get("task")
        if task is not None and not isinstance(task, str):
            raise ControlError("task must be a task UUID")
        count = body.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ControlError("count must be a positive integer")
        fake.force_runs(cast(ForcedState, state), errors, task=task, count=count)
    elif path == "/_fake/pause":
        fake.pause(_flag(body, "paused"))
    elif path == "/_fake/limits":
        requester_class = body.get("requester_class")
        if requester_class not in REQUESTER_CLASSES:
            raise ControlError(f"requester_class must be one of {', '.join(REQUESTER_CLASSES)}")
        fake.set_requester_class(cast(RequesterClass, requester_class))
    elif path == "/_fake/lose-answers":
        count = body.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ControlError("count must be a non-negative integer")
        fake.lose_task_answers(count)
    elif path == "/_fake/reset":
        fake.reset()
    else:
        return text_error(404, f"no control endpoint POST {path}")
    return ok_json(fake.control_state())
