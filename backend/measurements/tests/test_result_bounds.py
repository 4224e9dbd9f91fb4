"""Issue 17 item 7: a valid result always fits in an upload by itself, so an agent that
splits refused batches down to single results never has to drop a valid one.

The largest result of each test kind is computed from the contract (every array at its
maxItems, every string at its maxLength, every number at its widest), and must fit in the
results endpoint's body limit beside the batch envelope; an unbounded array or string in
the contract fails the test. A real maximal throughput run (300 s + 60 s omitted, 128
streams) is stored whole.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from core import contract
from fathom.testing import FathomTestCase, load_example
from measurements.models import Run, ThroughputInterval

RESULTS_URL = "/api/v1/agent/results/"
KINDS = ("ping", "throughput", "flowsweep", "trace")
WIDEST_NUMBER = len(json.dumps(-1.7976931348623157e308))
WIDEST_DATE_TIME = len('"2026-11-25T10:00:00.123456789+00:00"')
WIDEST_UUID = len('"0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f"')
# A JSON encoder may write a character as \uXXXX (Go's does for <, > and &).
ESCAPED_CHAR = 6


class Unbounded(Exception):
    pass


def widest(node: dict[str, Any], defs: dict[str, Any], where: str) -> int:
    """The most bytes a JSON value valid against node can take, compactly encoded."""
    while "$ref" in node:
        document, _, pointer = node["$ref"].partition("#")
        names = contract.load(document)["$defs"] if document else defs
        node = {**names[pointer.rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
    for alternatives in ("oneOf", "anyOf"):
        if alternatives in node:
            return max(widest(option, defs, where) for option in node[alternatives])
    if "enum" in node:
        return max(len(json.dumps(value)) for value in node["enum"])
    if "const" in node:
        return len(json.dumps(node["const"]))
    kind = node.get("type")
    if isinstance(kind, list):
        return max(widest({**node, "type": one}, defs, where) for one in kind)
    if kind == "object":
        if node.get("additionalProperties", True) is not False:
            raise Unbounded(f"{where}: an object open to any property")
        properties = node.get("properties", {})
        return 2 + sum(
            len(json.dumps(name)) + 2 + widest(value, defs, f"{where}/{name}") for name, value in properties.items()
        )
    if kind == "array":
        if "maxItems" not in node:
            raise Unbounded(f"{where}: an array without maxItems")
        return 2 + int(node["maxItems"]) * (widest(node["items"], defs, f"{where}[]") + 1)
    if kind == "string":
        if node.get("format") == "date-time":
            return WIDEST_DATE_TIME
        if node.get("format") == "uuid":
            return WIDEST_UUID
        if "maxLength" not in node:
            raise Unbounded(f"{where}: a string without maxLength")
        return 2 + int(node["maxLength"]) * ESCAPED_CHAR
    if kind == "integer":
        return max(len(str(node.get("maximum", 2**63))), len(str(node.get("minimum", -(2**63)))))
    if kind == "number":
        return WIDEST_NUMBER
    if kind == "boolean":
        return len("false")
    if kind == "null":
        return len("null")
    raise Unbounded(f"{where}: no type")


def widest_result(kind: str) -> int:
    schema = contract.load("result-batch.v1.schema.json")
    defs = schema["$defs"]
    item = schema["properties"]["results"]["items"]
    if "$ref" in item:
        item = defs[item["$ref"].rsplit("/", 1)[-1]]
    # A result carries its own kind's section only (the contract refuses any other).
    own = {name: value for name, value in item["properties"].items() if name not in KINDS or name == kind}
    return widest({**item, "properties": own}, defs, f"results[{kind}]")


def test_the_contract_bounds_every_result_and_the_largest_fits_alone() -> None:
    envelope = len('{"schema_version":1,"results":[]}')
    sizes = {kind: widest_result(kind) for kind in KINDS}
    for kind, size in sizes.items():
        assert envelope + size <= settings.INGEST_MAX_BODY_BYTES, (kind, size)
    # The limit is not loose either: it exists to bound what one request may hold.
    assert max(sizes.values()) > settings.INGEST_MAX_BODY_BYTES / 2, sizes


def test_a_result_with_another_kinds_section_is_refused_by_the_contract() -> None:
    batch = load_example("valid/ping-ok.json")
    batch["results"][0]["throughput"] = load_example("valid/throughput-ok.json")["results"][0]["throughput"]
    assert list(contract.validator("result-batch.v1.schema.json").iter_errors(batch))


def maximal_throughput_result() -> dict[str, Any]:
    """What the agent uploads for the longest, widest run the options allow, with counters
    at realistic widths: 128 streams x (60 s omitted + 300 s + a last partial second)."""
    result: dict[str, Any] = copy.deepcopy(load_example("valid/throughput-ok.json")["results"][0])
    result["id"] = str(uuid.uuid4())
    section = result["throughput"]
    section["options"].update(duration_s=300, omit_s=60, parallel=128)
    section.update(streams=128, duration_s=300, omit_s=60)
    template = section["intervals"][0]
    intervals = []
    for second in range(361):
        for stream in range(128):
            interval = dict(template, stream=stream + 5, start_s=float(second), end_s=float(second + 1))
            interval.update(bytes=1_234_567_890, bits_per_s=9_876_543_210.123456, omitted=second < 60)
            intervals.append(interval)
    section["intervals"] = intervals
    section["stream_summaries"] = [section["stream_summaries"][0]] * 128
    return result


class MaximalResultTests(FathomTestCase):
    def test_the_largest_throughput_run_is_stored_whole(self) -> None:
        result = maximal_throughput_result()
        started = datetime.fromisoformat(result["started_at"])
        ended = started + timedelta(seconds=362)
        result["ended_at"] = ended.isoformat()
        body = json.dumps({"schema_version": 1, "results": [result]})
        assert len(body) > 8 * 1024 * 1024  # what the old 8 MiB limit refused and the agent then quarantined
        reply = self.agent_client(self.athens, self.athens_credential).post(
            RESULTS_URL, body, content_type="application/json"
        )
        assert reply.status_code == 200, reply.content[:500]
        assert reply.json()["results"] == [{"id": result["id"], "status": "created"}]
        assert Run.objects.filter(id=result["id"]).exists()
        assert ThroughputInterval.objects.filter(run_id=result["id"]).count() == 128 * 361
