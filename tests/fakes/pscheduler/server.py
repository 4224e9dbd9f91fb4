"""FakePScheduler: a pScheduler node on loopback over real HTTPS, for tests.

    with FakePScheduler(FIXTURES, speed=10) as node:
        node.base_url             # https://127.0.0.1:<port>/pscheduler
        node.fingerprint_sha256   # pin this
        node.force_runs("failed", "iperf3 returned an error: ...")

Besides the pScheduler API under /pscheduler, the fake answers /_fake/ (control.py) on its own
port and, when it is up, on the API port too; the control port stays reachable while the API
"refuses" connections.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from .api import PSchedulerApi, Request
from .archiver import archive_state
from .control import handle_control
from .iso8601 import record_time, record_time_precise
from .limits import RequesterClass
from .model import ForcedState
from .node import Node, NodeConfig
from .responses import Response, text_error
from .tls import SelfSignedCert, make_self_signed

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_FIXTURES = REPO_ROOT / "backend" / "perfsonar" / "tests" / "fixtures"
DownMode = Literal["refuse", "close", "503"]
LOOPBACK = "127.0.0.1"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakePScheduler, tls: ssl.SSLContext | None) -> None:
        self.fake = fake
        self.tls = tls
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Runs in the connection's own thread: TLS handshake here, not in the accept loop."""
        if self.tls is not None and self.fake.down_mode == "close":
            with contextlib.suppress(OSError):
                request.shutdown(socket.SHUT_RDWR)
            return
        connection = request
        if self.tls is not None:
            request.settimeout(10)
            try:
                connection = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            connection.settimeout(None)
        self.fake.track(connection, self.tls is not None)
        try:
            super().finish_request(connection, client_address)
        except (ssl.SSLError, OSError):
            pass
        finally:
            self.fake.untrack(connection)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Apache"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query, keep_blank_values=True).items()}
        fake = self.server.fake
        if parts.path.startswith("/_fake/") or parts.path == "/_fake":
            response = handle_control(fake, self.command, parts.path, query, body)
        elif self.server.tls is None:
            response = text_error(404, "The control port serves /_fake/ only.")
        elif fake.down_mode == "503":
            response = text_error(503, "Service Unavailable")
        elif parts.path == "/pscheduler" or parts.path.startswith("/pscheduler/"):
            request = Request(
                method=self.command,
                path=parts.path[len("/pscheduler") :],
                query=query,
                body=body,
                client=str(self.client_address[0]),
                server=LOOPBACK,
                host=self.headers.get("Host") or f"{LOOPBACK}:{fake.port}",
            )
            response = fake.api.handle(request)
            if self.command == "POST" and request.path.rstrip("/") == "/tasks" and fake.take_lost_answer():
                self.close_connection = True  # the task exists; its creator never hears of it
                return
        else:
            response = Response(404, b"<h1>Not Found</h1>\n", "text/html; charset=iso-8859-1")
        self._send(response)

    def _send(self, response: Response) -> None:
        if self.server.tls is not None and self.server.fake.trickle_s:
            self._trickle(response, self.server.fake.trickle_s)
            return
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def _trickle(self, response: Response, every_s: float) -> None:
        """The answer a byte at a time, one every `every_s`: a node that never meets a
        per-read timeout but never finishes either."""
        head = f"HTTP/1.1 {response.status} OK\r\nContent-Type: {response.content_type}\r\n"
        head += f"Content-Length: {len(response.body)}\r\n\r\n"
        try:
            for byte in head.encode() + response.body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(every_s)
        except OSError:
            pass  # the client gave up
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _serve


