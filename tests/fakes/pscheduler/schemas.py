"""Validation of tasks, test specs and http-archiver data, mirroring pScheduler's JSON schemas.

The key sets per schema version come from pScheduler's `jsonval.py` (TaskSpecification,
ScheduleSpecification, ArchiveSpecification), the tests' `validate.py` and the http archiver's
`data-is-valid`. Messages imitate jsonschema's ("At /path: ..."), one error per document.

Two quirks of the real validators are kept on purpose because clients meet them:
- `trace` specs set no additionalProperties, so unknown trace keys are accepted;
- the throughput `spec-is-valid` crashes on an invalid spec (`pscheduler.succeed.json`, since
  January 2024), so the API answers 500 "Unable to validate test spec: ..." instead of 400.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .iso8601 import is_duration

JSON = dict[str, Any]
# A checker returns None when the value is fine, else jsonschema's message for it.
Checker = Callable[[Any], str | None]

HOSTNAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9\-]{0,62}(\.[A-Za-z0-9][A-Za-z0-9\-]{0,62})*\.?$")
HOST_NAME_PORT = re.compile(
    r"^(([a-zA-Z0-9_]|[a-zA-Z0-9_][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*"
    r"([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])(:[0-9]+)?$"
)
IPV6_RFC2732 = re.compile(r"^\[[0-9A-Fa-f:.]+\](:[0-9]+)?$")
CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?(,\d+(-\d+)?)*)$")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _typed(expected: str) -> Checker:
    def check(value: Any) -> str | None:
        actual = _json_type(value)
        if actual == expected or (expected == "number" and actual == "integer"):
            return None
        return f"{value!r} is not of type '{expected}'"

    return check


def _integer(minimum: int | None = None, maximum: int | None = None) -> Checker:
    def check(value: Any) -> str | None:
        problem = _typed("integer")(value)
        if problem:
            return problem
        if minimum is not None and value < minimum:
            return f"{value!r} is less than the minimum of {minimum}"
        if maximum is not None and value > maximum:
            return f"{value!r} is greater than the maximum of {maximum}"
        return None

    return check


def _enum(*choices: Any) -> Checker:
    def check(value: Any) -> str | None:
        if value in choices and _json_type(value) in {_json_type(choice) for choice in choices}:
            return None
        return f"{value!r} is not one of {list(choices)!r}"

    return check


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _host(value: Any) -> str | None:
    if isinstance(value, str) and (_is_ip(value) or (0 < len(value) <= 255 and HOSTNAME.match(value))):
        return None
    return f"{value!r} is not valid under any of the given schemas"


def _url_host_port(value: Any) -> str | None:
    if isinstance(value, str) and (HOST_NAME_PORT.match(value) or IPV6_RFC2732.match(value)):
        return None
    return f"{value!r} is not valid under any of the given schemas"


def _duration(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{value!r} is not of type 'string'"
    return None if is_duration(value) else f"'{value}' is not a valid ISO 8601 duration."


def _timestamp_abs_rel(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{value!r} is not of type 'string'"
    if is_duration(value) or (value.startswith("@") and is_duration(value[1:])):
        return None
    try:
        from datetime import datetime

        datetime.fromisoformat(value)
    except ValueError:
        return f"{value!r} is not valid under any of the given schemas"
    return None


def _url(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{value!r} is not of type 'string'"
    return None if urlsplit(value).scheme else f"{value!r} is not a 'uri'"


def _string_list(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"{value!r} is not of type 'array'"
    for item in value:
        if not isinstance(item, str):
            return f"{item!r} is not of type 'string'"
    return None


def _cron(value: Any) -> str | None:
    if isinstance(value, str):
        fields = value.split()
        if len(fields) == 5 and all(CRON_FIELD.match(part) for part in fields):
            return None
    return f"'{value}' is not a valid cron specification."


def _anything(value: Any) -> str | None:
    return None


BOOLEAN = _typed("boolean")
STRING = _typed("string")
NUMBER = _typed("number")
INTEGER = _integer()
CARDINAL = _integer(1)
CARDINAL_ZERO = _integer(0)
IP_PORT = _integer(0, 65535)
IP_TOS = _integer(0, 255)
IP_VERSION = _enum(4, 6)
CONGESTION = _enum("reno", "cubic", "bic", "htcp", "vegas", "westwood", "yeah", "bbr")


@dataclass(frozen=True)
class ObjectSchema:
    """One schema version of a JSON object: its keys, what is required, and whether others are refused."""

    properties: dict[str, Checker]
    required: tuple[str, ...] = ()
    closed: bool = True
    nested: dict[str, Callable[[Any], tuple[list[str | int], str] | None]] = field(default_factory=dict)

    def errors(self, value: Any) -> tuple[list[str | int], str] | None:
        """The first problem as (path, message), or None."""
        if not isinstance(value, dict):
            return [], f"{value!r} is not of type 'object'"
        if self.closed:
            unknown = [key for key in value if key not in self.properties]
            if unknown:
                listed = ", ".join(repr(key) for key in unknown)
                verb = "was" if len(unknown) == 1 else "were"
                return [], f"Additional properties are not allowed ({listed} {verb} unexpected)"
        for key in self.required:
            if key not in value:
                return [], f"'{key}' is a required property"
        for key in sorted(value):
            if key in self.nested:
                problem = self.nested[key](value[key])
                if problem:
                    return [key, *problem[0]], problem[1]
            elif key in self.properties:
                message = self.properties[key](value[key])
                if message:
                    return [key], message
        return None


def _versions(
    base: dict[str, Checker], additions: list[dict[str, Checker]], required_from: int = 2, closed: bool = True
) -> dict[int, ObjectSchema]:
    """Schema versions 1..N where each adds keys; `schema` is required from version required_from."""
    versions: dict[int, ObjectSchema] = {}
    keys = dict(base)
    for number, added in enumerate([{}, *additions], start=1):
        keys = {**keys, **added, "schema": _enum(number)}
        required = ("schema",) if number >= required_from else ()
        versions[number] = ObjectSchema(dict(keys), required, closed)
    return versions


def _with_dest(versions: dict[int, ObjectSchema]) -> dict[int, ObjectSchema]:
    return {
        number: ObjectSchema(schema.properties, (*schema.required, "dest"), schema.closed)
        for number, schema in versions.items()
    }


THROUGHPUT_V1: dict[str, Checker] = {
    "source": _host,
    "source-node": _url_host_port,
    "dest": _host,
    "dest-node": _url_host_port,
    "duration": _duration,
    "interval": _duration,
    "parallel": CARDINAL,
    "udp": BOOLEAN,
    "bandwidth": CARDINAL,
    "window-size": CARDINAL,
    "mss": CARDINAL,
    "buffer-length": CARDINAL,
    "ip-tos": IP_TOS,
    "ip-version": IP_VERSION,
    "local-address": _host,
    "omit": _duration,
    "no-delay": BOOLEAN,
    "congestion": CONGESTION,
    "zero-copy": BOOLEAN,
    "flow-label": CARDINAL,
    "client-cpu-affinity": INTEGER,
    "server-cpu-affinity": INTEGER,
    "reverse": BOOLEAN,
}

# The keys pScheduler's latency test started with; latencybg has them and its duration.
LATENCY_V1: dict[str, Checker] = {
    "source": _host,
    "source-node": _url_host_port,
    "dest": _host,
    "dest-node": _url_host_port,
    "packet-count": CARDINAL,
    "packet-interval": NUMBER,
    "packet-timeout": CARDINAL_ZERO,
    "packet-padding": CARDINAL_ZERO,
    "ctrl-port": IP_PORT,
    "data-ports": _typed("object"),
    "ip-tos": IP_TOS,
    "ip-version": IP_VERSION,
    "bucket-width": NUMBER,
    "output-raw": BOOLEAN,
    "flip": BOOLEAN,
}

SPEC_SCHEMAS: dict[str, dict[int, ObjectSchema]] = {
    "throughput": _with_dest(
        _versions(
            THROUGHPUT_V1,
            [
                {"single-ended": BOOLEAN, "single-ended-port": INTEGER},
                {"link-rtt": _duration},
                {"bandwidth-strict": BOOLEAN, "burst-size": CARDINAL, "congestion": STRING},
                {"loopback": BOOLEAN},
                {"reverse-connections": BOOLEAN},
                {"fq-rate": CARDINAL},
            ],
        )
    ),
    "rtt": _with_dest(
        _versions(
            {
                "count": CARDINAL,
                "dest": _host,
                "flow-label": CARDINAL_ZERO,
                "hostnames": BOOLEAN,
                "interval": _duration,
                "ip-version": IP_VERSION,
                "source": _host,
                "source-node": _url_host_port,
                "suppress-loopback": BOOLEAN,
                "ip-tos": IP_TOS,
                "length": CARDINAL,
                "ttl": CARDINAL,
                "deadline": _duration,
                "timeout": _duration,
            },
            [{"protocol": _enum("icmp", "twamp")}, {"fragment": BOOLEAN}, {"port": IP_PORT, "protocol": STRING}],
        )
    ),
    # trace's validate.py leaves additionalProperties unset: unknown keys pass.
    "trace": _with_dest(
        _versions(
            {
                "algorithm": STRING,
                "as": BOOLEAN,
                "dest-port": IP_PORT,
                "dest": _host,
                "first-ttl": CARDINAL,
                "fragment": BOOLEAN,
                "hops": CARDINAL,
                "hostnames": BOOLEAN,
                "ip-tos": CARDINAL,
                "ip-version": IP_VERSION,
                "length": CARDINAL,
                "probe-type": _enum("icmp", "udp", "tcp"),
                "queries": CARDINAL,
                "sendwait": _duration,
                "source": _host,
                "source-node": _url_host_port,
                "wait": _duration,
            },
            [{"flow-label": CARDINAL}],
            required_from=99,
            closed=False,
        )
    ),
    # pscheduler-test-latency's spec-jsonschema.json: schema 2 adds reverse, 3 traverse-nat, 4 protocol.
    "latency": _with_dest(
        _versions(LATENCY_V1, [{"reverse": BOOLEAN}, {"traverse-nat": BOOLEAN}, {"protocol": STRING}])
    ),
    "latencybg": _with_dest(_versions({**LATENCY_V1, "duration": _duration}, [{"protocol": STRING}], required_from=99)),
}


def _format(path: list[str | int], message: str, prefix: list[str | int] | None = None) -> str:
    return "At /{}: {}".format("/".join(str(part) for part in [*(prefix or []), *path]), message)


def _check_schema_number(document: JSON, highest: int) -> str | None:
    number = document.get("schema", 1)
    if not isinstance(number, int) or isinstance(number, bool):
        return "Schema value must be an integer."
    if number > highest:
        return f"Schema version {number} is not supported (highest is {highest})."
    return None


class ThroughputValidatorCrash(Exception):
    """The real throughput spec-is-valid dies on an invalid spec; the API then answers 500."""


def spec_error(test_type: str, spec: Any) -> str | None:
    """The test plugin's verdict on a spec: None when valid, else its error text."""
    if not isinstance(spec, dict):
        return "JSON must be an object"
    versions = SPEC_SCHEMAS[test_type]
    problem = _check_schema_number(spec, max(versions))
    if problem is None:
        schema = versions.get(spec.get("schema", 1))
        if schema is None:
            problem = f"Schema {spec.get('schema')} is not supported."
        else:
            found = schema.errors(spec)
            problem = _format(*found) if found else None
    if problem and test_type == "throughput":
        raise ThroughputValidatorCrash(problem)
    if problem is None and test_type == "throughput" and "single-ended" in spec and "loopback" in spec:
        return "Single-ended and loopback modes are mutually exclusive"
    return problem


