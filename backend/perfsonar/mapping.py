"""pScheduler runs as Fathom results: the pure mapping behind the archive receiver and the poller.

A run reaches Fathom either pushed by the node's http archiver (run_from_archive) or fetched
from the node's API (run_from_record); both become a PsRun. to_result turns a PsRun, placed by
the caller in a mesh (Placement: which Fathom test, which peer, which slot), into one item of
contract/result-batch.v1, so that ingest, ceilings, findings, charts and alerts treat it like
an agent's upload. The result's id is derived from the run's URL (result_id), so a run pushed
and then polled, or pushed twice, is one result.

Nothing here touches the database. Input that cannot be mapped (a missing or mistyped field,
an absurd size, a test Fathom has no kind for) raises MappingError, whose message starts with
the path of the field, e.g. "result/intervals/3/streams/0/throughput-bits: not a number".

Figures pScheduler does not keep (iperf3's version, socket buffers, snd_wnd, rttvar, path MTU,
CPU, congestion control in use) are null or empty, never invented. Where the contract has no
null (a TCP run's receiver bytes, which pScheduler drops), the value is 0, as a Fathom agent
reports a figure iperf3 did not print.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn
from urllib.parse import urlsplit

from perfsonar.durations import parse_duration

# Fathom test kind of each pScheduler test Fathom maps; latencybg, latency, mtu and the rest
# have no Fathom kind.
KIND_OF_TEST = {"rtt": "ping", "throughput": "throughput", "trace": "trace"}
TEST_OF_KIND = {kind: test for test, kind in KIND_OF_TEST.items()}

# Run states (run_state.sql): those still to come, and the final ones other than "finished".
UNFINISHED_STATES = frozenset({"scheduling", "pending", "on-deck", "running", "cleanup"})
FAILED_STATES = frozenset({"overdue", "missed", "failed", "preempted", "nonstart", "canceled"})
# Runs that never started; with a planned slot they are Fathom's "missed".
NEVER_STARTED_STATES = frozenset({"nonstart", "missed"})

# The contract's bounds (result-batch.v1), checked here so an oversized run is refused with
# a sentence rather than a schema path.
MAX_ERROR_LENGTH = 2000
MAX_INTERVAL_ROWS = 46208
MAX_STREAMS = 128
MAX_PING_PACKETS = 20000
MAX_TRACE_FLOWS = 64
MAX_TRACE_HOPS = 64
MAX_URL_LENGTH = 2000
MAX_AS_OWNER_LENGTH = 128
# iperf3 3.12 prints TCP_INFO values it never got as 2^32-1 or 2^64-1, and pScheduler passes
# them on: such values are missing, not measurements (as the Go agent reads them).
IMPLAUSIBLE = float(2**32 - 1)
MAX_INT64 = 2**63 - 1

# pScheduler's iperf3 tool defaults (iperf3_defaults.py, run): what ran when the spec is silent.
IPERF3_DEFAULT_DURATION_S = 10
IPERF3_DEFAULT_UDP_BPS = 1_000_000  # iperf3's own rate for UDP without -b
# pScheduler's ping tool default count; its interval defaults to one second.
PING_DEFAULT_COUNT = 5
PING_DEFAULT_SIZE_BYTES = 56
TRACE_DEFAULT_HOPS = 30
TRACE_DEFAULT_PORTS = {"udp": 33434, "tcp": 80, "icmp": 0}

# pScheduler's ICMP error names (python-icmperror) back to traceroute's flags, which the
# contract's trace flag holds (Fathom agents keep traceroute's "!H", "!X", "!<code>").
TRACEROUTE_FLAGS = {
    "host-unreachable": "!H",
    "net-unreachable": "!N",
    "protocol-unreachable": "!P",
    "source-route-failed": "!S",
    "fragmentation-needed-and-df-set": "!F",
    "communication-administratively-prohibited": "!X",
    "host-precedence-violation": "!V",
    "precedence-cutoff-in-effect": "!C",
    "port-unreachable": "!3",
    "destination-network-unknown": "!6",
    "destination-host-unknown": "!7",
    "source-host-isolated": "!8",
    "destination-network-administratively-prohibited": "!9",
    "destination-host-administratively-prohibited": "!10",
    "network-unreachable-for-type-of-service": "!11",
    "icmp-destination-host-unreachable-tos": "!12",
}
MAX_FLAG_LENGTH = 16

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_RUN_PATH = re.compile(rf"/tasks/(?P<task>{_UUID})/runs/(?P<run>{_UUID})/?")
_TASK_PATH = re.compile(rf"/tasks/(?P<task>{_UUID})/?")
_CONGESTION = re.compile(r"[a-z0-9_]{0,32}")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class MappingError(ValueError):
    """A pScheduler payload Fathom cannot map. The message starts with the path of the field
    at fault, e.g. "result/roundtrips/2/rtt: 'PT1X' is not an ISO 8601 duration ..."."""


@dataclass(frozen=True)
class PsRun:
    """One pScheduler run, from the archiver's push or the node's API."""

    href: str  # the run's URL on the node
    task_href: str
    state: str  # pScheduler run state: finished, failed, nonstart, ...
    start: datetime  # timezone-aware
    end: datetime
    errors: str  # the run's errors text ("" when none)
    test_type: str  # pScheduler test type (rtt, throughput, trace, ...); "" when unknown
    spec: dict[str, Any]  # the test spec; {} when unknown
    tool: str  # e.g. "iperf3"; "" when unknown
    result: dict[str, Any] | None = None  # the merged result
    reference: dict[str, Any] | None = None  # the task's reference
    state_display: str = ""  # e.g. "Non-Starter"


@dataclass(frozen=True)
class Placement:
    """Where Fathom puts a run: the mesh test it belongs to and the path it measured."""

    test_type: str  # Fathom kind: ping, throughput or trace
    test_id: str
    peer_id: str | None  # the Fathom agent or node at the far end, when there is one
    target: str  # the address or host name measured
    slot_id: str | None = None  # the exclusive slot a throughput run filled
    # Fathom's reverse: the peer sent the data to the result's source. Between two nodes it is
    # the spec's reverse; with a Fathom agent the node leads whichever way the data flows, so
    # the spec's reverse says which end the node's client was, not this.
    reversed: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # the mesh test's Fathom spec


# --- reading JSON with paths ------------------------------------------------------------


def _fail(path: str, problem: str) -> NoReturn:
    raise MappingError(f"{path}: {problem}")


def _at(path: str, key: str | int) -> str:
    return f"{path}/{key}" if path else str(key)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "an array")):
        if isinstance(value, kind):
            return name
    return "an object" if isinstance(value, dict) else type(value).__name__


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, f"not an object ({_json_type(value)})")
    return value


def _optional_object(value: Any, path: str) -> dict[str, Any] | None:
    return None if value is None else _object(value, path)


def _required(container: dict[str, Any], key: str, path: str) -> Any:
    value = container.get(key)
    if value is None:
        _fail(_at(path, key), "missing")
    return value


def _array(value: Any, path: str, max_items: int) -> list[Any]:
    if not isinstance(value, list):
        _fail(path, f"not an array ({_json_type(value)})")
    if len(value) > max_items:
        _fail(path, f"{len(value)} entries, more than the {max_items} Fathom keeps")
    return value


def _text(value: Any, path: str, max_length: int) -> str:
    if not isinstance(value, str):
        _fail(path, f"not a string ({_json_type(value)})")
    if len(value) > max_length:
        _fail(path, f"{len(value)} characters, more than {max_length}")
    return value


def _optional_text(value: Any, path: str, max_length: int) -> str:
    return "" if value is None else _text(value, path, max_length)


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        _fail(path, f"not a boolean ({_json_type(value)})")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(path, f"not a number ({_json_type(value)})")
    if isinstance(value, int) and abs(value) > 2**64:  # JSON integers have no bound; floats do
        _fail(path, f"{value} is too large")
    if not math.isfinite(value):
        _fail(path, "not a finite number")
    return float(value)


def _measure(value: Any, path: str) -> float:
    """A non-negative figure pScheduler must have given (a rate, a time)."""
    number = _number(value, path)
    if number < 0:
        _fail(path, f"{value} is negative")
    return number


def _integer(value: Any, path: str, low: int, high: int) -> int:
    number = _number(value, path)
    if not number.is_integer():
        _fail(path, f"{value} is not a whole number")
    if not low <= number <= high:
        _fail(path, f"{value} is outside {low}..{high}")
    return int(value)


def _amount(value: Any, path: str) -> int:
    """Bytes moved: iperf3 prints whole numbers; kept as the contract's 64-bit integer."""
    number = _measure(value, path)
    if number > MAX_INT64:
        _fail(path, f"{value} is too large")
    return int(number)


