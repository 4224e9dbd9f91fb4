"""A plain HTTP server on a loopback address for the outbound policy's tests: it records the
paths asked for (so a test sees that nothing reached it) and can redirect."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from django.test import override_settings

# The test settings allow loopback back (the suites' receivers live there): these tests don't.
NOTHING_ALLOWED = override_settings(OUTBOUND_ALLOW_NETWORKS=(), OUTBOUND_DENY_NETWORKS=())


class _Handler(BaseHTTPRequestHandler):
    redirect_to = ""
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def server(host: str, redirect_to: str = "") -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"redirect_to": redirect_to, "hits": hits})
    httpd = HTTPServer((host, 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
