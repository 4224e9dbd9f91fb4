"""Checks of the fake pScheduler node itself, over real HTTPS with its pinned certificate.

Each test starts its own node (speed 10, first run 0.3 s after posting) and, where a push is
expected, a tiny local HTTP receiver that records what the http archiver sent.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fakes.pscheduler import FakePScheduler

REPO = Path(__file__).resolve().parents[2]
TOKEN = "Bearer fps_0123456789abcdef.deadbeef"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Receiver:
    """A loopback HTTP server standing in for Fathom's archive endpoint."""

    url: str
    received: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # answered in order, then 200

    def wait(self, count: int, timeout_s: float = 5.0) -> list[Received]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and len(self.received) < count:
            time.sleep(0.02)
        assert len(self.received) >= count, f"expected {count} pushes, got {len(self.received)}"
        return self.received


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    box: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            box[0].received.append(Received(self.command, self.path, dict(self.headers), json.loads(body)))
            status = box[0].statuses.pop(0) if box[0].statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_PUT = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box.append(Receiver(f"http://127.0.0.1:{server.server_address[1]}/api/v1/perfsonar/archive/"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield box[0]
    server.shutdown()
    server.server_close()


@pytest.fixture
def node() -> Iterator[FakePScheduler]:
    with FakePScheduler(speed=10, first_run_delay_s=0.3, hostname="ps-fake.example.net") as fake:
        yield fake


@dataclass
class Answer:
    status: int
    content_type: str
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def call(node: FakePScheduler, method: str, path: str, body: Any = None) -> Answer:
    """One request over HTTPS that trusts only the node's own (pinned) certificate."""
    data = json.dumps(body).encode() if body is not None else None
    url = path if path.startswith("https://") else node.base_url + path
    request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - https to loopback
    try:
        with urllib.request.urlopen(request, context=node.client_context(), timeout=10) as response:  # noqa: S310
            return Answer(response.status, response.headers["Content-Type"], response.read().decode())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers["Content-Type"], error.read().decode())


def rtt_task(archive_url: str | None = None, **archive: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "schema": 1,
        "test": {"type": "rtt", "spec": {"schema": 1, "dest": "127.0.0.1", "count": 3, "interval": "PT0.2S"}},
        "schedule": {},
        "reference": {"fathom": {"task": "9b0d5c1e-0000-4000-8000-000000000001", "mesh": "lab", "test": "lab/ping"}},
    }
    if archive_url is not None:
        data = {"schema": 2, "_url": archive_url, "_headers": {"Authorization": TOKEN}, **archive.pop("data", {})}
        task["archives"] = [{"archiver": "http", "data": data, **archive}]
    return task


def post_task(node: FakePScheduler, task: dict[str, Any]) -> str:
    answer = call(node, "POST", "/tasks", task)
    assert answer.status == 200, answer.text
    url = answer.json()
    assert isinstance(url, str) and url.startswith(node.base_url + "/tasks/")
    return url


def test_host_facts_over_pinned_https(node: FakePScheduler) -> None:
    der = ssl.PEM_cert_to_DER_cert(node.cert_pem)
    assert node.fingerprint_sha256 == hashlib.sha256(der).hexdigest()
    with (
        socket.create_connection(("127.0.0.1", node.port)) as raw,
        node.client_context().wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert hashlib.sha256(tls.getpeercert(binary_form=True) or b"").hexdigest() == node.fingerprint_sha256

    assert call(node, "GET", "/api").json() == 6
    assert call(node, "GET", "/hostname").json() == "ps-fake.example.net"
    node.set_clock_offset(3.5)
    clock = call(node, "GET", "/clock").json()
    assert clock["synchronized"] is True and clock["offset"] == 3.5 and clock["source"]
    assert abs(time.time() + 3.5 - _epoch(clock["time"])) < 1.0
    assert sorted(url.rsplit("/", 1)[1] for url in call(node, "GET", "/tests").json()) == [
        "latency",
        "latencybg",
        "rtt",
        "throughput",
        "trace",
    ]
    assert call(node, "GET", "/tests/throughput").json()["scheduling-class"] == "exclusive"
    assert "iperf3" in [url.rsplit("/", 1)[1] for url in call(node, "GET", "/tools").json()]
    assert [a["name"] for a in call(node, "GET", "/archivers?expanded").json()] == ["http"]
    assert call(node, "GET", "/api?api=7").status == 501


def _epoch(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


def test_task_runs_finish_and_push_to_the_receiver(node: FakePScheduler, receiver: Receiver) -> None:
    task_url = post_task(node, rtt_task(receiver.url, data={"op": "put"}))
    task_uuid = task_url.rsplit("/", 1)[1]

    shown = call(node, "GET", f"{task_url}?detail").json()
    assert shown["archives"][0]["data"]["_url"] is None and shown["archives"][0]["data"]["_headers"] is None
    assert shown["tool"] == "ping" and shown["detail"]["first-run-href"] == f"{task_url}/runs/first"

    node.wait_for_runs(task_uuid, "finished", timeout_s=5)
    runs = call(node, "GET", f"{task_url}/runs").json()
    assert len(runs) == 1
    record = call(node, "GET", f"{task_url}/runs/first").json()
    assert record["state"] == "finished" and record["href"] == runs[0]
    assert record["result-merged"]["succeeded"] is True and record["result-merged"]["roundtrips"]
    assert record["result-href"] == runs[0] + "/result"
    assert call(node, "GET", record["result-href"]).json() == record["result-merged"]

    push = receiver.wait(1)[0]
    assert push.method == "PUT" and push.path == "/api/v1/perfsonar/archive/"
    assert push.headers["Authorization"] == TOKEN and push.headers["Content-Type"] == "application/json"
    envelope = push.body
    assert list(envelope) == ["id", "schedule", "test", "tool", "run", "task", "participants", "result", "reference"]
    assert envelope["id"] == runs[0].rsplit("/", 1)[1]
    assert envelope["tool"] == {"name": "ping", "version": "1.0"}
    assert envelope["reference"] == {"fathom": rtt_task()["reference"]["fathom"]}
    assert envelope["result"] == record["result-merged"]
    assert envelope["run"]["href"] == runs[0] and envelope["task"]["href"] == task_url
    assert "archives" not in envelope["task"] and "archivings" not in envelope["run"]
    assert envelope["schedule"]["start"].endswith("Z")

    archived = call(node, "GET", f"{task_url}/runs/first").json()["archivings"][0]
    assert archived["archived"] is True and archived["completed"] is True
    assert archived["archiver_data"]["_headers"] is None  # private again when read back


def test_retry_policy_repeats_failed_pushes(node: FakePScheduler, receiver: Receiver) -> None:
    receiver.statuses = [503, 500]
    policy = [{"attempts": 2, "wait": "PT0.2S"}]
    task_uuid = post_task(node, rtt_task(receiver.url, data={"retry-policy": policy})).rsplit("/", 1)[1]

    receiver.wait(3, timeout_s=6)
    attempts = node.wait_for(
        "three push attempts", lambda: len(node.archive_attempts()) >= 3 and node.archive_attempts()
    )
    assert [attempt["status"] for attempt in attempts] == [503, 500, 200]
    assert attempts[0]["error"].startswith("Failed to post result: 503") and attempts[0]["retry"] == "PT0.2S"
    run = node.runs(task_uuid)[0]
    assert run["archivings"][0]["state"] == "archived" and run["archivings"][0]["attempts"] == 3


def test_without_retry_policy_one_failure_is_final(node: FakePScheduler, receiver: Receiver) -> None:
    receiver.statuses = [502]
    task_uuid = post_task(node, rtt_task(receiver.url)).rsplit("/", 1)[1]
    receiver.wait(1)
    node.wait_for("the archiving to give up", lambda: node.runs(task_uuid)[0]["archivings"][0]["state"] == "failed")
    time.sleep(0.3)
    assert len(receiver.received) == 1


def test_blocked_archiving_leaves_the_run_to_be_polled(node: FakePScheduler, receiver: Receiver) -> None:
    node.block_archiving()
    task_url = post_task(node, rtt_task(receiver.url))
    task_uuid = task_url.rsplit("/", 1)[1]
    node.wait_for("a failed push", lambda: node.archive_attempts())
    attempt = node.archive_attempts()[0]
    port = receiver.url.split(":")[2].split("/")[0]
    assert (
        attempt["error"]
        == f"Failed to post result: 400: Failed to connect to 127.0.0.1 port {port}: Connection refused"
    )
    assert receiver.received == []
    run_url = call(node, "GET", f"{task_url}/runs").json()[0]
    assert call(node, "GET", f"{run_url}/result").json()["succeeded"] is True
    assert node.runs(task_uuid)[0]["state"] == "finished"


def test_limits_refuse_with_403_text(node: FakePScheduler) -> None:
    long = {"schema": 1, "test": {"type": "throughput", "spec": {"dest": "192.0.2.7", "duration": "PT90S"}}}
    answer = call(node, "POST", "/tasks", {**long, "schedule": {}})
    assert answer.status == 403 and answer.content_type.startswith("text/plain")
    assert answer.text.startswith("Task forbidden by limits:\n")
    assert "Duration for throughput must be 60 seconds or less." in answer.text

    for spec, reason in [
        ({"dest": "192.0.2.7", "parallel": 8}, "six or fewer parallel streams"),
        ({"dest": "192.0.2.7", "udp": True}, "UDP throughput bandwidth must be less than 50 Mb/s"),
    ]:
        answer = call(node, "POST", "/tasks", {"test": {"type": "throughput", "spec": spec}, "schedule": {}})
        assert answer.status == 403 and reason in answer.text
    udp_ok = {"schema": 2, "dest": "192.0.2.7", "udp": True, "bandwidth": 50_000_000, "single-ended": True}
    assert call(node, "POST", "/tasks", {"test": {"type": "throughput", "spec": udp_ok}, "schedule": {}}).status == 200


def test_invalid_tasks_get_400_text(node: FakePScheduler) -> None:
    unknown_key = rtt_task()
    unknown_key["test"]["spec"]["colour"] = "blue"
    answer = call(node, "POST", "/tasks", unknown_key)
    assert answer.status == 400 and answer.content_type.startswith("text/plain")
    assert (
        answer.text
        == "Invalid test specification: At /: Additional properties are not allowed ('colour' was unexpected)\n"
    )

    no_url = rtt_task("http://127.0.0.1:9/")
    del no_url["archives"][0]["data"]["_url"]
    answer = call(node, "POST", "/tasks", no_url)
    assert answer.status == 400 and answer.text.startswith("Invalid archiver data: At /: '_url' is a required property")

    assert call(node, "POST", "/tasks", {**rtt_task(), "colour": 1}).status == 400
    assert call(node, "POST", "/tasks", {**rtt_task(), "schema": 9}).text.startswith("Invalid task specification: ")
    # pScheduler's throughput validator crashes on a bad spec: 500, not 400 (kept on purpose).
    bad_throughput = {"test": {"type": "throughput", "spec": {"dest": "192.0.2.7", "colour": 1}}, "schedule": {}}
    assert call(node, "POST", "/tasks", bad_throughput).status == 500
    assert call(node, "GET", "/tasks").json() == []


def test_delete_disables_the_task_and_drops_its_pending_runs(node: FakePScheduler) -> None:
    task = rtt_task()
    task["schedule"] = {"start": _in(30), "repeat": "PT1M", "slip": "PT5S"}
    task_url = post_task(node, task)
    node.wait_for("pending runs", lambda: call(node, "GET", f"{task_url}/runs").json())

    assert call(node, "DELETE", task_url).status == 200
    assert call(node, "GET", f"{task_url}/runs").json() == []
    shown = call(node, "GET", f"{task_url}?detail").json()
    assert shown["detail"]["enabled"] is False  # pScheduler keeps a deleted task, disabled
    assert call(node, "DELETE", node.base_url + "/tasks/2f8f8d1c-3a0b-4b5e-9c55-1d2e3f4a5b6c").status == 404
    assert call(node, "GET", f"{task_url}/runs/next?wait=0").status == 404


def test_forced_failures(node: FakePScheduler, receiver: Receiver) -> None:
    failed_url = post_task(node, rtt_task(receiver.url, schema=2, runs="all"))
    node.force_runs("failed", "iperf3 returned an error: unable to connect to server: Connection refused", failed_url)
    nonstart_url = post_task(node, rtt_task(receiver.url, schema=2, runs="all"))
    node.force_runs("nonstart", "No times available for this run.", nonstart_url)

    failed = node.wait_for_runs(failed_url, "failed")[0]
    assert failed["errors"].startswith("iperf3 returned an error")
    nonstart = node.wait_for_runs(nonstart_url, "nonstart")[0]
    assert nonstart["errors"] == "No times available for this run."
    push = receiver.wait(1)[0]  # runs: all archives the failed run; a non-starter has nothing to send
    assert push.body["run"]["state"] == "failed" and push.body["result"] == {"schema": 1, "succeeded": False}
    record = call(node, "GET", f"{nonstart_url}/runs/first").json()
    assert record["state"] == "nonstart" and record["result-merged"] is None
    time.sleep(0.3)
    assert len(receiver.received) == 1


def test_two_ended_throughput_between_two_nodes(receiver: Receiver) -> None:
    with FakePScheduler(speed=10) as far:
        apis = {"ps-far.example.net": far.base_url}
        with FakePScheduler(speed=10, first_run_delay_s=0.3, participant_apis=apis) as lead:
            spec = {"dest": "ps-far.example.net", "duration": "PT10S"}
            archive = {"archiver": "http", "data": {"_url": receiver.url}}
            task = {"test": {"type": "throughput", "spec": spec}, "schedule": {}, "archives": [archive]}
            task_url = post_task(lead, task)
            assert [(t["participant"], t["url"].rsplit("/", 1)[1]) for t in far.tasks()] == [
                (1, task_url.rsplit("/", 1)[1])
            ]
            lead.wait_for_runs(task_url, "finished", timeout_s=8)
            envelope = receiver.wait(1)[0].body
            assert envelope["participants"] == [f"127.0.0.1:{lead.port}", "ps-far.example.net"]
            assert envelope["result"]["summary"]["summary"]["throughput-bits"] > 0
            assert call(lead, "DELETE", task_url).status == 200
            far.wait_for("the far end to drop the task", lambda: not far.tasks()[0]["enabled"])

    unreachable = {"test": {"type": "throughput", "spec": {"dest": "127.0.0.9", "duration": "PT10S"}}, "schedule": {}}
    with FakePScheduler() as lone:
        answer = call(lone, "POST", "/tasks", unreachable)
        assert answer.status == 500
        assert (
            answer.text
            == "Error getting tools from 127.0.0.9: Failed to connect to 127.0.0.9 port 443: Connection refused\n"
        )


def test_down_and_up(node: FakePScheduler) -> None:
    node.go_down("503")
    answer = call(node, "GET", "/api")
    assert answer.status == 503 and answer.content_type.startswith("text/plain")
    node.go_down("refuse")
    with pytest.raises(urllib.error.URLError) as refused:
        call(node, "GET", "/api")
    assert isinstance(refused.value.reason, ConnectionRefusedError)
    with urllib.request.urlopen(node.control_url + "/state", timeout=5) as response:  # noqa: S310 - loopback
        assert json.loads(response.read())["down"] == "refuse"
    node.go_up()
    assert call(node, "GET", "/api").json() == 6


def test_a_lost_answer_still_creates_the_task(node: FakePScheduler) -> None:
    """The fault a client timeout makes: the node creates the task, its creator hears nothing."""
    control = urllib.request.Request(node.control_url + "/lose-answers", data=b'{"count": 1}', method="POST")  # noqa: S310
    with urllib.request.urlopen(control, timeout=5) as response:  # noqa: S310 - loopback
        assert response.status == 200
    with pytest.raises((http.client.RemoteDisconnected, urllib.error.URLError, ConnectionError)):
        call(node, "POST", "/tasks", rtt_task())
    reference = quote(json.dumps({"reference": {"fathom": {"task": "9b0d5c1e-0000-4000-8000-000000000001"}}}))
    assert len(call(node, "GET", f"/tasks?json={reference}").json()) == 1
    post_task(node, rtt_task())  # only the next answer was lost
    assert len(node.tasks()) == 2


def test_runs_as_a_process(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tests.fakes.pscheduler", "--state-dir", str(tmp_path), "--speed", "10"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        context = ssl.create_default_context(cafile=ready["cert_path"])
        with urllib.request.urlopen(ready["base_url"] + "/api", context=context, timeout=5) as response:  # noqa: S310
            assert json.loads(response.read()) == 6
        assert len(ready["fingerprint_sha256"]) == 64
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_live_iperf3_single_ended(receiver: Receiver) -> None:
    port = _free_port()
    server = subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port)], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        with FakePScheduler(speed=10, first_run_delay_s=0.2, live_iperf3=True) as fake:
            spec = {
                "schema": 2,
                "dest": "127.0.0.1",
                "duration": "PT5S",
                "single-ended": True,
                "single-ended-port": port,
            }
            archive = {"archiver": "http", "data": {"_url": receiver.url}}
            task = {"schema": 1, "test": {"type": "throughput", "spec": spec}, "schedule": {}, "archives": [archive]}
            task_uuid = post_task(fake, task).rsplit("/", 1)[1]
            fake.wait_for_runs(task_uuid, "finished", timeout_s=15)
            result = receiver.wait(1)[0].body["result"]
            assert result["summary"]["summary"]["throughput-bits"] > 0
            assert result["diags"].startswith("Participant 0:\n") and f"-p {port} -c 127.0.0.1 -t 5" in result["diags"]
    finally:
        server.kill()
        server.wait()


def _in(seconds: float) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) + timedelta(seconds=seconds)).replace(microsecond=0).isoformat()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
