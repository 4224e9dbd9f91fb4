from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from core import contract
from fathom.testing import CONTRACT_EXAMPLES, EXAMPLE_PEER_ID, FathomTestCase, add_latency_mesh, load_example
from inventory.services import revoke_agent
from measurements.models import FlowSample, PathLatestRun, PingSample, Run, ThroughputInterval, TracePath
from measurements.signals import results_received

RESULTS_URL = "/api/v1/agent/results/"


def example_batches() -> list[tuple[str, Any]]:
    return [(path.name, json.loads(path.read_text())) for path in sorted((CONTRACT_EXAMPLES / "valid").glob("*.json"))]


def invalid_examples() -> list[tuple[str, Any]]:
    return [
        (path.name, json.loads(path.read_text())) for path in sorted((CONTRACT_EXAMPLES / "invalid").glob("*.json"))
    ]


class IngestContractTests(FathomTestCase):
    """The shared contract examples: the Go agent's tests validate the very same files."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        add_latency_mesh()

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
                assert run.source_id == self.athens.pk and run.status == result["status"]
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

    def test_results_for_a_revoked_peer_are_refused(self) -> None:
        revoke_agent(self.frankfurt)
        reply = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        assert reply.status_code == 400
        assert reply.json()["errors"] == [
            {"path": "results/0/peer_id", "message": f"peer agent {EXAMPLE_PEER_ID} is revoked"}
        ]
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0

    def test_a_peer_deleted_while_the_batch_is_checked_is_refused_not_a_500(self) -> None:
        # The plan check runs between the peers' check and the insert; a peer deleted then
        # (an operator removing an agent mid-upload) failed the insert on its foreign key.
        def delete_peer(**_: object) -> list[object]:
            self.frankfurt.delete()
            return []

        results_received.connect(delete_peer, dispatch_uid="test-delete-peer")
        try:
            reply = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        finally:
            results_received.disconnect(dispatch_uid="test-delete-peer")
        assert reply.status_code == 400, reply.content
        assert reply.json()["errors"] == [
            {"path": "results/0/peer_id", "message": f"unknown peer agent {EXAMPLE_PEER_ID} (deleted just now)"}
        ]
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0 and PathLatestRun.objects.count() == 0

    def test_malformed_bodies(self) -> None:
        reply = self.client_athens.post(
            RESULTS_URL, b'{"schema_version": 1, "results": [', content_type="application/json"
        )
        assert reply.status_code == 400 and reply.json()["detail"] == "invalid result batch"
        assert "JSON parse error" in reply.json()["errors"][0]["message"]
        reply = self.client_athens.post(
            RESULTS_URL, b"schema_version=1", content_type="application/x-www-form-urlencoded"
        )
        assert reply.status_code == 415
        bodies: list[object] = [[], "text", 42, None]
        for body in bodies:
            assert self.client_athens.post(RESULTS_URL, body, format="json").status_code == 400
        assert Run.objects.count() == 0

    def test_oversized_bodies_are_413_before_anything_reads_them(self) -> None:
        body = b'{"schema_version": 1, "results": []' + b" " * (32 * 1024 * 1024) + b"}"
        reply = self.client_athens.post(RESULTS_URL, body, content_type="application/json")
        assert reply.status_code == 413
        assert reply.json() == {"detail": f"request body too large (at most {32 * 1024 * 1024} bytes here)"}
        # Every other endpoint, the anonymous ones too, takes 1 MiB at most.
        small = '{"token": "x"' + " " * (1024 * 1024) + "}"
        assert self.client.post("/api/v1/agents/enroll/", small, content_type="application/json").status_code == 413
        facts = self.client_athens.put("/api/v1/agent/host-facts/", small, content_type="application/json")
        assert facts.status_code == 413
        assert Run.objects.count() == 0

    def test_results_are_stored_as_the_authenticated_agent(self) -> None:
        # frankfurt submits the same shape: the run's source is frankfurt, whatever the body says.
        batch = copy.deepcopy(self.batch)
        batch["results"][0]["peer_id"] = str(self.athens.pk)
        client = self.agent_client(self.frankfurt, self.frankfurt_credential)
        assert client.post(RESULTS_URL, batch, format="json").status_code == 200
        run = Run.objects.get()
        assert run.source_id == self.frankfurt.pk and run.destination_id == self.athens.pk
        sample = PingSample.objects.filter(run_id=run.id).first()
        assert sample is not None and sample.source_id == self.frankfurt.pk

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
    assert (contract.CONTRACT_DIR / "result-batch.v1.schema.json").is_file()


class ProbeResultIngestTests(FathomTestCase):
    """Throughput, flow-sweep and trace results land in their hypertables, whole."""

    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)

    def post(self, batch: Any) -> Any:
        return self.client_athens.post(RESULTS_URL, batch, format="json")

    def test_throughput_intervals_and_summary(self) -> None:
        batch = load_example("valid/throughput-ok.json")
        assert self.post(batch).status_code == 200
        result = batch["results"][0]
        run = Run.objects.get(id=result["id"])
        assert run.params["duration_s"] == 20 and run.params["congestion"] == "cubic"
        assert run.summary["sender_bits_per_s"] == 3.09e9 and run.summary["max_snd_wnd"] == 3145728
        assert run.summary["rcvbuf_actual"] == 131072 and run.summary["iperf3_version"] == "3.12"
        assert str(run.slot_id) == result["slot_id"]
        rows = list(ThroughputInterval.objects.filter(run_id=run.id).order_by("interval_index"))
        assert [row.omitted for row in rows] == [True, True, False, False]
        # After the 2 omitted seconds iperf3's clock restarts: the first measured interval ends at 3 s.
        assert [(row.time - run.started_at).total_seconds() for row in rows] == [1.0, 2.0, 3.0, 4.0]
        assert rows[2].snd_wnd_bytes == 3145728 and rows[2].rtt_us == 7950 and rows[2].packets is None

    def test_flow_sweep_samples_keep_their_flow(self) -> None:
        batch = load_example("valid/flowsweep-ecmp.json")
        assert self.post(batch).status_code == 200
        run_id = batch["results"][0]["id"]
        samples = FlowSample.objects.filter(run_id=run_id)
        assert samples.count() == 8 and samples.filter(rtt_ms__isnull=True).count() == 1
        assert set(samples.filter(flow=2).values_list("src_port", flat=True)) == {40003}
        summary = Run.objects.get(id=run_id).summary
        assert summary["flow_min_rtt_ms"]["2"] == 11.96 and summary["answered"] == 7

    def test_trace_paths_with_fingerprints(self) -> None:
        batch = load_example("valid/trace-ecmp.json")
        assert self.post(batch).status_code == 200
        run_id = batch["results"][0]["id"]
        paths = {row.flow: row for row in TracePath.objects.filter(run_id=run_id)}
        assert sorted(paths) == [0, 1, 2] and paths[1].hops[0]["probes"][0]["address"] == "198.18.128.2"
        assert not paths[2].reached and paths[2].hop_count == 2
        assert Run.objects.get(id=run_id).summary["distinct_paths"] == 3

    def test_inconsistent_probe_results_are_refused_and_store_nothing(self) -> None:
        cases: list[tuple[str, Any, str]] = []
        batch = load_example("valid/throughput-ok.json")
        batch["results"][0]["throughput"]["intervals"][1]["end_s"] = 0.5
        cases.append(("throughput", batch, "end_s is before start_s"))
        batch = load_example("valid/flowsweep-ecmp.json")
        batch["results"][0]["flowsweep"]["samples"][1]["flow"] = 0
        cases.append(("flowsweep", batch, "appears twice"))
        batch = load_example("valid/flowsweep-ecmp.json")
        batch["results"][0]["flowsweep"]["samples"][1]["seq"] = 5
        cases.append(("flowsweep", batch, "seq 5 of 2"))
        batch = load_example("valid/trace-ecmp.json")
        batch["results"][0]["trace"]["flows"][0]["hops"].reverse()
        cases.append(("trace", batch, "increasing"))
        batch = load_example("valid/trace-ecmp.json")
        batch["results"][0]["trace"]["flows"][1]["flow"] = 0
        cases.append(("trace", batch, "flow 0 appears twice"))
        for name, bad, expected in cases:
            reply = self.post(bad)
            assert reply.status_code == 400, name
            assert expected in json.dumps(reply.json()["errors"]), (name, reply.json())
        assert Run.objects.count() == 0
        assert ThroughputInterval.objects.count() == FlowSample.objects.count() == TracePath.objects.count() == 0