RETRY_ENTRY = ObjectSchema({"attempts": CARDINAL, "wait": _duration}, ("attempts", "wait"))


def _retry_policy(value: Any) -> tuple[list[str | int], str] | None:
    if not isinstance(value, list):
        return [], f"{value!r} is not of type 'array'"
    for index, entry in enumerate(value):
        found = RETRY_ENTRY.errors(entry)
        if found:
            return [index, *found[0]], found[1]
    return None


def _headers(value: Any) -> tuple[list[str | int], str] | None:
    if not isinstance(value, dict):
        return [], f"{value!r} is not of type 'object'"
    for key, header in value.items():
        if not isinstance(header, str):
            return [key], f"{header!r} is not of type 'string'"
    return None


def _http_versions() -> dict[int, ObjectSchema]:
    """data-is-valid v1..v4: v2 adds _headers, v3 verify-ssl, v4 timeout; schema required from v2."""
    keys: dict[str, Checker] = {"_url": _url, "op": _enum("put", "post"), "bind": _host, "retry-policy": _anything}
    additions: list[dict[str, Checker]] = [{}, {"_headers": _anything}, {"verify-ssl": BOOLEAN}, {"timeout": _duration}]
    versions: dict[int, ObjectSchema] = {}
    for number, added in enumerate(additions, start=1):
        keys = {**keys, **added, "schema": _enum(number)}
        nested: dict[str, Callable[[Any], tuple[list[str | int], str] | None]] = {"retry-policy": _retry_policy}
        if number >= 2:
            nested["_headers"] = _headers
        versions[number] = ObjectSchema(dict(keys), ("schema", "_url") if number >= 2 else ("_url",), nested=nested)
    return versions


