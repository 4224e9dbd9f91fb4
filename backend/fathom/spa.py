"""Serves the built single-page UI for every route the browser may deep-link to."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

NOT_BUILT = """<!doctype html><title>Fathom</title>
<p>The web UI is not built. Run <code>make frontend</code> (or <code>make demo</code>), then reload.</p>
<p>The API is at <a href="/api/v1/schema/">/api/v1/schema/</a>.</p>"""


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    index_html = settings.FRONTEND_DIST / "index.html"
    try:
        body = index_html.read_text()
    except FileNotFoundError:
        return HttpResponse(NOT_BUILT, status=503)
    response = HttpResponse(body)
    # The HTML references hashed assets; it must be revalidated so new builds show at once.
    response["Cache-Control"] = "no-cache"
    return response
