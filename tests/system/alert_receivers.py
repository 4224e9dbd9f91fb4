"""The receivers an alerting test sends to (a real SMTP server, Slack-like and webhook
endpoints in the test's process) and the alerts worker it kills and restarts: shared by the
lab's alert drill and the loopback outage tests."""

from __future__ import annotations

import email
import email.policy
import json
import os
import signal
import socket
import threading
import time
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import requests
from aiosmtpd.controller import Controller
from standardwebhooks import Webhook

from .conftest import VENV_BIN, Stack


class HttpReceiver:
    """Records every POST; answers 200 "ok" after `delay_s` (the slow-receiver case)."""

    def __init__(self) -> None:
        self.posts: list[tuple[float, dict[str, str], bytes]] = []
        self.paths: list[str] = []  # each post's path and query, in the order of posts
        self.delay_s = 0.0
        # Set for the webhook channel: each post is verified as it arrives, as a real
        # receiver does (a signature's timestamp is accepted for 5 minutes only, so checking
        # later, when a case next looked, failed on posts older than that).
        self.verifier: Webhook | None = None
        self.verified: list[dict[str, Any]] = []
        self.refused: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.paths.append(self.path)
                receiver.posts.append((time.time(), headers, body))
                if receiver.verifier is not None:
                    try:
                        receiver.verified.append(receiver.verifier.verify(body, headers))
                    except Exception as error:  # noqa: BLE001 - recorded; the drill fails on it
                        receiver.refused.append(f"{type(error).__name__}: {error}")
                time.sleep(receiver.delay_s)
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 kept"


def mail_kind(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    first = body.get_content().splitlines()[0] if body is not None else ""
    return {"NEW INCIDENT": "firing", "INCIDENT UPDATED": "update", "STILL OPEN": "repeat", "RESOLVED": "resolved"}.get(
        first.split(" (")[0], first
    )


def slack_kind(body: bytes) -> str:
    text = body.decode()
    for head, kind in (
        ("New incident", "firing"),
        ("Incident updated", "update"),
        ("Still open", "repeat"),
        ("Resolved", "resolved"),
    ):
        if f'"text": "{head}:' in text:
            return kind
    return "?"


def worker_pids(pid: int) -> list[int]:
    """The alerts worker and its pool processes (children first)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            children = listing.read().split()
    except OSError:
        children = []
    return [int(child) for child in children] + [pid]


def kill_alerts_worker(stack: Stack) -> None:
    """SIGKILL, pool processes included: a worker that dies in the middle of a send."""
    process = stack.processes["alerts-worker"]
    for pid in worker_pids(process.pid):
        os.kill(pid, signal.SIGKILL)
    process.wait(timeout=10)


def start_alerts_worker(stack: Stack) -> None:
    stack.start(
        "alerts-worker",
        [str(VENV_BIN / "celery"), "--workdir", "backend", "-A", "fathom", "worker", "-Q", "alerts", "-n",
         "alerts@%h", "--loglevel", "INFO", "--concurrency", "1"],
    )  # fmt: skip


def restart_alerts_worker(stack: Stack, env: dict[str, str]) -> None:
    old = stack.processes["alerts-worker"]
    old.terminate()
    old.wait(timeout=30)
    stack.env.update(env)
    start_alerts_worker(stack)


def remove_channels_and_restart_worker(
    stack: Stack,
    http: requests.Session,
    channels: list[dict[str, Any]],
    keys: tuple[str, ...],
    original: dict[str, str],
) -> None:
    """A test's alert channels deleted and the alerts worker back on the environment it had
    before (the keys the test set removed, `original` put back)."""
    for channel in channels:
        http.delete(f"{stack.url}/api/v1/alerts/channels/{channel['id']}/", timeout=10)
    for key in keys:
        stack.env.pop(key, None)
    restart_alerts_worker(stack, original)


# The paging services' channels, each to a receiver of its own. Keys in the services' shapes.
SERVICE_KINDS = ("pagerduty", "opsgenie", "teams", "alertmanager")
PAGERDUTY_KEY = "e93facc04764012d7bfb002500d5d1a6"
OPSGENIE_KEY = "eb243592-faa2-4ba2-a551-1afdf565c889"
HEADLINES = {"firing": "New incident", "update": "Incident updated", "repeat": "Still open", "resolved": "Resolved"}


class ServiceReceivers:
    """A receiver for each paging service's channel, and what each got about an incident."""

    def __init__(self) -> None:
        self.receivers = {kind: HttpReceiver() for kind in SERVICE_KINDS}

    def channels(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, kind, config) of a channel to each receiver."""
        url = {kind: receiver.url for kind, receiver in self.receivers.items()}
        return [
            ("drill-pagerduty", "pagerduty", {"routing_key": PAGERDUTY_KEY, "url": url["pagerduty"] + "v2/enqueue"}),
            ("drill-opsgenie", "opsgenie", {"api_key": OPSGENIE_KEY, "url": url["opsgenie"]}),
            ("drill-teams", "teams", {"url": url["teams"] + "workflows/drill"}),
            ("drill-alertmanager", "alertmanager", {"url": url["alertmanager"]}),
        ]

    def counts(self, incident_id: int, kind: str) -> tuple[int, ...]:
        """Messages of `kind` about the incident that each service got, in SERVICE_KINDS order."""
        return tuple(
            sum(_is_message(service, path, json.loads(body), incident_id, kind) for path, (_, _, body) in zip(
                receiver.paths, receiver.posts, strict=True))
            for service, receiver in self.receivers.items()
        )  # fmt: skip

    def shutdown(self) -> None:
        for receiver in self.receivers.values():
            receiver.server.shutdown()


def _is_message(service: str, path: str, body: Any, incident_id: int, kind: str) -> bool:
    """Whether one post to a service's receiver is the incident's message of `kind`."""
    ours = f":incident:{incident_id}"
    if service == "pagerduty":
        if not str(body.get("dedup_key", "")).endswith(ours):
            return False
        if kind == "resolved":
            return bool(body["event_action"] == "resolve")
        headline = body.get("payload", {}).get("custom_details", {}).get("headline")
        return bool(body["event_action"] == "trigger" and headline == HEADLINES[kind])
    if service == "opsgenie":
        if path.rstrip("/").endswith("/v2/alerts"):  # a create: the first message
            return kind == "firing" and str(body.get("alias", "")).endswith(ours)
        action = {"resolved": "close", "acknowledged": "acknowledge"}.get(kind, "notes")
        alias = unquote(path.split("?")[0]).split("/v2/alerts/")[-1].rsplit("/", 1)
        matches = alias[0].endswith(ours) and alias[-1] == action
        return matches and (
            kind in ("resolved", "acknowledged") or str(body.get("note", "")).startswith(HEADLINES[kind])
        )
    if service == "teams":
        texts = [block.get("text", "") for block in body["attachments"][0]["content"]["body"]]
        return texts[0] == HEADLINES.get(kind) and any(text.startswith(f"Incident #{incident_id} ·") for text in texts)
    alerts = [alert for alert in body if alert["labels"].get("fathom_incident") == str(incident_id)]
    return bool(alerts) and all(alert["annotations"].get("message") == HEADLINES.get(kind) for alert in alerts)