HTTP_DATA = _http_versions()


def http_data_error(data: Any) -> str | None:
    """The http archiver's data-is-valid verdict."""
    if not isinstance(data, dict):
        return "JSON must be an object"
    problem = _check_schema_number(data, 4)
    if problem:
        return problem
    schema = HTTP_DATA.get(data.get("schema", 1))
    if schema is None:
        return f"Schema {data.get('schema')} is not supported."
    found = schema.errors(data)
    return _format(*found) if found else None


def _transform(value: Any) -> tuple[list[str | int], str] | None:
    schema = ObjectSchema(
        {
            "script": lambda script: None if isinstance(script, str) or not _string_list(script) else "not a script",
            "output-raw": BOOLEAN,
            "args": _anything,
        },
        ("script",),
    )
    return schema.errors(value)


ARCHIVE_V1: dict[str, Checker] = {
    "schema": _enum(1),
    "archiver": STRING,
    "data": _anything,
    "transform": _anything,
    "ttl": _duration,
}
ARCHIVE_V2 = {**ARCHIVE_V1, "schema": _enum(2), "runs": _enum("all", "succeeded", "failed"), "uri-host": _url_host_port}
ARCHIVE_V3 = {**ARCHIVE_V2, "schema": _enum(3), "label": STRING}
ARCHIVE_SCHEMAS = {
    1: ObjectSchema(ARCHIVE_V1, ("archiver", "data"), nested={"transform": _transform}),
    2: ObjectSchema(ARCHIVE_V2, ("schema", "archiver", "data"), nested={"transform": _transform}),
    3: ObjectSchema(ARCHIVE_V3, ("schema", "archiver", "data"), nested={"transform": _transform}),
}

