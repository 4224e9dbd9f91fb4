"""A perfSONAR node subscribed to a mesh with a latency test pushes its latencybg entries, each
a run of its own: the valid ones are stored as latency results, a failed one as a failed run
with powstream's reason, and a malformed one is refused alone, saying why, storing nothing."""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.utils import timezone

from fathom.testing import FathomTestCase
from measurements.models import Run
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember, MeshTest
from perfsonar.models import Node
from perfsonar.nodes import register_node
from perfsonar.tokens import authorization_header

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ARCHIVE = "/api/v1/perfsonar/archive/"
NODE_HOST = "https://ps-lab.example.net/pscheduler"


class LatencyIntakeTests(FathomTestCase):
    ingest_now = None  # entries are reported at the wall clock's time

    def setUp(self) -> None:
        self.node = register_node("ps-lab", NODE_HOST, "198.18.9.1")
        mesh = Mesh.objects.create(name="lab", kind=MeshKind.MESH)
        for agent in (self.node.agent, self.frankfurt):
            MeshMember.objects.create(mesh=mesh, agent=agent, side=MemberSide.A)
        MeshTest.objects.create(mesh=mesh, name="owd", test_type="latency", spec={}, interval_s=60)
        self.entry = json.loads((FIXTURES / "archive-latencybg.json").read_text())
        self.entry["test"]["spec"]["dest"] = self.frankfurt.address
        self.task_href = f"{NODE_HOST}/tasks/{uuid.uuid4()}"
        self.now = timezone.now().replace(microsecond=0)

    def push(self, reported: datetime, change: Any = None, run_id: str = "") -> tuple[int, str, str]:
        """Pushes one entry as the node's archiver does: (status, detail, run id)."""
        body = copy.deepcopy(self.entry)
        run_id = run_id or str(uuid.uuid4())
        href = f"{self.task_href}/runs/{run_id}"
        body["id"] = run_id
        body["run"].update({"href": href, "task-href": self.task_href, "start-time": reported.isoformat()})
        body["run"]["end-time"] = reported.isoformat()
        body["task"]["href"] = self.task_href
        if change is not None:
            change(body)
        reply = self.client.put(
            ARCHIVE,
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=authorization_header(self.node),
        )
        answer = reply.json()
        return reply.status_code, str(answer.get("detail") or answer.get("status")), run_id

    def test_a_stream_keeps_its_valid_entries_and_refuses_each_malformed_one_alone(self) -> None:
        def failed(body: dict[str, Any]) -> None:
            body["result"] = {"schema": 1, "succeeded": False, "error": "Powstream call to owstats failed: no file"}

        def bad_key(body: dict[str, Any]) -> None:
            body["result"]["histogram-latency"]["fast"] = 1

        def uncounted(body: dict[str, Any]) -> None:
            body["result"]["packets-received"] = 590

        def unfinished(body: dict[str, Any]) -> None:
            del body["result"]["packets-sent"]

        stream = [None, bad_key, None, failed, uncounted, None, unfinished]
        answers = [self.push(self.now - timedelta(minutes=10 - index), change) for index, change in enumerate(stream)]
        statuses = [(status, detail) for status, detail, _ in answers]
        assert statuses[0] == statuses[2] == statuses[3] == statuses[5] == (200, "created"), statuses
        refused = {index: answers[index][1] for index in (1, 4, 6)}
        assert all(answers[index][0] == 400 for index in refused), statuses
        assert refused[1].startswith("result/histogram-latency: 'fast' is not a delay bucket")
        assert refused[4].startswith("result/packets-lost: 0, but 600 sent less 590 received is 10")
        assert refused[6] == "result/packets-sent: missing"
        assert "result/packets-sent: missing" in Node.objects.get(pk=self.node.pk).last_error

        runs = {run.status: run for run in Run.objects.filter(source_id=self.node.pk)}
        stored = Run.objects.filter(source_id=self.node.pk)
        assert stored.count() == 4 and {run.test_type for run in stored} == {"latency"}
        assert stored.filter(status="ok").count() == 3
        assert runs["failed"].error == "Powstream call to owstats failed: no file"
        ok = stored.filter(status="ok").order_by("started_at").first()
        assert ok is not None and ok.destination_id == self.frankfurt.pk and ok.test_id.startswith("lab/owd:")
        # Each entry covers its 600 packets at 0.1 s before powstream reported it.
        assert ok.ended_at - ok.started_at == timedelta(seconds=60)
        assert ok.summary["sent"] == 600 and ok.summary["forward_min_ms"] == 2.51

        # The archiver's retries: a stored entry is a duplicate, a refused one is refused again.
        first, second = self.now - timedelta(minutes=10), self.now - timedelta(minutes=9)
        assert self.push(first, None, answers[0][2])[:2] == (200, "duplicate")
        assert self.push(second, bad_key, answers[1][2])[0] == 400
        assert Run.objects.filter(source_id=self.node.pk).count() == 4
