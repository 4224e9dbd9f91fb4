"""A node's archive token cannot invent results (issue 34, item 4): a pushed run is taken only
if the task it names could have run it (perfsonar/run_schedule.py), and a refused push stores
nothing."""

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
from meshes.models import Mesh, MeshTest, Slot
from perfsonar.choices import TaskState
from perfsonar.models import Node, Task
from perfsonar.nodes import register_node
from perfsonar.tokens import authorization_header

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ARCHIVE = "/api/v1/perfsonar/archive/"
NODE_HOST = "https://ps-lab.example.net/pscheduler"


class ArchiveScheduleTests(FathomTestCase):
    ingest_now = None  # runs are made at the wall clock's time

    def setUp(self) -> None:
        self.node = register_node("ps-lab", NODE_HOST, "198.18.9.1")
        self.now = timezone.now().replace(microsecond=0)
        self.template = json.loads((FIXTURES / "archive-rtt.json").read_text())

    def task(self, **fields: Any) -> Task:
        task_id = uuid.uuid4()
        values: dict[str, Any] = {
            "node": self.node,
            "key": f"bg:{task_id}",
            "test_type": "ping",
            "source": self.node.agent,
            "destination": self.athens,
            "target": self.athens.address,
            "test_id": f"default/ping:{self.athens.pk}",
            "body": {"schedule": {"repeat": "PT60S"}},
            "url": f"{NODE_HOST}/tasks/{task_id}",
            "state": TaskState.ACTIVE,
            "starts_at": self.now - timedelta(hours=1),
            "until": self.now + timedelta(hours=1),
        }
        values.update(fields)
        return Task.objects.create(id=task_id, **values)

    def push(self, task: Task, start: datetime, *, href_task: str | None = None) -> tuple[int, str]:
        body = copy.deepcopy(self.template)
        task_url = href_task or task.url
        run_id = str(uuid.uuid4())
        run_href = f"{task_url}/runs/{run_id}"
        body["id"] = run_id
        body["reference"] = {"fathom": {"task": str(task.pk)}}
        body["run"].update(
            {
                "href": run_href,
                "task-href": task_url,
                "start-time": start.isoformat(),
                "end-time": (start + timedelta(seconds=5)).isoformat(),
            }
        )
        body["task"]["href"] = task_url
        reply = self.client.post(
            ARCHIVE,
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=authorization_header(self.node),
        )
        return reply.status_code, str(reply.json().get("detail") or reply.json().get("status"))

    def assert_refused(self, answer: tuple[int, str], why: str) -> None:
        status, detail = answer
        assert status == 400 and why in detail, answer
        assert why in Node.objects.get(pk=self.node.pk).last_error

    def test_a_run_within_a_live_tasks_schedule_is_taken(self) -> None:
        task = self.task()
        assert self.push(task, self.now - timedelta(minutes=5)) == (200, "created")
        assert Run.objects.filter(source_id=self.node.pk, test_id=task.test_id).count() == 1

    def test_a_run_outside_its_tasks_life_or_of_a_refused_task_is_not_taken(self) -> None:
        live = self.task()
        self.assert_refused(self.push(live, self.now - timedelta(hours=3)), "outside its task's life")
        self.assert_refused(self.push(live, self.now + timedelta(hours=2)), "outside its task's life")
        deleted = self.task(state=TaskState.DELETED, deleted_at=self.now - timedelta(minutes=30))
        self.assert_refused(self.push(deleted, self.now - timedelta(minutes=10)), "outside its task's life")
        # A run from before the deletion, pushed late by the archiver's retries, is its own.
        assert self.push(deleted, self.now - timedelta(minutes=40))[0] == 200
        refused = self.task(state=TaskState.REFUSED)
        self.assert_refused(self.push(refused, self.now - timedelta(minutes=5)), "was refused by the node")
        assert Run.objects.filter(source_id=self.node.pk).count() == 1

    def test_a_run_under_another_tasks_url_is_not_taken(self) -> None:
        task = self.task()
        other = f"{NODE_HOST}/tasks/{uuid.uuid4()}"
        answer = self.push(task, self.now - timedelta(minutes=5), href_task=other)
        self.assert_refused(answer, "not under its task's URL")
        assert not Run.objects.filter(source_id=self.node.pk).exists()

    def test_a_repeating_task_takes_no_more_runs_than_its_schedule_runs(self) -> None:
        task = self.task()
        base = self.now - timedelta(minutes=30)
        # sliprand can put two runs of a 60 s schedule closer than 60 s, so each run may have
        # two others within a minute of it; never three.
        for offset_s in (0, 70, 100, 120):
            assert self.push(task, base + timedelta(seconds=offset_s))[0] == 200, offset_s
        self.assert_refused(self.push(task, base + timedelta(seconds=90)), "more than its schedule runs")
        assert Run.objects.filter(source_id=self.node.pk).count() == 4

    def test_a_slot_task_takes_one_run_in_its_slot(self) -> None:
        test = MeshTest.objects.create(
            mesh=Mesh.objects.get(name="default"), name="thr", test_type="throughput", spec={}, interval_s=21600
        )
        slot = Slot.objects.create(
            mesh_test=test,
            source=self.node.agent,
            destination=self.athens,
            test_type="throughput",
            period_start=self.now - timedelta(minutes=20),
            start_at=self.now - timedelta(minutes=10),
            end_at=self.now - timedelta(minutes=9),
            spec={"duration_s": 10, "omit_s": 0, "parallel": 1},
        )
        task = self.task(slot=slot, body={}, starts_at=slot.start_at, until=slot.end_at)
        self.template = json.loads((FIXTURES / "archive-throughput.json").read_text())
        task.test_type, task.test_id = "throughput", f"default/thr:{self.athens.pk}"
        task.save(update_fields=["test_type", "test_id"])
        early = slot.start_at - timedelta(minutes=5)
        self.assert_refused(self.push(task, early), "outside its task's life")
        assert self.push(task, slot.start_at)[0] == 200
        self.assert_refused(self.push(task, slot.start_at + timedelta(seconds=20)), "already has its run")
        assert Run.objects.filter(slot_id=slot.pk).count() == 1