SCHEDULE_V1: dict[str, Checker] = {
    "schema": _enum(1),
    "start": _timestamp_abs_rel,
    "slip": _duration,
    "sliprand": BOOLEAN,
    "repeat": _duration,
    "until": _timestamp_abs_rel,
    "max-runs": CARDINAL,
}
SCHEDULE_SCHEMAS = {
    1: ObjectSchema(SCHEDULE_V1),
    2: ObjectSchema({**SCHEDULE_V1, "schema": _enum(2), "repeat-cron": _cron}, ("schema",)),
}


def _versioned(schemas: dict[int, ObjectSchema]) -> Callable[[Any], tuple[list[str | int], str] | None]:
    def check(value: Any) -> tuple[list[str | int], str] | None:
        if not isinstance(value, dict):
            return [], f"{value!r} is not of type 'object'"
        schema = schemas.get(value.get("schema", 1)) if isinstance(value.get("schema", 1), int) else None
        if schema is None:
            return [], f"{value!r} is not valid under any of the given schemas"
        return schema.errors(value)

    return check


def _archives(value: Any) -> tuple[list[str | int], str] | None:
    if not isinstance(value, list):
        return [], f"{value!r} is not of type 'array'"
    check = _versioned(ARCHIVE_SCHEMAS)
    for index, archive in enumerate(value):
        found = check(archive)
        if found:
            return [index, *found[0]], found[1]
    return None


TEST_SCHEMA = ObjectSchema({"type": STRING, "spec": _anything}, ("type", "spec"))

TASK_V1: dict[str, Checker] = {
    "schema": _enum(1),
    "lead-bind": _host,
    "test": _anything,
    "tool": STRING,
    "tools": _string_list,
    "schedule": _anything,
    "archives": _anything,
    "reference": _anything,
    "_key": STRING,
}
TASK_NESTED: dict[str, Callable[[Any], tuple[list[str | int], str] | None]] = {
    "test": TEST_SCHEMA.errors,
    "schedule": _versioned(SCHEDULE_SCHEMAS),
    "archives": _archives,
}
TASK_V2 = {**TASK_V1, "schema": _enum(2), "contexts": _typed("object")}
TASK_V3 = {**TASK_V2, "schema": _enum(3), "priority": INTEGER}
TASK_V4 = {**TASK_V3, "schema": _enum(4), "debug": BOOLEAN}
TASK_V5 = {**TASK_V4, "schema": _enum(5), "keep-after-archive": _duration}
TASK_SCHEMAS = {
    1: ObjectSchema(TASK_V1, ("test",), nested=TASK_NESTED),
    2: ObjectSchema(TASK_V2, ("schema", "test"), nested=TASK_NESTED),
    3: ObjectSchema(TASK_V3, ("schema", "test"), nested=TASK_NESTED),
    4: ObjectSchema(TASK_V4, ("schema", "test"), nested=TASK_NESTED),
    5: ObjectSchema(TASK_V5, ("schema", "test"), nested=TASK_NESTED),
}


def task_error(task: JSON) -> str | None:
    """TaskSpecification validation as POST /tasks does it (after the max_schema=5 check).

    pScheduler validates {"": task}, so paths read "At /: ..." for the task itself and
    "At //archives/0: ..." below it.
    """
    schema = TASK_SCHEMAS.get(task.get("schema", 1)) if isinstance(task.get("schema", 1), int) else None
    if schema is None:
        return _format([], f"{task!r} is not valid under any of the given schemas")
    found = schema.errors(task)
    if found is None:
        return None
    return _format(found[0], found[1], prefix=[""]) if found[0] else _format([], found[1])
