"""What the fake node has installed: tests, tools and archivers, with the facts pScheduler's plugins
give about them (enumerations, scheduling class, participants, how long a run takes).

Durations follow the real tools' `duration` methods (iperf3: link setup + omit + duration + 3 s
server wait + 2 s shutdown; ping: (count-1)*interval + timeout + DNS + slop; traceroute: waits +
DNS + AS + slop). `completion` is when the tool itself is done, which for a single participant is
when pScheduler merges the result, ahead of the run's end time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .iso8601 import parse_duration

JSON = dict[str, Any]

MAINTAINER: JSON = {
    "name": "perfSONAR Development Team",
    "email": "perfsonar-developer@internet2.edu",
    "href": "http://www.perfsonar.net",
}

TESTS: dict[str, JSON] = {
    "latency": {"description": "Measure one-way latency and associated metrics", "scheduling-class": "normal"},
    "latencybg": {
        "description": "Run one-way latency tests in the background",
        "scheduling-class": "background-multi",
    },
    "rtt": {"description": "Measure the round trip time between hosts", "scheduling-class": "background"},
    "throughput": {"description": "Measure network throughput between hosts", "scheduling-class": "exclusive"},
    "trace": {"description": "Trace the path between IP hosts", "scheduling-class": "background"},
}

# Tools in order of preference for each test (what /tools?test= answers).
TOOLS: dict[str, JSON] = {
    "iperf3": {"description": "Measure network throughput with iperf3", "tests": ["throughput"], "preference": 10},
    "paris-traceroute": {
        "description": "Map the route between hosts with paris-traceroute",
        "tests": ["trace"],
        "preference": 0,
    },
    "ping": {"description": "Measure the round-trip time to another host with ping", "tests": ["rtt"], "preference": 0},
    "powstream": {
        "description": "Repeatedly measure latency with OWAMP's powstream",
        "tests": ["latencybg"],
        "preference": 0,
    },
    "tracepath": {"description": "Map the route between hosts with tracepath", "tests": ["trace"], "preference": 0},
    "twping": {
        "description": "Measure packet loss and latency with TWAMP's twping",
        "tests": ["latency", "rtt"],
        "preference": 0,
    },
    "traceroute": {"description": "Map the route between hosts with traceroute", "tests": ["trace"], "preference": 0},
}

TOOL_ORDER: dict[str, list[str]] = {
    "throughput": ["iperf3"],
    "rtt": ["ping"],
    "trace": ["traceroute", "tracepath", "paris-traceroute"],
    "latencybg": ["powstream"],
    "latency": ["twping"],
}

ARCHIVERS: dict[str, JSON] = {
    "http": {"description": "Send a raw JSON result to a HTTP server"},
}

IPERF3_WAIT_SLEEP_S = 3.0
IPERF3_SERVER_SHUTDOWN_S = 2.0
IPERF3_DEFAULT_DURATION_S = 10
IPERF3_DEFAULT_PORT = 5201
TWPING_FUDGE_S = 3.5


def enumeration(kind: str, name: str) -> JSON:
    """The plugin's `enumerate` output, as /tests/<t>, /tools/<t> and /archivers/<a> return it."""
    table = {"test": TESTS, "tool": TOOLS, "archiver": ARCHIVERS}[kind]
    extra = dict(table[name])
    body: JSON = {"schema": 1, "name": name, "description": extra.pop("description"), "version": "1.0"}
    body.update({key: value for key, value in extra.items() if key != "scheduling-class"})
    body["maintainer"] = dict(MAINTAINER)
    if "scheduling-class" in extra:
        body["scheduling-class"] = extra["scheduling-class"]
    return body


def scheduling_class(test_type: str) -> str:
    return str(TESTS[test_type]["scheduling-class"])


def participants(test_type: str, spec: JSON) -> list[str | None]:
    """The test plugin's participant list; a None lead means 'the host you posted to'."""
    source = spec.get("source-node", spec.get("source"))
    if test_type == "throughput":
        # pScheduler tests key presence, so "single-ended": false still means single-ended.
        if "single-ended" in spec or "loopback" in spec:
            return [source]
        return [source, spec.get("dest-node", spec.get("dest"))]
    if test_type in ("latency", "latencybg"):
        # One participant, whoever runs the client; the far end needs only owampd or twampd.
        return [spec.get("dest-node", spec.get("dest"))] if spec.get("flip") else [source]
    return [source]


def _seconds(spec: JSON, key: str, default: float) -> float:
    value = spec.get(key)
    return parse_duration(value).total_seconds() if isinstance(value, str) else default


def tool_duration(test_type: str, spec: JSON) -> timedelta:
    """The run's length as the tool's `duration` method computes it (rounded up to whole seconds)."""
    if test_type == "throughput":
        setup = max(_seconds(spec, "link-rtt", 0.2) * 1000.0 / 50.0, 1.0)
        duration = int(_seconds(spec, "duration", IPERF3_DEFAULT_DURATION_S))
        total = setup + _seconds(spec, "omit", 0.0) + duration + IPERF3_WAIT_SLEEP_S + IPERF3_SERVER_SHUTDOWN_S
    elif test_type == "rtt":
        count = int(spec.get("count", 5))
        total = max(count - 1, 0) * _seconds(spec, "interval", 1.0) + _seconds(spec, "timeout", 2.0)
        if "deadline" in spec:
            total = _seconds(spec, "deadline", 0.0)
        total += 1.0 + (2.0 if spec.get("hostnames", True) else 0.0) + 1.0
    elif test_type == "trace":
        total = _seconds(spec, "sendwait", 0.0) * int(spec.get("hops", 30)) + _seconds(spec, "wait", 0.0)
        total += (2.0 if spec.get("hostnames", True) else 0.0) + (4.0 if spec.get("as", True) else 0.0) + 2.0
    elif test_type == "latency":
        # twping_defaults.py: its packets, the packet timeout and the control session's fudge.
        count, interval = int(spec.get("packet-count", 100)), float(spec.get("packet-interval", 0.1))
        total = count * interval + float(spec.get("packet-timeout", 0)) + TWPING_FUDGE_S
    else:
        total = _seconds(spec, "duration", 86400.0)
    return timedelta(seconds=float(-(-total // 1)))


def tool_completion(test_type: str, spec: JSON) -> timedelta:
    """How long after the run's start the tool is done and (single participant) the result merged."""
    if test_type == "throughput":
        duration = int(_seconds(spec, "duration", IPERF3_DEFAULT_DURATION_S))
        return timedelta(seconds=IPERF3_WAIT_SLEEP_S + _seconds(spec, "omit", 0.0) + duration + 0.2)
    if test_type == "rtt":
        return timedelta(seconds=int(spec.get("count", 5)) * _seconds(spec, "interval", 1.0) + 0.2)
    if test_type == "trace":
        return timedelta(seconds=1.0)
    return tool_duration(test_type, spec)


def cli(spec: JSON) -> list[str]:
    """An approximation of the test plugin's spec-to-cli output (task detail `cli`)."""
    args: list[str] = []
    for key, value in spec.items():
        if key == "schema" or key.startswith("_"):
            continue
        if value is True:
            args.append(f"--{key}")
        elif value is not False and value is not None:
            args.extend([f"--{key}", value if isinstance(value, str) else str(value)])
    return args
