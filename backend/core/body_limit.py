"""Request bodies bounded before anything reads them: a result upload may be as large as the
largest result the contract allows, every other body (meshes, host facts, sign-in,
enrolment, which strangers reach too) is small."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

RESULTS_PATH = "/api/v1/agent/results/"
# What a perfSONAR node's http archiver pushes (a throughput run's record holds its result
# several times over, with the tool's raw output) and a pSConfig template uploaded to import.
PERFSONAR_ARCHIVE_PATH = "/api/v1/perfsonar/archive/"
PSCONFIG_IMPORT_PATH = "/api/v1/perfsonar/psconfig/import/"


def body_limit_for(path: str) -> int:
    if path == RESULTS_PATH:
        return int(settings.INGEST_MAX_BODY_BYTES)
    if path in (PERFSONAR_ARCHIVE_PATH, PSCONFIG_IMPORT_PATH):
        return int(settings.PERFSONAR_MAX_BODY_BYTES)
    return int(settings.REQUEST_MAX_BODY_BYTES)


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