def _reported(container: dict[str, Any], key: str, path: str, *, zero_is_unknown: bool = False) -> int | None:
    """A counter or TCP_INFO figure iperf3 may not have printed: None when absent, when it is
    iperf3 3.12's placeholder, or (zero_is_unknown: windows and RTTs) when it is 0."""
    value = container.get(key)
    if value is None:
        return None
    number = _measure(value, _at(path, key))
    if number >= IMPLAUSIBLE or (zero_is_unknown and number == 0):
        return None
    return int(number)


def _reported_measure(container: dict[str, Any], key: str, path: str) -> float | None:
    value = container.get(key)
    if value is None:
        return None
    number = _measure(value, _at(path, key))
    return None if number >= IMPLAUSIBLE else number


def _seconds(value: Any, path: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as error:
        _fail(path, str(error))


def _timestamp(value: Any, path: str) -> datetime:
    text = _text(value, path, 64)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        _fail(path, f"{text!r} is not an ISO 8601 timestamp")
    if moment.tzinfo is None:
        _fail(path, f"{text!r} has no UTC offset")
    return moment


def _uuid(value: Any, path: str) -> str:
    text = _text(value, path, 36)
    try:
        return str(uuid.UUID(text))
    except ValueError:
        _fail(path, f"{value!r} is not a UUID")


# --- runs ----------------------------------------------------------------------------------


def _href(value: Any, path: str, pattern: re.Pattern[str]) -> tuple[str, re.Match[str]]:
    text = _text(value, path, MAX_URL_LENGTH)
    try:
        parts = urlsplit(text)
        _ = parts.port  # urlsplit checks the port only when it is asked for
    except ValueError as error:
        _fail(path, f"{text!r} is not a URL: {error}")
    match = pattern.search(parts.path)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or match is None or match.end() != len(parts.path):
        what = "run (.../tasks/<uuid>/runs/<uuid>)" if pattern is _RUN_PATH else "task (.../tasks/<uuid>)"
        _fail(path, f"{text!r} is not a pScheduler {what} URL")
    return text, match


def _run_hrefs(run_href: Any, task_href: Any, run_path: str, task_path: str) -> tuple[str, str, str]:
    """(run URL, task URL, run id); a missing task URL is the one the run's URL names."""
    href, run_match = _href(run_href, run_path, _RUN_PATH)
    if task_href is None:
        return href, href[: href.rindex("/runs/")], run_match["run"].lower()
    task, task_match = _href(task_href, task_path, _TASK_PATH)
    if task_match["task"].lower() != run_match["task"].lower():
        _fail(task_path, f"task {task_match['task']} is not the task of the run {href}")
    return href, task, run_match["run"].lower()


def _test(test: Any, path: str) -> tuple[str, dict[str, Any]]:
    test = _object(test, path)
    test_type = _text(_required(test, "type", path), _at(path, "type"), 64)
    spec = _optional_object(test.get("spec"), _at(path, "spec")) or {}
    return test_type, spec


def _tool(value: Any, path: str) -> str:
    """The archiver sends the tool as {name, version}; a task names it as a string."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return _optional_text(value.get("name"), _at(path, "name"), 64)
    return _text(value, path, 64)


def run_from_archive(body: Any) -> PsRun:
    """The run in an http archiver body (§3 of the interop reference: id, schedule, test,
    tool, participants, result, reference, task, run), as pScheduler sends it without a
    transform."""
    body = _object(body, "body")
    run = _object(_required(body, "run", ""), "run")
    task = _optional_object(body.get("task"), "task") or {}
    task_href, task_path = run.get("task-href"), "run/task-href"
    if task_href is None:
        task_href, task_path = task.get("href"), "task/href"
    href, task_href, run_id = _run_hrefs(_required(run, "href", "run"), task_href, "run/href", task_path)
    if body.get("id") is not None and _uuid(body["id"], "id") != run_id:
        _fail("id", f"{body['id']} is not the run of run/href {href}")
    schedule = _optional_object(body.get("schedule"), "schedule") or {}
    if run.get("start-time") is not None:
        start = _timestamp(run["start-time"], "run/start-time")
    else:
        start = _timestamp(_required(schedule, "start", "schedule"), "schedule/start")
    if run.get("end-time") is not None:
        end = _timestamp(run["end-time"], "run/end-time")
    else:
        end = start + timedelta(seconds=_seconds(_required(schedule, "duration", "schedule"), "schedule/duration"))
    test_type, spec = _test(_required(body, "test", ""), "test")
    return PsRun(
        href=href,
        task_href=task_href,
        state=_text(_required(run, "state", "run"), "run/state", 32),
        start=start,
        end=end,
        errors=_optional_text(run.get("errors"), "run/errors", 100_000),
        test_type=test_type,
        spec=spec,
        tool=_tool(body.get("tool"), "tool"),
        result=_optional_object(body.get("result"), "result"),
        reference=_optional_object(body.get("reference"), "reference"),
        state_display=_optional_text(run.get("state-display"), "run/state-display", 64),
    )


def run_from_record(record: Any, task: dict[str, Any] | None = None) -> PsRun:
    """The run in a GET .../runs/<id> record (the poll path). Its test, tool and reference
    come from the task JSON when given; without it they are unknown, and to_result takes the
    test from the placement."""
    record = _object(record, "record")
    href, task_href, _ = _run_hrefs(_required(record, "href", ""), record.get("task-href"), "href", "task-href")
    test_type, tool, reference = "", "", None
    spec: dict[str, Any] = {}
    if task is not None:
        task = _object(task, "task")
        if task.get("href") is not None:
            _run_hrefs(href, task["href"], "href", "task/href")
        test_type, spec = _test(_required(task, "test", "task"), "task/test")
        tool = _tool(task.get("tool"), "task/tool")
        reference = _optional_object(task.get("reference"), "task/reference")
    return PsRun(
        href=href,
        task_href=task_href,
        state=_text(_required(record, "state", ""), "state", 32),
        start=_timestamp(_required(record, "start-time", ""), "start-time"),
        end=_timestamp(_required(record, "end-time", ""), "end-time"),
        errors=_optional_text(record.get("errors"), "errors", 100_000),
        test_type=test_type,
        spec=spec,
        tool=tool,
        result=_optional_object(record.get("result-merged"), "result-merged"),
        reference=reference,
        state_display=_optional_text(record.get("state-display"), "state-display", 64),
    )


def result_id(run_href: str) -> uuid.UUID:
    """The Fathom result id of a pScheduler run: uuid5 of its task's and its own UUIDs. Not of
    the whole href: a node writes pushed hrefs with its own host name (or the archive's
    uri-host) and polled ones with the host Fathom asked, so one run has several hrefs."""
    _, match = _href(run_href, "run/href", _RUN_PATH)
    return uuid.uuid5(uuid.NAMESPACE_URL, f"pscheduler:tasks/{match['task'].lower()}/runs/{match['run'].lower()}")


# --- results -------------------------------------------------------------------------------


def _timestamp_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind(run: PsRun, placement: Placement) -> str:
    if placement.test_type not in TEST_OF_KIND:
        _fail(
            "placement/test_type",
            f"{placement.test_type!r} is not a Fathom kind pScheduler can run (ping, throughput, trace)",
        )
    if not run.test_type:
        return placement.test_type
    kind = KIND_OF_TEST.get(run.test_type)
    if kind is None:
        _fail(
            "test/type", f"pScheduler test {run.test_type!r} has no Fathom kind (Fathom maps rtt, throughput and trace)"
        )
    if kind != placement.test_type:
        _fail("test/type", f"a pScheduler {run.test_type} run cannot be a Fathom {placement.test_type} result")
    return kind


def _outcome(run: PsRun, placement: Placement) -> tuple[str, str]:
    """(status, error) of the run; a run still under way cannot be mapped yet."""
    result = run.result
    # The archiver may read a run whose merged result is in before its state moves on.
    if run.state == "finished" or (run.state in UNFINISHED_STATES and result is not None):
        if result is None:
            _fail("result", f"missing from a {run.state} run")
        if _boolean(_required(result, "succeeded", "result"), "result/succeeded"):
            return "ok", ""
        error = _optional_text(result.get("error"), "result/error", 100_000).strip()
        return "failed", _clip(error or "the pScheduler run did not succeed and gave no reason", MAX_ERROR_LENGTH)
    if run.state in FAILED_STATES:
        result_error = ""
        if result is not None:
            result_error = _optional_text(result.get("error"), "result/error", 100_000).strip()
        reason = run.errors.strip() or result_error or run.state_display.strip() or run.state
        status = "missed" if run.state in NEVER_STARTED_STATES and placement.slot_id else "failed"
        return status, _clip(f"pScheduler run {run.state}: {reason}", MAX_ERROR_LENGTH)
    if run.state in UNFINISHED_STATES:
        _fail("run/state", f"the run is still {run.state}: map it once it has finished")
    _fail("run/state", f"{run.state!r} is not a pScheduler run state")


def to_result(run: PsRun, placement: Placement) -> dict[str, Any]:
    """One item of contract/result-batch.v1 (without plan_version) for `run` as placed."""
    kind = _kind(run, placement)
    if run.start.tzinfo is None or run.end.tzinfo is None:
        _fail("run/start-time", "times must carry a UTC offset")
    if run.end < run.start:
        _fail("run/end-time", f"{_timestamp_text(run.end)} is before the start, {_timestamp_text(run.start)}")
    status, error = _outcome(run, placement)
    result: dict[str, Any] = {
        "id": str(result_id(run.href)),
        "test_type": kind,
        "test_id": _text(placement.test_id, "placement/test_id", 200),
        "peer_id": None if placement.peer_id is None else _uuid(placement.peer_id, "placement/peer_id"),
        "target": _text(placement.target, "placement/target", 255),
        "started_at": _timestamp_text(run.start),
        "ended_at": _timestamp_text(run.end),
        "status": status,
        "error": error,
    }
    if not result["test_id"] or not result["target"]:
        _fail("placement", "test_id and target must not be empty")
    if placement.slot_id is not None:
        result["slot_id"] = _uuid(placement.slot_id, "placement/slot_id")
    if status == "ok":
        assert run.result is not None  # _outcome found it
        result[kind] = _SECTIONS[kind](run, run.result, placement)
    return result


# --- throughput ----------------------------------------------------------------------------


def _option(
    spec: dict[str, Any],
    spec_key: str,
    given: dict[str, Any],
    fathom_key: str,
    read: Callable[[Any, str], Any],
    default: Any,
) -> tuple[Any, str]:
    """An option's value and where it came from: the pScheduler spec (what ran), else the
    mesh test's Fathom spec, else the tool's default."""
    if spec.get(spec_key) is not None:
        path = f"test/spec/{spec_key}"
        return read(spec[spec_key], path), path
    if given.get(fathom_key) is not None:
        path = f"placement/options/{fathom_key}"
        return given[fathom_key], path
    return default, f"(default {fathom_key})"


def _as_given(value: Any, _path: str) -> Any:
    return value  # checked with the other sources' values


def _whole_seconds(value: Any, path: str) -> int:
    return int(_seconds(value, path))  # pScheduler's iperf3 tool truncates likewise


def _throughput_options(run: PsRun, placement: Placement, total: dict[str, Any]) -> dict[str, Any]:
    spec, given = run.spec, _object(placement.options, "placement/options")

    def pick(spec_key: str, fathom_key: str, read: Callable[[Any, str], Any], default: Any) -> tuple[Any, str]:
        return _option(spec, spec_key, given, fathom_key, read, default)

    duration, where = pick("duration", "duration_s", _whole_seconds, IPERF3_DEFAULT_DURATION_S)
    options: dict[str, Any] = {"duration_s": _integer(duration, where, 1, 300)}
    omit, where = pick("omit", "omit_s", _whole_seconds, 0)
    options["omit_s"] = _integer(omit, where, 0, 60)
    parallel, where = pick("parallel", "parallel", _as_given, 1)
    options["parallel"] = _integer(parallel, where, 1, MAX_STREAMS)
    window, where = pick("window-size", "window_bytes", _as_given, 0)
    options["window_bytes"] = _integer(window, where, 0, 1073741824)
    options["reverse"] = placement.reversed
    # A TCP result has no jitter, loss or packet count: with the spec unknown, that tells.
    inferred_udp = any(key in total for key in ("jitter", "lost", "sent"))
    udp, where = pick("udp", "udp", _as_given, inferred_udp)
    options["udp"] = _boolean(udp, where)
    bitrate, where = pick("bandwidth", "bitrate_bps", _as_given, IPERF3_DEFAULT_UDP_BPS if options["udp"] else 0)
    options["bitrate_bps"] = _integer(bitrate, where, 0, 400_000_000_000)
    congestion, where = pick("congestion", "congestion", _as_given, "")
    if _CONGESTION.fullmatch(_text(congestion, where, 32)) is None:
        _fail(where, f"{congestion!r} is not a congestion control name such as cubic or bbr")
    options["congestion"] = congestion
    mss, where = pick("mss", "mss", _as_given, 0)
    options["mss"] = _integer(mss, where, 0, 65495)
    fq_rate, where = pick("fq-rate", "fq_rate_bps", _as_given, 0)
    options["fq_rate_bps"] = _integer(fq_rate, where, 0, 400_000_000_000)
    return options


def _interval_row(stream: dict[str, Any], path: str, sender: bool) -> dict[str, Any]:
    start_s, end_s = (
        _measure(_required(stream, "start", path), _at(path, "start")),
        _measure(_required(stream, "end", path), _at(path, "end")),
    )
    if end_s > 86400:
        _fail(_at(path, "end"), f"{end_s} s is past a day")
    if end_s < start_s:
        _fail(_at(path, "end"), f"{end_s} s is before the interval's start, {start_s} s")
    return {
        "stream": _integer(_required(stream, "stream-id", path), _at(path, "stream-id"), 0, 2**31 - 1),
        "start_s": start_s,
        "end_s": end_s,
        "bytes": _amount(_required(stream, "throughput-bytes", path), _at(path, "throughput-bytes")),
        "bits_per_s": _measure(_required(stream, "throughput-bits", path), _at(path, "throughput-bits")),
        "omitted": stream.get("omitted") is not None and _boolean(stream["omitted"], _at(path, "omitted")),
        "sender": sender,
        "retransmits": _reported(stream, "retransmits", path),
        "snd_cwnd": _reported(stream, "tcp-window-size", path, zero_is_unknown=True),
        "snd_wnd": None,
        "rtt_us": _reported(stream, "rtt", path, zero_is_unknown=True),
        "rttvar_us": None,
        "pmtu": None,
        "packets": _reported(stream, "sent", path),
        "jitter_ms": _reported_measure(stream, "jitter", path),
        "lost_packets": _reported(stream, "lost", path),
    }


def _lost_percent(packets: int | None, lost: int | None) -> float | None:
    if packets is None or lost is None or packets <= 0 or lost > packets:
        return None
    return 100.0 * lost / packets


def _delivered(bits_per_s: float, sent_bytes: int, packets: int | None, lost: int | None) -> tuple[float, int]:
    """What reached a UDP receiver, as the Go agent reckons it: iperf3 sends datagrams of one
    size, so the received share of the bytes is the received share of the packets."""
    if packets is None or lost is None or packets <= 0 or lost > packets:
        return 0.0, 0
    share = (packets - lost) / packets
    return bits_per_s * share, int(sent_bytes * share)


def _summary(
    summary: dict[str, Any], path: str, udp: bool, max_snd_cwnd: int | None, mean_rtt_us: int | None
) -> dict[str, Any]:
    sender_bits = _measure(_required(summary, "throughput-bits", path), _at(path, "throughput-bits"))
    sender_bytes = _amount(_required(summary, "throughput-bytes", path), _at(path, "throughput-bytes"))
    packets, lost = _reported(summary, "sent", path), _reported(summary, "lost", path)
    receiver_bits, receiver_bytes = 0.0, 0  # pScheduler keeps no receiver bytes for TCP
    if udp:
        receiver_bits, receiver_bytes = _delivered(sender_bits, sender_bytes, packets, lost)
    if summary.get("receiver-throughput-bits") is not None:
        receiver_bits = _measure(summary["receiver-throughput-bits"], _at(path, "receiver-throughput-bits"))
    return {
        "sender_bits_per_s": sender_bits,
        "receiver_bits_per_s": receiver_bits,
        "sender_bytes": sender_bytes,
        "receiver_bytes": receiver_bytes,
        "retransmits": _reported(summary, "retransmits", path),
        "min_rtt_us": None,
        "mean_rtt_us": mean_rtt_us,
        "max_rtt_us": None,
        "max_snd_cwnd": max_snd_cwnd,
        "max_snd_wnd": None,
        "host_cpu_percent": None,
        "remote_cpu_percent": None,
        "jitter_ms": _reported_measure(summary, "jitter", path) if udp else None,
        "lost_packets": lost if udp else None,
        "packets": packets if udp else None,
        "lost_percent": _lost_percent(packets, lost) if udp else None,
    }


def _senders_view(spec: dict[str, Any], intervals: list[Any], udp: bool) -> bool:
    """Whether the intervals are the sending end's. pScheduler merges the sender's result,
    except when one end ran the whole test (single-ended, loopback) reversed: then they are
    its client's, which received. With the spec unknown, TCP tells by TCP_INFO, which only
    the sender has."""
    flags = [spec.get(key) for key in ("reverse", "single-ended", "loopback")]
    for key, flag in zip(("reverse", "single-ended", "loopback"), flags, strict=True):
        if flag is not None:
            _boolean(flag, f"test/spec/{key}")
    if spec:
        return not (flags[0] is True and (flags[1] is True or flags[2] is True))
    if udp:
        return True
    streams = [
        stream for interval in intervals if isinstance(interval, dict) for stream in interval.get("streams") or []
    ]
    return not streams or any(isinstance(stream, dict) and "retransmits" in stream for stream in streams)


def _throughput(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    summary = _object(_required(result, "summary", "result"), "result/summary")
    total = _object(_required(summary, "summary", "result/summary"), "result/summary/summary")
    options = _throughput_options(run, placement, total)
    intervals = _array(_required(result, "intervals", "result"), "result/intervals", MAX_INTERVAL_ROWS)
    sender = _senders_view(run.spec, intervals, options["udp"])
    rows: list[dict[str, Any]] = []
    for index, interval in enumerate(intervals):
        path = f"result/intervals/{index}"
        entries = _array(_required(_object(interval, path), "streams", path), _at(path, "streams"), MAX_STREAMS)
        for number, stream in enumerate(entries):
            stream_path = f"{path}/streams/{number}"
            rows.append(_interval_row(_object(stream, stream_path), stream_path, sender))
        if len(rows) > MAX_INTERVAL_ROWS:
            _fail("result/intervals", f"more than the {MAX_INTERVAL_ROWS} stream intervals Fathom keeps")
    largest_cwnd: dict[int, int] = {}
    for row in rows:
        if row["snd_cwnd"] is not None:
            largest_cwnd[row["stream"]] = max(largest_cwnd.get(row["stream"], 0), row["snd_cwnd"])
    stream_summaries = []
    means: list[int] = []
    summary_streams = [] if summary.get("streams") is None else summary["streams"]
    for index, stream in enumerate(_array(summary_streams, "result/summary/streams", MAX_STREAMS)):
        path = f"result/summary/streams/{index}"
        stream = _object(stream, path)
        stream_id = stream.get("stream-id")
        cwnd = (
            None if stream_id is None else largest_cwnd.get(_integer(stream_id, _at(path, "stream-id"), 0, 2**31 - 1))
        )
        mean_rtt = _reported(stream, "rtt", path, zero_is_unknown=True)
        if mean_rtt is not None:
            means.append(mean_rtt)
        stream_summaries.append(_summary(stream, path, options["udp"], cwnd, mean_rtt))
    overall = _summary(
        total,
        "result/summary/summary",
        options["udp"],
        max(largest_cwnd.values()) if largest_cwnd else None,
        sum(means) // len(means) if means else _reported(total, "rtt", "result/summary/summary", zero_is_unknown=True),
    )
    streams = max(options["parallel"], len(stream_summaries), len({row["stream"] for row in rows}))
    if streams > MAX_STREAMS:
        _fail("result", f"{streams} streams, more than the {MAX_STREAMS} Fathom keeps")
    return {
        "options": options,
        "iperf3_version": "",  # pScheduler does not report it
        "protocol": "UDP" if options["udp"] else "TCP",
        "reverse": options["reverse"],
        "streams": streams,
        "duration_s": options["duration_s"],
        "omit_s": options["omit_s"],
        "sndbuf_actual": None,
        "rcvbuf_actual": None,
        "sender_congestion": "",
        "receiver_congestion": "",
        "intervals": rows,
        "summary": overall,
        "stream_summaries": stream_summaries,
    }


# --- rtt -> ping ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _RoundTrip:
    seq: int
    rtt_ms: float | None
    ttl: int | None
    error: str | None  # the ICMP error pScheduler names, for an error reply


def _round_trip(value: Any, path: str) -> _RoundTrip:
    entry = _object(value, path)
    rtt_ms = None
    if entry.get("rtt") is not None:
        rtt_ms = round(_seconds(entry["rtt"], _at(path, "rtt")) * 1000.0, 6)
        if rtt_ms > 600_000:
            _fail(_at(path, "rtt"), f"{rtt_ms} ms is longer than the 10 minutes Fathom keeps")
    ttl = None if entry.get("ttl") is None else _integer(entry["ttl"], _at(path, "ttl"), 0, 255)
    error = None
    if "error" in entry and rtt_ms is None:
        # pScheduler names ICMP errors it knows and writes null for the others.
        error = _optional_text(entry["error"], _at(path, "error"), 200) or "unknown-icmp-error"
    return _RoundTrip(_integer(_required(entry, "seq", path), _at(path, "seq"), 0, 65535), rtt_ms, ttl, error)


def _ping(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    spec, given = run.spec, _object(placement.options, "placement/options")
    count, where = _option(spec, "count", given, "count", _as_given, PING_DEFAULT_COUNT)
    count = _integer(count, where, 1, 10000)
    interval_s, where = _option(spec, "interval", given, "interval_s", _seconds, 1.0)
    interval_s = _number(interval_s, where)
    if not 0.002 <= interval_s <= 60:
        _fail(where, f"{interval_s} s between packets is outside the 0.002..60 s Fathom keeps")
    size, where = _option(spec, "length", given, "size_bytes", _as_given, PING_DEFAULT_SIZE_BYTES)
    size = _integer(size, where, 0, 65507)
    ttl, where = _option(spec, "ttl", given, "ttl", _as_given, None)
    ttl = None if ttl is None else _integer(ttl, where, 1, 255)

    roundtrips = result.get("roundtrips")
    entries = [] if roundtrips is None else _array(roundtrips, "result/roundtrips", MAX_PING_PACKETS)
    trips = [_round_trip(entry, f"result/roundtrips/{index}") for index, entry in enumerate(entries)]
    first = 0 if any(trip.seq == 0 for trip in trips) else 1  # iputils counts from 1
    if result.get("sent") is not None:
        sent = _integer(result["sent"], "result/sent", 0, MAX_PING_PACKETS)
    else:
        sent = max((trip.seq - first + 1 for trip in trips), default=0)
    answers: dict[int, list[_RoundTrip]] = {}
    errors: dict[int, str] = {}
    for index, trip in enumerate(trips):
        if trip.seq - first >= sent:
            _fail(f"result/roundtrips/{index}/seq", f"{trip.seq} is beyond the {sent} packets sent")
        if trip.rtt_ms is not None:
            answers.setdefault(trip.seq, []).append(trip)
        elif trip.error is not None:
            errors.setdefault(trip.seq, trip.error)
    samples: list[dict[str, Any]] = []
    for seq in range(first, first + sent):
        due = _timestamp_text(run.start + timedelta(seconds=(seq - first) * interval_s))
        replies = answers.get(seq, [])
        if not replies:
            sample: dict[str, Any] = {"seq": seq, "time": due, "rtt_ms": None, "ttl": None, "duplicate": False}
            if seq in errors:
                sample["error"] = errors[seq]
            samples.append(sample)
        for number, reply in enumerate(replies):
            samples.append({"seq": seq, "time": due, "rtt_ms": reply.rtt_ms, "ttl": reply.ttl, "duplicate": number > 0})
    received = len(answers)
    if result.get("received") is not None:
        reported = _integer(result["received"], "result/received", 0, MAX_PING_PACKETS)
        if reported != received:
            _fail("result/received", f"{reported}, but {received} of the round trips were answered")
    return {
        "count": count,
        "interval_s": interval_s,
        "size_bytes": size,
        "ttl": ttl,
        "transmitted": sent,
        "received": received,
        "duplicates": sum(len(replies) - 1 for replies in answers.values()),
        "errors": len(errors),
        "samples": samples,
    }


# --- trace ---------------------------------------------------------------------------------


def _address(value: Any, path: str) -> str:
    """An IP address written as the Go agent writes one (netip's String): IPv6 compressed in
    lower case, IPv4-mapped IPv6 with a dotted tail, any zone kept."""
    text = _text(value, path, 64)
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        _fail(path, f"{text!r} is not an IP address")
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        zone = f"%{address.scope_id}" if address.scope_id else ""
        return f"::ffff:{address.ipv4_mapped}{zone}"
    return str(address)


def _flag(error: str) -> str:
    if error in TRACEROUTE_FLAGS:
        return TRACEROUTE_FLAGS[error]
    code = error.removeprefix("unknown-error-")
    return ("!" + code if code != error else error)[:MAX_FLAG_LENGTH]


def _hop(value: Any, path: str, ttl: int) -> dict[str, Any]:
    """A pScheduler hop as a Fathom hop of one probe; `{}` is a hop that gave no answer.
    The router's name, AS and path MTU belong to the hop (pScheduler sends one probe per
    hop), which keeps the contract's largest trace within one upload."""
    hop = _object(value, path)
    address = None if hop.get("ip") is None else _address(hop["ip"], _at(path, "ip"))
    rtt_ms = None
    if hop.get("rtt") is not None:
        rtt_ms = round(_seconds(hop["rtt"], _at(path, "rtt")) * 1000.0, 6)
        if rtt_ms > 600_000:
            _fail(_at(path, "rtt"), f"{rtt_ms} ms is longer than the 10 minutes Fathom keeps")
    probe: dict[str, Any] = {"address": address, "rtt_ms": rtt_ms}
    if hop.get("error") is not None:
        probe["flag"] = _flag(_text(hop["error"], _at(path, "error"), 200))
    mapped: dict[str, Any] = {"ttl": ttl, "probes": [probe]}
    hostname = _optional_text(hop.get("hostname"), _at(path, "hostname"), 255)
    if hostname:
        mapped["hostname"] = hostname
    if hop.get("as") is not None:
        # The traceroute tool's own lookup writes a bare number, the bulk lookup {number, owner}.
        as_ = hop["as"] if isinstance(hop["as"], dict) else {"number": hop["as"]}
        as_path = _at(path, "as")
        number = as_.get("number")
        mapped["asn"] = None if number is None else _integer(number, _at(as_path, "number"), 0, 2**32 - 1)
        owner = _optional_text(as_.get("owner"), _at(as_path, "owner"), 10_000)
        if owner:
            mapped["as_owner"] = _clip(owner, MAX_AS_OWNER_LENGTH)
    if hop.get("mtu") is not None:
        mapped["mtu"] = _integer(hop["mtu"], _at(path, "mtu"), 0, 65535)
    return mapped


def fingerprint(hops: list[dict[str, Any]]) -> str:
    """The route's name, exactly as the Go agent computes it (probe/trace Fingerprint): the
    first 16 hex digits of the SHA-256 of one line per hop, in TTL order, holding the hop's
    distinct addresses sorted and joined by "|", or "*" for a hop nobody answered."""
    lines = []
    for hop in hops:
        addresses = sorted({probe["address"] for probe in hop["probes"] if probe["address"] is not None})
        lines.append("|".join(addresses) if addresses else "*")
    text = "".join(line + "\n" for line in lines)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _destinations(run: PsRun, placement: Placement) -> tuple[set[str], set[str]]:
    """The addresses and host names the trace was aimed at: the spec's dest and the target."""
    addresses, names = set(), set()
    for value in (run.spec.get("dest"), placement.target):
        if not isinstance(value, str) or not value:
            continue
        try:
            addresses.add(_address(value, "dest"))
        except MappingError:
            names.add(value.rstrip(".").lower())
    return addresses, names


def _trace_flow(
    path_value: Any, path: str, flow: int, first_ttl: int, aimed_at: tuple[set[str], set[str]]
) -> dict[str, Any]:
    entries = _array(path_value, path, 255)
    # A node traces up to its hop limit: trailing silent hops beyond what Fathom keeps go.
    while len(entries) > MAX_TRACE_HOPS and entries[-1] == {}:
        entries = entries[:-1]
    if len(entries) > MAX_TRACE_HOPS:
        _fail(path, f"{len(entries)} hops, more than the {MAX_TRACE_HOPS} Fathom keeps")
    if first_ttl + len(entries) - 1 > 255:
        _fail(path, f"hops from TTL {first_ttl} go beyond TTL 255")
    hops = [_hop(entry, f"{path}/{index}", first_ttl + index) for index, entry in enumerate(entries)]
    addresses, hostnames = aimed_at
    reached = False
    if hops:
        last = hops[-1]
        address = last["probes"][0]["address"]
        reached = address is not None and (
            address in addresses or last.get("hostname", "").rstrip(".").lower() in hostnames
        )
    return {"flow": flow, "src_port": 0, "reached": reached, "fingerprint": fingerprint(hops), "hops": hops}


def _trace(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    spec = run.spec
    method = "udp"
    if spec.get("probe-type") is not None:
        method = _text(spec["probe-type"], "test/spec/probe-type", 8)
        if method not in TRACE_DEFAULT_PORTS:
            _fail("test/spec/probe-type", f"{method!r} is not icmp, udp or tcp")
    port = TRACE_DEFAULT_PORTS[method]
    if spec.get("dest-port") is not None:
        port = _integer(spec["dest-port"], "test/spec/dest-port", 0, 65535)
    first_ttl = 1 if spec.get("first-ttl") is None else _integer(spec["first-ttl"], "test/spec/first-ttl", 1, 255)
    max_hops = TRACE_DEFAULT_HOPS
    if spec.get("hops") is not None:
        max_hops = _integer(spec["hops"], "test/spec/hops", 1, 255)
    paths = _array(_required(result, "paths", "result"), "result/paths", MAX_TRACE_FLOWS)
    if not paths:
        _fail("result/paths", "no path")
    aimed_at = _destinations(run, placement)
    flows = [
        _trace_flow(value, f"result/paths/{index}", index, first_ttl, aimed_at) for index, value in enumerate(paths)
    ]
    deepest = max((flow["hops"][-1]["ttl"] for flow in flows if flow["hops"]), default=1)
    return {"method": method, "dst_port": port, "max_hops": max(max_hops, deepest), "flows": flows}


_SECTIONS = {"throughput": _throughput, "ping": _ping, "trace": _trace}
