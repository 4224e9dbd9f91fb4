"""pScheduler's http archiver: the envelope the archiver daemon builds for a run, an optional jq
transform, and the delivery as pscheduler-archiver-http/http/archive makes it (pycurl there,
http.client here), with its error texts and retry-policy arithmetic.
"""

from __future__ import annotations

import copy
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .iso8601 import format_duration, isodate_time, parse_duration
from .model import Archiving, Run, Task, sanitized

JSON = dict[str, Any]
API_ROOT = "/pscheduler"


def api_url(host: str, path: str) -> str:
    """pscheduler.api_url: https, the host as given (IPv6 bracketed), the API root, the path."""
    if ":" in host and not host.startswith("[") and host.count(":") > 1:
        host = f"[{host}]"
    return f"https://{host}{API_ROOT}/{path}"


def envelope(task: Task, run: Run, scheduling_class: str, local_host: str, spec: JSON, tool_version: str) -> JSON:
    """The body archiver.raw sends: run and task details, hrefs on the archive's uri-host."""
    uri_host = str(spec.get("uri-host", local_host))
    task_href = api_url(uri_host, f"tasks/{task.uuid}")
    run_href = api_url(uri_host, f"tasks/{task.uuid}/runs/{run.uuid}")
    task_detail = task.json_detail(scheduling_class)
    task_detail.pop("archives", None)
    run_detail = run.as_json(task)
    for private in ("archivings", "participant-data", "participant-data-full", "result"):
        run_detail.pop(private, None)
    body: JSON = {
        "id": run.uuid,
        "schedule": {"start": isodate_time(run.start), "duration": format_duration(task.duration, weeks=False)},
        "test": sanitized(copy.deepcopy(task.json["test"])),
        "tool": {"name": task.tool, "version": tool_version},
        "run": run_detail,
        "task": task_detail,
        "participants": [local_host if participant is None else participant for participant in task.participants],
        "result": copy.deepcopy(run.result_merged),
        "reference": copy.deepcopy(task_detail.get("reference")),
    }
    body["task"]["href"] = task_href
    body["run"]["href"] = run_href
    body["run"]["task-href"] = task_href
    return body


def retry_wait(policy: list[JSON], attempts_before: int) -> str | None:
    """pscheduler.RetryPolicy.retry: each entry allows `attempts` more tries, `wait` apart."""
    remaining = attempts_before
    for entry in policy:
        remaining -= int(entry["attempts"])
        if remaining < 0:
            return str(entry["wait"])
    return None


def jq_script(spec: JSON) -> str:
    """pscheduler.JQFilter: list scripts joined by newlines, args prepended as `VALUE as $NAME |`."""
    script = spec.get("script", ".")
    text = "\n".join(str(line) for line in script) if isinstance(script, list) else str(script)
    args = spec.get("args") or {}
    return "".join(f"{json.dumps(value)} as ${name} | " for name, value in args.items()) + (text or ".")


def transform(spec: JSON, document: JSON) -> tuple[Any, str | None]:
    """Applies the archive's jq transform with the jq CLI: (result, None) or (None, error)."""
    jq = shutil.which("jq")
    if jq is None:
        return None, "Error during transformation: jq is not installed"
    command = [jq, "-c", *(["-r"] if spec.get("output-raw") else []), jq_script(spec)]
    completed = subprocess.run(command, input=json.dumps(document), capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        return None, f"Error during transformation: {completed.stderr.strip()}"
    lines = completed.stdout.splitlines()
    if not lines:
        return None, None
    if spec.get("output-raw"):
        return lines[0], None
    return json.loads(lines[0]), None


def jq_compiles(spec: JSON) -> str | None:
    """None when the transform's jq script compiles, else jq's complaint (exit status 3)."""
    jq = shutil.which("jq")
    if jq is None:
        return None
    command = [jq, "-n", jq_script(spec)]
    completed = subprocess.run(command, input="", capture_output=True, text=True, check=False, timeout=10)
    return completed.stderr.strip() if completed.returncode == 3 else None


@dataclass(frozen=True)
class Delivery:
    method: str
    url: str
    headers: dict[str, str]
    status: int | None
    succeeded: bool
    error: str | None
    body_bytes: int


def curl_error(host: str, port: int, error: BaseException, timeout_s: int, started: float) -> str:
    """libcurl's wording (as on EL9) for what went wrong before an HTTP status came back."""
    if isinstance(error, ConnectionRefusedError):
        return f"Failed to connect to {host} port {port}: Connection refused"
    if isinstance(error, TimeoutError | socket.timeout):
        waited_ms = int((time.monotonic() - started) * 1000)
        return f"Operation timed out after {max(waited_ms, timeout_s * 1000)} milliseconds with 0 bytes received"
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"SSL certificate problem: {error.verify_message}"
    if isinstance(error, socket.gaierror):
        return f"Could not resolve host: {host}"
    return str(error) or error.__class__.__name__


def request_headers(data: JSON) -> dict[str, str]:
    """Content-Type defaults to application/json; null or empty headers are dropped."""
    headers = dict(data.get("_headers") or {})
    if "Content-Type" not in headers:
        headers["Content-Type"] = "application/json"
    return {str(name): str(value) for name, value in headers.items() if value}


def deliver(data: JSON, body: bytes, blocked: bool) -> Delivery:
    """Sends one archive body; `blocked` simulates a firewall that refuses the connection."""
    url = str(data["_url"])
    method = str(data.get("op", "post")).upper()
    headers = request_headers(data)
    timeout_s = int(parse_duration(str(data.get("timeout", "PT30S"))).total_seconds())
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)

    def failed(status: int, text: str) -> Delivery:
        error = f"Failed to {method.lower()} result: {status}: {text}"
        return Delivery(method, url, headers, status, False, error, len(body))

    if parts.scheme not in ("http", "https"):
        return failed(400, f'Protocol "{parts.scheme}" not supported or disabled in libcurl')
    started = time.monotonic()
    if blocked:
        return failed(400, curl_error(host, port, ConnectionRefusedError(), timeout_s, started))
    bind = data.get("bind")
    source = (str(bind), 0) if bind else None
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        if data.get("verify-ssl", False):
            context = ssl.create_default_context()
        else:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        connection = http.client.HTTPSConnection(host, port, timeout=timeout_s, source_address=source, context=context)
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout_s, source_address=source)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        connection.putheader("Accept", "*/*")
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        status = response.status
    except (OSError, http.client.HTTPException) as error:
        return failed(400, curl_error(host, port, error, timeout_s, started))
    finally:
        connection.close()
    if status < 200 or status > 299:
        return failed(status, text)
    return Delivery(method, url, headers, status, True, None, len(body))


def attempt_diag(when: str, result: JSON) -> JSON:
    """One entry of archiving.diags, as archiver.raw records an attempt."""
    return {"time": when, "return-code": 0, "stdout": result, "stderr": result.get("error", "")}


def archive_json_body(document: Any) -> bytes:
    """pscheduler.json_dump: compact separators."""
    return json.dumps(document, separators=(",", ":")).encode()


def eligible(archiving_runs: str, state_success: bool | None) -> bool:
    """archiving_run_after: which final states the archive's `runs` selects."""
    if archiving_runs == "all":
        return True
    if archiving_runs == "succeeded":
        return state_success is True
    return state_success is False


def archive_state(archiving: Archiving) -> str:
    if not archiving.completed:
        return "pending"
    return "archived" if archiving.archived else "failed"
