"""Request bodies bounded before anything reads them: a result upload may be as large as the
largest result the contract allows, every other body (meshes, host facts, sign-in,
enrolment, which strangers reach too) is small."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

RESULTS_PATH = "/api/v1/agent/results/"


def body_limit_for(path: str) -> int:
    return int(settings.INGEST_MAX_BODY_BYTES if path == RESULTS_PATH else settings.REQUEST_MAX_BODY_BYTES)


class BodyLimitMiddleware:
    """413 for a declared length over the path's limit; a body without a declared length
    (chunked) is held by DATA_UPLOAD_MAX_MEMORY_SIZE when read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or "0"
        limit = body_limit_for(request.path)
        if not length.isdigit():
            return JsonResponse({"detail": "invalid Content-Length"}, status=400)
        if int(length) > limit:
            return JsonResponse({"detail": f"request body too large (at most {limit} bytes here)"}, status=413)
        return self.get_response(request)
