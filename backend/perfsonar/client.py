"""A small, typed pScheduler REST client (reference/perfsonar-interop.md section 1).

On urllib3, with a total time limit on every call (CALL_TOTAL_S: a node that trickles its
answer a byte at a time never meets a per-read timeout, so a watchdog shuts the call's socket
when its time is up), a cap on what a node may send back, and three ways
to trust a node's certificate: the system's CAs, a given CA bundle, or a pinned SHA-256
fingerprint of the certificate itself (most nodes are self-signed). A pin is checked during
the TLS handshake, before any request is sent. Every URL this client calls must lie under
the node's own API base, so a task or run URL a node returns can never point Fathom at
another host.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlsplit

import urllib3
from urllib3.exceptions import ConnectTimeoutError, HTTPError, MaxRetryError, ProtocolError, SSLError, TimeoutError

from core import outbound, strict_json
from core.outbound import CheckedUrllib3HTTPSConnection
from core.strict_json import StrictJSONError
from perfsonar.choices import TlsMode

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
USER_AGENT = "fathom-pscheduler-client/1"
# The whole of one call: connecting, sending, and reading the answer to its end.
CALL_TOTAL_S = 30.0


class PSchedulerError(Exception):
    """A call that did not give what was asked: `kind` says how (for the node's error line).
    `unanswered`: the request may have reached the node and been carried out, but no answer
    came back (a read timeout, a connection dropped after it was sent)."""

    def __init__(self, kind: str, message: str, status: int | None = None, unanswered: bool = False) -> None:
        super().__init__(message)
        self.kind = kind  # unreachable | tls | refused | limits | http | malformed | foreign-url
        self.status = status
        self.unanswered = unanswered


@dataclass(frozen=True)
class Trust:
    mode: str = TlsMode.SYSTEM
    ca_bundle: str = ""
    pinned_sha256: str = ""


@dataclass(frozen=True)
class Clock:
    time: datetime
    synchronized: bool | None
    offset_s: float  # the node's clock minus ours, at the middle of the call


class _CallDeadline:
    """Shuts the socket of the call running in this thread when its total time is up; the
    read blocked on it then ends and the call fails as "took over N s"."""

    running = threading.local()

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _CallDeadline:
        _CallDeadline.running.call = self
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.cancel()
        _CallDeadline.running.call = None

    @classmethod
    def attach(cls, sock: socket.socket | None) -> None:
        """The socket the running call is on (from the connection, as it connects or reads)."""
        call = getattr(cls.running, "call", None)
        if call is not None and sock is not None:
            with call._lock:
                call._socket = sock
                if call.expired:
                    _shut(sock)

    @property
    def connected(self) -> bool:
        """Whether the call had a connection (so its request may have reached the node)."""
        return self._socket is not None

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._socket is not None:
                _shut(self._socket)


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, not SSLSocket's (which drops its TLS state under a read
    # another thread is in): the read sees the connection end.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedConnection(CheckedUrllib3HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _CallDeadline.attach(self.sock)

    def getresponse(self) -> urllib3.response.HTTPResponse:  # type: ignore[override]  # as urllib3 declares it
        _CallDeadline.attach(self.sock)  # a kept-alive connection: connect() was not called
        return super().getresponse()


class _WatchedPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _WatchedConnection


def _pool(trust: Trust, timeout_s: float) -> urllib3.PoolManager:
    """Connections held to the outbound policy (core/outbound.py) and to CALL_TOTAL_S."""
    return outbound.checked(_plain_pool(trust, timeout_s), https_pool=_WatchedPool)


def _plain_pool(trust: Trust, timeout_s: float) -> urllib3.PoolManager:
    timeout = urllib3.Timeout(connect=min(timeout_s, 10.0), read=timeout_s)
    retries = urllib3.Retry(total=0, redirect=0, raise_on_redirect=False)
    if trust.mode == TlsMode.PINNED:
        # The pin replaces chain and name checks: the certificate is the identity.
        return urllib3.PoolManager(
            timeout=timeout,
            retries=retries,
            cert_reqs=ssl.CERT_NONE,
            assert_hostname=False,
            assert_fingerprint=trust.pinned_sha256,
        )
    context = ssl.create_default_context()
    if trust.mode == TlsMode.CA_BUNDLE:
        context = ssl.create_default_context(cadata=trust.ca_bundle)
    return urllib3.PoolManager(timeout=timeout, retries=retries, ssl_context=context)


class PSchedulerClient:
    def __init__(self, base_url: str, trust: Trust, timeout_s: float = 15.0) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme != "https" or not parts.hostname:
            raise PSchedulerError(
                "malformed", f"a pScheduler API URL is https://host[:port]/pscheduler, not {base_url!r}"
            )
        self._origin = (parts.scheme, parts.hostname, parts.port or 443)
        self._trust = trust
        try:
            self._http = _pool(trust, timeout_s)
        except ssl.SSLError as error:
            raise PSchedulerError("tls", f"the CA bundle cannot be used: {error}") from error

    # --- plumbing ---------------------------------------------------------------------

    def _own(self, url: str) -> str:
        """The URL, if it lies under this node's API; a node never sends Fathom elsewhere."""
        parts = urlsplit(url)
        origin = (parts.scheme, parts.hostname, parts.port or 443)
        if origin != self._origin or not parts.path.startswith(urlsplit(self.base_url).path + "/"):
            raise PSchedulerError("foreign-url", f"{url!r} is not under this node's API {self.base_url}")
        return url

    def _call(self, method: str, url: str, body: Any = None, accept_404: bool = False) -> tuple[int, bytes]:
        with _CallDeadline(CALL_TOTAL_S) as deadline:
            try:
                return self._call_once(method, url, body, accept_404)
            except PSchedulerError as error:
                if not deadline.expired:
                    raise
                self._http.clear()  # the shut connection must not be reused
                raise PSchedulerError(
                    "unreachable",
                    f"{self.base_url} took over {CALL_TOTAL_S:g} s to answer {method} {url}",
                    unanswered=deadline.connected,
                ) from error

    def _call_once(self, method: str, url: str, body: Any, accept_404: bool) -> tuple[int, bytes]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            response = self._http.request(
                method, self._own(url), body=payload, headers=headers, preload_content=False, redirect=False
            )
        except (SSLError, ssl.SSLError) as error:
            raise PSchedulerError("tls", f"TLS with {self.base_url} failed: {_reason(error)}") from error
        except MaxRetryError as error:
            if isinstance(error.reason, SSLError | ssl.SSLError):
                raise PSchedulerError("tls", f"TLS with {self.base_url} failed: {_reason(error.reason)}") from error
            reason = error.reason
            raise PSchedulerError(
                "unreachable", f"{self.base_url} is unreachable: {_reason(reason)}", unanswered=_sent(reason)
            ) from error
        except (TimeoutError, ProtocolError, HTTPError, OSError) as error:
            raise PSchedulerError(
                "unreachable", f"{self.base_url} is unreachable: {_reason(error)}", unanswered=_sent(error)
            ) from error
        try:
            content = response.read(MAX_RESPONSE_BYTES + 1, decode_content=True)
        except (HTTPError, OSError) as error:
            raise PSchedulerError(
                "unreachable", f"{self.base_url} broke off its answer: {error}", unanswered=True
            ) from error
        finally:
            response.release_conn()
        if len(content) > MAX_RESPONSE_BYTES:
            raise PSchedulerError("malformed", f"{url} answered more than {MAX_RESPONSE_BYTES} bytes")
        status = response.status
        if status == 404 and accept_404:
            return status, content
        if status == 403:
            raise PSchedulerError("limits", f"refused by the node: {_text(content)}", status)
        if status in (400, 422):
            raise PSchedulerError("refused", f"refused by the node ({status}): {_text(content)}", status)
        if not 200 <= status < 300:
            raise PSchedulerError("http", f"{method} {url} answered {status}: {_text(content)}", status)
        return status, content

    def _json(self, method: str, url: str, body: Any = None) -> Any:
        _, content = self._call(method, url, body)
        try:
            return strict_json.loads(content)
        except StrictJSONError as error:
            raise PSchedulerError("malformed", f"{url} did not answer JSON Fathom can keep: {error}") from error

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    # --- host facts -------------------------------------------------------------------

    def api_level(self) -> int:
        level = self._json("GET", self.url("api"))
        if not isinstance(level, int) or isinstance(level, bool):
            raise PSchedulerError("malformed", f"/api answered {level!r}, not an API level")
        return level

    def hostname(self) -> str:
        return _string(self._json("GET", self.url("hostname")), "/hostname")

    def clock(self, now: Any) -> Clock:
        """`now` is a zero-argument callable giving our time (a test can shift it)."""
        before = now()
        answer = self._json("GET", self.url("clock"))
        after = now()
        if not isinstance(answer, dict) or not isinstance(answer.get("time"), str):
            raise PSchedulerError("malformed", f"/clock answered {answer!r:.200}")
        try:
            node_time = datetime.fromisoformat(answer["time"].replace("Z", "+00:00"))
        except ValueError as error:
            raise PSchedulerError("malformed", f"/clock time {answer['time']!r} is not ISO 8601") from error
        if node_time.tzinfo is None:
            raise PSchedulerError("malformed", f"/clock time {answer['time']!r} has no offset")
        middle = before + (after - before) / 2
        synchronized = answer.get("synchronized")
        return Clock(
            node_time, synchronized if isinstance(synchronized, bool) else None, (node_time - middle).total_seconds()
        )

    def names(self, what: str) -> list[str]:
        """/tests, /tools or /archivers: the plugin names installed (pScheduler lists each as
        its URL, .../tests/<name>)."""
        answer = self._json("GET", self.url(what))
        if not isinstance(answer, list) or not all(isinstance(name, str) for name in answer):
            raise PSchedulerError("malformed", f"/{what} answered {answer!r:.200}, not a list of names")
        return sorted({name.rstrip("/").rsplit("/", 1)[-1][:64] for name in answer})

    # --- tasks and runs ---------------------------------------------------------------

    def create_task(self, task: dict[str, Any]) -> str:
        """POST /tasks: the new task's URL."""
        url = self._json("POST", self.url("tasks"), task)
        if not isinstance(url, str):
            raise PSchedulerError("malformed", f"POST /tasks answered {url!r:.200}, not a task URL")
        return self._own(url)

    def delete_task(self, task_url: str) -> bool:
        """DELETE the task; False when the node no longer has it (expired or deleted)."""
        status, _ = self._call("DELETE", task_url, accept_404=True)
        return status != 404

    def find_tasks(self, containing: dict[str, Any]) -> list[str]:
        """Task URLs whose JSON contains `containing` (pScheduler's JSONB containment filter)."""
        answer = self._json("GET", self.url("tasks") + "?json=" + quote(json.dumps(containing)))
        if not isinstance(answer, list) or not all(isinstance(url, str) for url in answer):
            raise PSchedulerError("malformed", f"GET /tasks answered {answer!r:.200}, not a list of URLs")
        return [self._own(url) for url in answer]

    def run_urls(self, task_url: str, start: datetime, end: datetime) -> list[str]:
        query = f"?start={quote(start.isoformat())}&end={quote(end.isoformat())}"
        answer = self._json("GET", self._own(task_url).rstrip("/") + "/runs" + query)
        if not isinstance(answer, list) or not all(isinstance(url, str) for url in answer):
            raise PSchedulerError("malformed", f"{task_url}/runs answered {answer!r:.200}, not a list of URLs")
        return [self._own(url) for url in answer]

    def run(self, run_url: str) -> dict[str, Any]:
        record = self._json("GET", run_url)
        if not isinstance(record, dict):
            raise PSchedulerError("malformed", f"{run_url} answered {record!r:.200}, not a run record")
        return record

    def task(self, task_url: str) -> dict[str, Any]:
        task = self._json("GET", task_url)
        if not isinstance(task, dict):
            raise PSchedulerError("malformed", f"{task_url} answered {task!r:.200}, not a task")
        return task


def _sent(error: BaseException | None) -> bool:
    """Whether a request that failed this way may have reached the node: anything but a
    connection that was never made (refused, unresolved, timed out while connecting)."""
    return not isinstance(error, ConnectTimeoutError | ConnectionRefusedError | SSLError | ssl.SSLError)


def _reason(error: BaseException | None) -> str:
    text = str(error) if error is not None else "no reason given"
    if "fingerprint" in text.lower():
        return "the certificate does not match the pinned fingerprint"
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "certificate verify failed (self-signed or unknown CA: pin its fingerprint or give its CA)"
    return text[:300]


def _text(content: bytes) -> str:
    # A node's error page is quoted in the node's error line: never a NUL (PostgreSQL's text
    # refuses it, and the failed write once ended every task's polling).
    return content.decode("utf-8", "replace").replace("\x00", "\ufffd").strip()[:1000] or "(no reason given)"


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise PSchedulerError("malformed", f"{where} answered {value!r:.200}, not a string")
    return value
