"""HTTP answers as pScheduler's response.py shapes them: JSON with a trailing newline, and every
error as text/plain (a bare "OK" answer has Flask's default text/html type)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


class ApiError(Exception):
    """Raised anywhere while answering; becomes a text/plain response."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def dump(data: Any, pretty: bool = False) -> str:
    if pretty:
        return json.dumps(data, sort_keys=True, indent=4, separators=(", ", ": "))
    return json.dumps(data, separators=(",", ":"))


def ok_json(data: Any, pretty: bool = False) -> Response:
    return Response(200, (dump(data, pretty) + "\n").encode(), "application/json")


def ok_text(message: str = "OK", content_type: str = "text/html; charset=utf-8") -> Response:
    return Response(200, (message + "\n").encode(), content_type)


def text_error(status: int, message: str) -> Response:
    return Response(status, (message + "\n").encode(), "text/plain; charset=utf-8")


def error_response(error: ApiError) -> Response:
    return text_error(error.status, error.message)


def bad_request(message: str = "Bad request") -> ApiError:
    return ApiError(400, message)


def forbidden(message: str = "Forbidden") -> ApiError:
    return ApiError(403, message)


def not_found(message: str = "Resource not found.") -> ApiError:
    return ApiError(404, message)


def no_can_do(message: str | None = None) -> ApiError:
    return ApiError(422, "Unable to complete request" + (f": {message}" if message is not None else "."))


def server_error(message: str = "Unknown internal error") -> ApiError:
    return ApiError(500, message)


INTERNAL_PROBLEM = "Internal problem; see system logs."
