from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from fathom.testing import CONTRACT_EXAMPLES, FathomTestCase, load_example
from measurements.models import PathLatestRun, PingSample, Run

RESULTS_URL = "/api/v1/agent/results/"


def example_batches() -> list[tuple[str, Any]]:
    return [(path.name, json.loads(path.read_text())) for path in sorted((CONTRACT_EXAMPLES / "valid").glob("*.json"))]


def invalid_examples() -> list[tuple[str, Any]]:
    return [
        (path.name, json.loads(path.read_text())) for path in sorted((CONTRACT_EXAMPLES / "invalid").glob("*.json"))
    ]


class IngestContractTests(FathomTestCase):
    """The shared contract examples: the Go agent's tests validate the very same files."""

    def test_every_valid_example_is_stored(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        examples = example_batches()
        assert len(examples) >= 4
        for name, batch in examples:
            reply = client.post(RESULTS_URL, batch, format="json")
            assert reply.status_code == 200, (name, reply.content)
            assert [item["status"] for item in reply.json()["results"]] == ["created"] * len(batch["results"])
            for result in batch["results"]:
                run = Run.objects.get(id=result["id"])
                assert run.agent_id == self.athens.pk and run.status == result["status"]
                samples = result.get("ping", {}).get("samples", [])
                assert PingSample.objects.filter(run_id=result["id"]).count() == len(samples)

    def test_every_invalid_example_is_refused_naming_the_field(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        examples = invalid_examples()
        assert len(examples) >= 10
        for name, example in examples:
            reply = client.post(RESULTS_URL, example["batch"], format="json")
            assert reply.status_code == 400, name
            body = reply.json()
            assert body["detail"] == "invalid result batch"
            text = json.dumps(body["errors"])
            assert example["_expect_error_contains"] in text, (name, text)
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0


class IngestBehaviourTests(FathomTestCase):
    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)
        self.batch = load_example("valid/ping-loss-duplicate.json")

    def test_retry_is_idempotent(self) -> None:
        first = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        second = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        assert first.json()["results"][0]["status"] == "created"
        assert second.status_code == 200 and second.json()["results"][0]["status"] == "duplicate"
        assert Run.objects.count() == 1
        assert PingSample.objects.count() == 5

    def test_one_bad_item_stores_nothing(self) -> None:
        good = self.batch["results"][0]
        bad = copy.deepcopy(good)
        bad["id"] = str(uuid.uuid4())
        bad["ended_at"] = "2026-11-22T09:00:00Z"  # before started_at
        reply = self.client_athens.post(RESULTS_URL, {"schema_version": 1, "results": [good, bad]}, format="json")
        assert reply.status_code == 400
        assert reply.json()["errors"] == [{"path": "results/1/ended_at", "message": "ended_at is before started_at"}]
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0

    def test_semantic_checks(self) -> None:
        result = self.batch["results"][0]
        cases: list[tuple[dict[str, Any], str]] = [
            ({**result, "peer_id": str(uuid.uuid4())}, "results/0/peer_id"),
            ({**result, "started_at": "2099-01-01T00:00:00Z", "ended_at": "2099-01-01T00:00:05Z"}, "started_at"),
            ({**result, "ping": {**result["ping"], "received": 9}}, "results/0/ping/received"),
            ({**result, "ping": {**result["ping"], "transmitted": 7}}, "results/0/ping/samples"),
            ({**result, "ping": {**result["ping"], "duplicates": 0}}, "results/0/ping/duplicates"),
        ]
        for bad, where in cases:
            reply = self.client_athens.post(RESULTS_URL, {"schema_version": 1, "results": [bad]}, format="json")
            assert reply.status_code == 400, where
            assert where in json.dumps(reply.json()["errors"]), (where, reply.json())
        repeated = {"schema_version": 1, "results": [result, result]}
        reply = self.client_athens.post(RESULTS_URL, repeated, format="json")
        assert reply.status_code == 400 and "appears twice" in json.dumps(reply.json())
        assert Run.objects.count() == 0

    def test_malformed_bodies(self) -> None:
        reply = self.client_athens.post(
            RESULTS_URL, b'{"schema_version": 1, "results": [', content_type="application/json"
        )
        assert reply.status_code == 400 and "JSON parse error" in reply.json()["detail"]
        reply = self.client_athens.post(
            RESULTS_URL, b"schema_version=1", content_type="application/x-www-form-urlencoded"
        )
        assert reply.status_code == 415
        bodies: list[object] = [[], "text", 42, None]
        for body in bodies:
            assert self.client_athens.post(RESULTS_URL, body, format="json").status_code == 400
        assert Run.objects.count() == 0

    def test_oversized_body_is_413(self) -> None:
        body = b'{"schema_version": 1, "results": []' + b" " * (9 * 1024 * 1024) + b"}"
        reply = self.client_athens.post(RESULTS_URL, body, content_type="application/json")
        assert reply.status_code == 413
        assert reply.json() == {"detail": "request body too large"}

    def test_results_are_stored_as_the_authenticated_agent(self) -> None:
        # frankfurt submits the same shape: the run's source is frankfurt, whatever the body says.
        batch = copy.deepcopy(self.batch)
        batch["results"][0]["peer_id"] = str(self.athens.pk)
        client = self.agent_client(self.frankfurt, self.frankfurt_credential)
        assert client.post(RESULTS_URL, batch, format="json").status_code == 200
        run = Run.objects.get()
        assert run.agent_id == self.frankfurt.pk and run.peer_id == self.athens.pk
        sample = PingSample.objects.filter(run_id=run.id).first()
        assert sample is not None and sample.agent_id == self.frankfurt.pk

    def test_run_summary_and_latest_path(self) -> None:
        self.client_athens.post(RESULTS_URL, self.batch, format="json")
        run = Run.objects.get()
        assert run.summary["loss_fraction"] == 0.25
        assert run.summary["rtt_min_ms"] == 309.0
        assert run.params == {"count": 4, "interval_s": 1.0, "size_bytes": 56, "ttl": None}
        latest = PathLatestRun.objects.get()
        assert latest.source_id == self.athens.pk and latest.destination_id == self.frankfurt.pk
        older = copy.deepcopy(load_example("valid/ping-ok.json"))
        self.client_athens.post(RESULTS_URL, older, format="json")
        latest.refresh_from_db()
        assert latest.run_id == uuid.UUID(self.batch["results"][0]["id"])  # the newer run stays


def test_examples_directory_is_the_shared_contract() -> None:
    assert (Path(CONTRACT_EXAMPLES).parent / "result-batch.v1.schema.json").is_file()