class FakePScheduler:
    """A fake perfSONAR node: pScheduler's API, scheduler, runner and http archiver on loopback."""

    def __init__(
        self,
        fixtures_dir: Path | str = DEFAULT_FIXTURES,
        *,
        hostname: str = "localhost",
        clock_offset_s: float = 0.0,
        speed: float = 1.0,
        port: int = 0,
        control_port: int = 0,
        state_dir: Path | str | None = None,
        live_iperf3: bool = False,
        requester_class: RequesterClass = "default",
        api_host: str | None = None,
        check_participants: bool = True,
        participant_apis: dict[str, str] | None = None,
        first_run_delay_s: float = 2.0,
        max_pending_runs: int = 25,
        seed: int | None = None,
        without_tools: Collection[str] = (),
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        if state_dir is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="fake-pscheduler-")
            state_dir = self._tempdir.name
        self.state_dir = Path(state_dir)
        self.cert: SelfSignedCert = make_self_signed(self.state_dir / "tls")
        self.node = Node(
            NodeConfig(
                fixtures_dir=Path(fixtures_dir),
                hostname=hostname,
                api_host=api_host,
                clock_offset_s=clock_offset_s,
                speed=speed,
                live_iperf3=live_iperf3,
                requester_class=requester_class,
                first_run_delay_s=first_run_delay_s,
                max_pending_runs=max_pending_runs,
                check_participants=check_participants,
                participant_apis=dict(participant_apis or {}),
                seed=seed,
                without_tools=frozenset(without_tools),
            )
        )
        self.api = PSchedulerApi(self.node)
        self.down_mode: DownMode | None = None
        self.trickle_s = 0.0  # > 0: every API answer a byte at a time (trickle())
        self._lost_task_answers = 0
        self._requested_port = port
        self._requested_control_port = control_port
        self.port = 0
        self._server: _Server | None = None
        self._server_thread: threading.Thread | None = None
        self._control: _Server | None = None
        self._control_thread: threading.Thread | None = None
        self._lifecycle = threading.RLock()
        self._connections: set[Any] = set()
        self._connections_lock = threading.Lock()
        self._current = threading.local()

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakePScheduler:
        with self._lifecycle:
            self._bind(self._requested_port)
            self.port = self._server.server_address[1] if self._server else 0
            if self.node.config.api_host is None:
                self.node.local_host = f"{LOOPBACK}:{self.port}"
            self._control = _Server((LOOPBACK, self._requested_control_port), self, None)
            self._control_thread = self._serve(self._control)
            self.node.start()
        return self

    def stop(self) -> None:
        with self._lifecycle:
            self.node.stop()
            self._unbind()
            if self._control is not None:
                self._control.shutdown()
                self._control.server_close()
                self._control = None
            self._drop_connections()
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None

    def __enter__(self) -> FakePScheduler:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def _serve(self, server: _Server) -> threading.Thread:
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        return thread

    def _bind(self, port: int) -> None:
        deadline = time.monotonic() + 5
        while True:
            try:
                self._server = _Server((LOOPBACK, port), self, self.cert.server_context())
                break
            except OSError as error:
                if error.errno != errno.EADDRINUSE or port == 0 or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self._server_thread = self._serve(self._server)

    def _unbind(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def track(self, connection: Any, api_port: bool) -> None:
        self._current.connection = connection
        if api_port:
            with self._connections_lock:
                self._connections.add(connection)

    def untrack(self, connection: Any) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def _drop_connections(self) -> None:
        """Closes open keep-alive connections, except the one asking (a control call on the API port)."""
        mine = getattr(self._current, "connection", None)
        with self._connections_lock:
            victims = [connection for connection in self._connections if connection is not mine]
        for connection in victims:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    # -- what clients need ---------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"https://{LOOPBACK}:{self.port}/pscheduler"

    @property
    def control_url(self) -> str:
        port = self._control.server_address[1] if self._control else 0
        return f"http://{LOOPBACK}:{port}/_fake"

    @property
    def cert_path(self) -> Path:
        return self.cert.cert_path

    @property
    def cert_pem(self) -> str:
        return self.cert.pem

    @property
    def fingerprint_sha256(self) -> str:
        return self.cert.fingerprint_sha256

    def client_context(self) -> ssl.SSLContext:
        """An SSL context that trusts exactly this node's certificate."""
        return self.cert.client_context()

    # -- controls ------------------------------------------------------------------------------

    def set_clock_offset(self, offset_s: float) -> None:
        with self.node.state.lock:
            self.node.clock_offset_s = offset_s
            self.node.state.changed.notify_all()

    def set_clock_synchronized(self, synchronized: bool) -> None:
        self.node.clock_synchronized = synchronized

    def go_down(self, mode: DownMode = "refuse", for_s: float | None = None) -> None:
        """The API becomes unreachable: refused connections, connections closed at once, or 503s."""
        with self._lifecycle:
            self.down_mode = mode
            if mode == "refuse":
                self._unbind()
            if mode in ("refuse", "close"):
                self._drop_connections()
        if for_s is not None:
            timer = threading.Timer(for_s, self.go_up)
            timer.daemon = True
            timer.start()

    def go_up(self) -> None:
        with self._lifecycle:
            if self._server is None and self.port:
                self._bind(self.port)
            self.down_mode = None

    def trickle(self, every_s: float) -> None:
        """Every API answer sent a byte at a time, one every `every_s` (0: normally again)."""
        self.trickle_s = every_s

    def settle(self, timeout_s: float = 30.0) -> None:
        """Forgets every task and run, and returns once no push to an archive is under way."""
        self.node.settle(timeout_s)

    def block_archiving(self, blocked: bool = True) -> None:
        """A firewall between node and receiver: every push fails with "Connection refused"."""
        self.node.archiving_blocked = blocked

    def force_runs(
        self, state: ForcedState, errors: str | None = None, task: str | None = None, count: int = 1
    ) -> None:
        """The next `count` runs of `task` (a UUID or task URL; None = any task) to start end in `state`.

        failed: the tool fails (merged result with succeeded false, archived if `runs` is all/failed);
        nonstart, missed, preempted, canceled: no merged result, never archived.
        """
        self.node.force(state, errors, task.rstrip("/").rsplit("/", 1)[-1] if task else None, count)

    def pause(self, paused: bool = True) -> None:
        """`pscheduler pause`: runs due meanwhile are missed ("System was paused.")."""
        self.node.paused = paused

    def set_requester_class(self, requester_class: RequesterClass) -> None:
        self.node.requester_class = requester_class

    def lose_task_answers(self, count: int = 1) -> None:
        """The next `count` POST /tasks are carried out but unanswered: the connection closes
        where the task's URL would be sent, as when a reply is lost or its client times out."""
        with self._lifecycle:
            self._lost_task_answers = count

    def take_lost_answer(self) -> bool:
        with self._lifecycle:
            if self._lost_task_answers <= 0:
                return False
            self._lost_task_answers -= 1
            return True

    def reset(self) -> None:
        self.node.reset()
        self.lose_task_answers(0)
        self.trickle(0.0)
        self.go_up()

    # -- inspection ----------------------------------------------------------------------------

    def control_state(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "control_url": self.control_url,
            "fingerprint_sha256": self.fingerprint_sha256,
            "clock_offset_s": self.node.clock_offset_s,
            "clock_synchronized": self.node.clock_synchronized,
            "down": self.down_mode,
            "archiving_blocked": self.node.archiving_blocked,
            "paused": self.node.paused,
            "requester_class": self.node.requester_class,
        }

    def task_url(self, task_uuid: str) -> str:
        return f"{self.base_url}/tasks/{task_uuid}"

    def tasks(self) -> list[dict[str, Any]]:
        """Every task with its private keys, for assertions (GET /tasks hides them)."""
        with self.node.state.lock:
            return [
                {
                    "uuid": task.uuid,
                    "url": self.task_url(task.uuid),
                    "enabled": task.enabled,
                    "test": task.test_type,
                    "tool": task.tool,
                    "participant": task.participant,
                    "participants": list(task.participants),
                    "reference": task.json.get("reference"),
                    "duration_s": task.duration.total_seconds(),
                    "runs": task.runs,
                    "json": task.json,
                }
                for task in sorted(self.node.state.tasks.values(), key=lambda item: item.added)
            ]

    def runs(self, task: str | None = None) -> list[dict[str, Any]]:
        task_uuid = task.rstrip("/").rsplit("/", 1)[-1] if task else None
        with self.node.state.lock:
            runs = sorted(self.node.state.runs.values(), key=lambda run: run.start)
            return [
                {
                    "uuid": run.uuid,
                    "task": run.task_uuid,
                    "href": f"{self.task_url(run.task_uuid)}/runs/{run.uuid}",
                    "state": run.state,
                    "start-time": record_time(run.start),
                    "end-time": record_time(run.end),
                    "errors": run.errors,
                    "succeeded": (run.result_merged or {}).get("succeeded") if run.result_merged else None,
                    "archivings": [
                        {
                            "archive": archiving.index,
                            "state": archive_state(archiving),
                            "attempts": archiving.attempts,
                            "last_attempt": record_time_precise(archiving.last_attempt)
                            if archiving.last_attempt
                            else None,
                            "diags": archiving.diags,
                        }
                        for archiving in run.archivings
                    ],
                }
                for run in runs
                if task_uuid is None or run.task_uuid == task_uuid
            ]

    def archive_attempts(self) -> list[dict[str, Any]]:
        with self.node.state.lock:
            return [attempt.as_json() for attempt in self.node.state.push_attempts]

    def wait_for(self, what: str, check: Callable[[], Any], timeout_s: float = 10.0) -> Any:
        """Polls check() until it returns something truthy; fails naming what never happened."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"fake pScheduler: {what} did not happen within {timeout_s} s")

    def wait_for_runs(self, task: str, state: str, count: int = 1, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        def runs_in_state() -> list[dict[str, Any]]:
            matching = [run for run in self.runs(task) if run["state"] == state]
            return matching if len(matching) >= count else []

        result: list[dict[str, Any]] = self.wait_for(f"{count} {state} run(s) of {task}", runs_in_state, timeout_s)
        return result
