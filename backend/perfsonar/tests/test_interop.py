"""Fathom drives a fake perfSONAR node end to end (tests/fakes/pscheduler): a real HTTPS
server with a self-signed certificate that accepts tasks, runs them on its own clock, serves
runs and results, and pushes each run through the http archiver to Fathom's live receiver.

Checked: the node check (pin, CA bundle, wrong pin, down, clock skew); tasks created with
their URLs and deleted when the mesh changes; results by push and, behind a firewall, by
poll; failed and non-started runs stored with pScheduler's reason; a task refused by the
node's limits; a mixed pair measured with a real iperf3 against the agent's one-off server;
the receiver refusing what it must.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import pytest
import requests
from django.test import LiveServerTestCase, override_settings
from django.utils import timezone

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.models import LatencyInterval, Run
from meshes.choices import MemberSide, MeshKind, SlotState
from meshes.models import Mesh, MeshMember, MeshTest, Slot
from meshes.services.plans import TwampPeer, background_tests, twamp_peers
from perfsonar.choices import TaskState, TlsMode
from perfsonar.client import PSchedulerClient, PSchedulerError, Trust
from perfsonar.intake import poll
from perfsonar.models import Node, Task
from perfsonar.nodes import check_node, client_for, delete_all_tasks, node_problems, register_node
from perfsonar.psconfig.exporter import export_mesh
from perfsonar.reconcile import create_task, reconcile
from perfsonar.tokens import authorization_header
from perfsonar.wanted import desired_background

TESTS_DIR = Path(__file__).resolve().parents[3] / "tests"
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from fakes.pscheduler import FakePScheduler  # noqa: E402

IPERF3_PORT = 15202
FAST = {
    "PERFSONAR_FIRST_RUN_LEAD_S": 1,
    "PERFSONAR_SLOT_TASK_MIN_LEAD_S": 1,
    "PERFSONAR_POLL_AFTER_S": 1,
    "PERFSONAR_ARCHIVE_VERIFY_TLS": False,
    "PERFSONAR_IPERF3_PORT": IPERF3_PORT,
}


def wait_until(what: str, check: Any, timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout_s} s")


@override_settings(**FAST)
class InteropTests(LiveServerTestCase):
    fake: ClassVar[FakePScheduler]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.fake = FakePScheduler(speed=10, first_run_delay_s=0.3, hostname="ps-lisbon.example.net").start()
        cls.addClassCleanup(cls.fake.stop)

    def setUp(self) -> None:
        self.fake.reset()
        # Before the live server's database is flushed: a run the fake is still pushing would
        # insert under the flush's TRUNCATE, and the two deadlock.
        self.addCleanup(self.fake.settle)
        self.settings_override = override_settings(PUBLIC_URL=self.live_server_url)
        self.settings_override.enable()
        self.addCleanup(self.settings_override.disable)
        Mesh.objects.all().delete()  # the default mesh (every agent) would add its own tasks
        self.agent = Agent.objects.create(name="athens", address="198.18.1.1", credential_sha256="x" * 64)
        self.node = register_node(
            "ps-lisbon", self.fake.base_url, "198.18.9.1", TlsMode.PINNED, "", self.fake.fingerprint_sha256
        )
        self.mesh = Mesh.objects.create(name="ps-mesh", kind=MeshKind.MESH)
        for agent in (self.agent, self.node.agent):
            MeshMember.objects.create(mesh=self.mesh, agent=agent, side=MemberSide.A)

    def add_test(self, name: str, test_type: str, spec: dict[str, Any], interval_s: int = 60) -> MeshTest:
        return MeshTest.objects.create(mesh=self.mesh, name=name, test_type=test_type, spec=spec, interval_s=interval_s)

    def lost_ping_task(self) -> Task:
        """A ping test whose task the node makes but whose POST answer it loses."""
        self.fake.lose_task_answers(1)
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)
        return Task.objects.get()

    def over_limits_slot(self) -> Slot:
        """A throughput slot starting in 20 s whose 120 s test the node's limits refuse."""
        test = self.add_test("thr", "throughput", {"duration_s": 120}, interval_s=6 * 3600)
        return Slot.objects.create(
            mesh_test=test,
            source=self.node.agent,
            destination=self.agent,
            test_type="throughput",
            period_start=timezone.now(),
            start_at=timezone.now() + timedelta(seconds=20),
            end_at=timezone.now() + timedelta(seconds=160),
            spec={"duration_s": 120, "omit_s": 0, "parallel": 1},
        )

    def unpushed_runs(self, reason: str) -> Task:
        """A ping task behind a firewall (nothing archived): one run that did not start, with
        `reason`, then one that finished; returns once the node has both."""
        self.fake.block_archiving()
        self.fake.force_runs("nonstart", reason, count=1)
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=10)
        reconcile()
        task = Task.objects.get(state=TaskState.ACTIVE)
        self.fake.wait_for_runs(task.url, "nonstart", timeout_s=30)
        self.fake.wait_for_runs(task.url, "finished", timeout_s=30)
        return task

    # --- the node check ------------------------------------------------------------------

    def test_the_check_reads_the_node_and_notices_skew_tls_and_outages(self) -> None:
        node = check_node(self.node)
        assert node.reachable is True and node.api_level == 6 and node.hostname == "ps-lisbon.example.net"
        assert {"throughput", "rtt", "trace"} <= set(node.tests) and "iperf3" in node.tools
        assert "http" in node.archivers and node.clock_offset_s is not None and abs(node.clock_offset_s) < 0.5
        assert node_problems(node) == [] and node.agent.last_seen_at is not None

        self.fake.set_clock_offset(2.5)
        skewed = check_node(node)
        assert any("+2.5 s" in problem for problem in node_problems(skewed))
        self.fake.set_clock_offset(0.0)

        trusted_by_ca = register_node(
            "ps-ca", self.fake.base_url, "198.18.9.2", TlsMode.CA_BUNDLE, self.fake.cert_pem, ""
        )
        assert check_node(trusted_by_ca).reachable is True
        system = register_node("ps-system", self.fake.base_url, "198.18.9.3")
        checked = check_node(system)
        assert checked.reachable is False and "certificate verify failed" in checked.last_error
        wrong_pin = register_node("ps-pin", self.fake.base_url, "198.18.9.4", TlsMode.PINNED, "", "00" * 32)
        checked = check_node(wrong_pin)
        assert checked.reachable is False and "pinned fingerprint" in checked.last_error

        self.fake.go_down("refuse")
        try:
            down = check_node(node)
        finally:
            self.fake.go_up()
        assert down.reachable is False and "unreachable" in down.last_error
        back = check_node(down)
        assert back.reachable is True and back.last_error == ""

    # --- tasks and results ---------------------------------------------------------------

    def test_tasks_are_created_results_pushed_and_tasks_deleted_when_the_mesh_changes(self) -> None:
        # Each test added reaches the node when it commits (perfsonar.signals).
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)
        self.add_test("route", "trace", {}, interval_s=60)
        tasks = {task.test_type: task for task in Task.objects.filter(state=TaskState.ACTIVE)}
        assert set(tasks) == {"ping", "trace"}
        on_node = {task["url"]: task for task in self.fake.tasks()}
        assert set(on_node) == {task.url for task in tasks.values()}
        rtt_json = on_node[tasks["ping"].url]["json"]
        assert rtt_json["test"]["spec"]["dest"] == "198.18.1.1" and rtt_json["schedule"]["repeat"] == "PT30S"
        archive = rtt_json["archives"][0]["data"]
        assert archive["_url"] == self.live_server_url + "/api/v1/perfsonar/archive/"
        assert archive["_headers"]["Authorization"] == authorization_header(self.node)
        assert "fps_" not in json.dumps(tasks["ping"].body)  # the stored copy holds no secret
        report = reconcile()
        assert (report.created, report.deleted, report.errors) == (0, 0, []), report  # nothing more to do

        # Each first run is pushed to the receiver and stored as the node's result.
        runs = wait_until(
            "both runs stored",
            lambda: (
                list(Run.objects.filter(source_id=self.node.pk))
                if Run.objects.filter(source_id=self.node.pk).count() >= 2
                else None
            ),
        )
        by_type = {run.test_type: run for run in runs}
        ping = by_type["ping"]
        assert ping.destination_id == self.agent.pk and ping.status == "ok" and ping.test_id.startswith("ps-mesh/rtt:")
        assert ping.summary["rtt_min_ms"] > 0
        assert by_type["trace"].summary["flows"] == 1
        node = Node.objects.get(pk=self.node.pk)
        assert node.last_push_at is not None

        # The mesh no longer wants the trace: its task is deleted from the node when that commits.
        MeshTest.objects.filter(name="route").delete()
        trace_task = Task.objects.get(pk=tasks["trace"].pk)
        assert trace_task.state == TaskState.DELETED and trace_task.deleted_at is not None
        enabled = {task["url"]: task["enabled"] for task in self.fake.tasks()}
        assert enabled[trace_task.url] is False and enabled[tasks["ping"].url] is True
        # The node leaves the mesh: nothing of it is left enabled on the node.
        MeshMember.objects.filter(agent=self.node.agent).delete()
        assert not [task for task in self.fake.tasks() if task["enabled"]]

    def test_a_nodes_latency_test_runs_twping_against_the_agents_twamp_server(self) -> None:
        """Issue 36's mixed pair: the node measures with its own tool (twping, TWAMP-Control on
        the agent's port 862, the node alone taking part) once a report interval, in both
        directions: towards the agent, and reporting the way back for the agent's path towards
        it. The agent admits the node as a planned peer and runs no latency test towards it (a
        node's twampd answers only TWAMP-Control sessions); each result lands as its path's
        one-way interval, forward only."""
        self.add_test("owd", "latency", {}, interval_s=60)
        tasks = {task.source_id: task for task in Task.objects.filter(state=TaskState.ACTIVE)}
        assert set(tasks) == {self.node.pk, self.agent.pk}
        on_node = {item["url"]: item["json"] for item in self.fake.tasks()}
        spec = {"dest": "198.18.1.1", "packet-timeout": 2, "packet-padding": 27, "packet-count": 540, "ctrl-port": 862}
        towards_agent, way_back = on_node[tasks[self.node.pk].url], on_node[tasks[self.agent.pk].url]
        for task in (towards_agent, way_back):
            assert task["tools"] == ["twping"] and task["schedule"]["repeat"] == "PT1M"
            assert "slip" not in task["schedule"]
        assert towards_agent["test"] == {"type": "latency", "spec": spec}
        assert way_back["test"] == {"type": "latency", "spec": {**spec, "reverse": True, "schema": 2}}
        assert twamp_peers(self.agent) == [TwampPeer("198.18.9.1", 862)]
        assert not [test for test in background_tests(self.agent) if test.type == "latency"]

        for source, destination in ((self.node.agent, self.agent), (self.agent, self.node.agent)):
            run = wait_until(
                f"the latency run of {source.name} -> {destination.name} stored",
                lambda source=source: Run.objects.filter(source_id=source.pk, test_type="latency").first(),
            )
            assert run.destination_id == destination.pk and run.status == "ok", run.error
            interval = LatencyInterval.objects.get(run_id=run.id)
            assert (interval.sent, interval.answered, interval.forward_lost) == (540, 539, 1)
            assert interval.backward_lost is None and interval.round_trip_min_ms is None
            assert interval.forward_min_ms == 2.5 and interval.forward_max_ms == 4.91

    def test_between_two_nodes_powstream_reports_each_interval_as_a_result(self) -> None:
        """Node to node, latencybg runs without pause: its one long run reports every
        packet-count packets (600 at 0.1 s: a minute, 6 s at the fake's speed) as a run of its
        own, each pushed and stored as one one-way interval of the path."""
        porto = register_node(
            "ps-porto", self.fake.base_url, "198.18.9.2", TlsMode.PINNED, "", self.fake.fingerprint_sha256
        )
        mesh = Mesh.objects.create(name="owd-nodes", kind=MeshKind.DISJOINT, unidirectional=True)
        MeshMember.objects.create(mesh=mesh, agent=self.node.agent, side=MemberSide.A)
        MeshMember.objects.create(mesh=mesh, agent=porto.agent, side=MemberSide.B)
        MeshTest.objects.create(mesh=mesh, name="owd", test_type="latency", spec={}, interval_s=60)
        (task,) = Task.objects.filter(state=TaskState.ACTIVE, test_type="latency")
        assert (task.source_id, task.destination_id) == (self.node.pk, porto.pk)
        on_node = {item["url"]: item["json"] for item in self.fake.tasks()}[task.url]
        assert on_node["tools"] == ["powstream"] and on_node["test"]["type"] == "latencybg"

        intervals = wait_until(
            "two powstream reports stored",
            lambda: found if len(found := list(LatencyInterval.objects.filter(source_id=self.node.pk))) >= 2 else None,
            timeout_s=60,  # the second report comes 12 s in; a loaded CI pushes late
        )
        for interval in intervals:
            run = Run.objects.get(id=interval.run_id)
            assert interval.destination_id == run.destination_id == porto.pk and run.status == "ok", run.error
            assert (interval.sent, interval.answered, interval.forward_lost) == (600, 600, 0)
            assert interval.forward_min_ms == 2.51 and interval.forward_max_ms == 88.21
            assert interval.backward_lost is None
        # Each report is its own interval, a report's worth of packets apart.
        starts = sorted(interval.time for interval in intervals)
        assert len(set(starts)) == len(starts)

    def test_a_mesh_deleted_while_the_node_creates_its_task_leaves_no_task_on_the_node(self) -> None:
        """A CI run deleted a mesh during a sync's POST: saving the task's row afterwards failed on
        the gone mesh test, and the task stayed enabled on the node, unknown to Fathom."""
        rtt = self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)
        desired = next(task for task in desired_background() if task.test_type == "ping")
        real = client_for(self.node)

        class DeletesTheMeshMeanwhile:
            def create_task(self, body: dict[str, Any]) -> str:
                url = real.create_task(body)
                MeshTest.objects.filter(pk=rtt.pk).delete()  # commits: the mesh's own sync runs
                return url

        start = timezone.now() + timedelta(seconds=5)
        made = create_task(DeletesTheMeshMeanwhile(), desired, start, start + timedelta(hours=1))  # type: ignore[arg-type]
        assert made is not None and made.url
        row = Task.objects.get(pk=made.pk)
        assert (row.state, row.url, row.mesh_test_id) == (TaskState.ACTIVE, made.url, None)
        assert reconcile().deleted == 1
        assert not [task for task in self.fake.tasks() if task["enabled"]]

        # A mesh test gone before the row is saved: nothing is created on the node.
        before = len(self.fake.tasks())
        assert create_task(real, desired, start, start + timedelta(hours=1)) is None
        assert len(self.fake.tasks()) == before

    def test_a_task_being_posted_is_not_active_without_a_url_and_a_worker_dying_mid_post_is_adopted(
        self,
    ) -> None:
        """A CI run listed an active task with no URL: the row was saved active before the POST
        answered. While the POST is in flight the row is unanswered, and a worker that dies
        there leaves it for the next sync to find by its reference."""
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)
        desired = next(task for task in desired_background() if task.test_type == "ping")
        real = client_for(self.node)
        seen: list[tuple[str, str]] = []
        posted: list[str] = []

        class DiesMidPost:
            def create_task(self, body: dict[str, Any]) -> str:
                real.create_task(body)
                posted.append(body["reference"]["fathom"]["task"])
                row = Task.objects.get(pk=posted[0])
                seen.append((row.state, row.url))
                raise SystemExit("the worker was killed")

        start = timezone.now() + timedelta(seconds=5)
        with pytest.raises(SystemExit):
            create_task(DiesMidPost(), desired, start, start + timedelta(hours=1))  # type: ignore[arg-type]
        assert seen == [(TaskState.UNANSWERED, "")]
        assert reconcile().adopted == 1
        adopted = Task.objects.get(pk=posted[0])
        assert adopted.state == TaskState.ACTIVE and adopted.url in {task["url"] for task in self.fake.tasks()}

    def test_a_task_whose_post_got_no_answer_is_found_on_the_node_and_adopted(self) -> None:
        """The node makes the task but its answer is lost (a timeout): the next sync finds the task
        by its reference and keeps its URL, so a mesh change deletes it and no twin is posted."""
        lost = self.lost_ping_task()
        assert (lost.state, lost.url) == (TaskState.UNANSWERED, "")
        assert "unreachable" in lost.reason
        assert "no answer" in Node.objects.get(pk=self.node.pk).last_error
        assert len(self.fake.tasks()) == 1  # made all the same

        report = reconcile()
        assert (report.adopted, report.created) == (1, 0), report
        assert Node.objects.get(pk=self.node.pk).last_error == ""  # settled: no longer a problem
        adopted = Task.objects.get(pk=lost.pk)
        assert adopted.state == TaskState.ACTIVE
        assert adopted.url == self.fake.tasks()[0]["url"] and "no answer" in adopted.reason
        assert Task.objects.count() == 1 and len(self.fake.tasks()) == 1

        MeshTest.objects.filter(name="rtt").delete()
        assert Task.objects.get(pk=lost.pk).state == TaskState.DELETED
        assert not [task for task in self.fake.tasks() if task["enabled"]]

    def test_an_unanswered_task_the_node_never_answers_for_is_given_up_at_its_end(self) -> None:
        lost = self.lost_ping_task()
        self.fake.go_down("refuse")
        assert Task.objects.get(pk=lost.pk).state == TaskState.UNANSWERED  # (the commit's own sync)
        report = reconcile(lost.until - timedelta(seconds=1))
        assert Task.objects.get(pk=lost.pk).state == TaskState.UNANSWERED
        assert sum("could not be looked up" in error for error in report.errors) == 1
        reconcile(lost.until + timedelta(seconds=1))
        gone = Task.objects.get(pk=lost.pk)
        assert gone.state == TaskState.DELETED and "ended before the node could say" in gone.reason

    def test_removing_a_node_deletes_a_task_whose_post_got_no_answer(self) -> None:
        lost = self.lost_ping_task()
        assert lost.state == TaskState.UNANSWERED and [task["enabled"] for task in self.fake.tasks()] == [True]
        assert delete_all_tasks(self.node) == []
        gone = Task.objects.get(pk=lost.pk)
        assert (gone.state, gone.url) == (TaskState.DELETED, self.fake.tasks()[0]["url"])
        assert [task["enabled"] for task in self.fake.tasks()] == [False]

    def test_a_task_whose_post_got_no_answer_and_was_not_made_is_refused_once_the_node_says_so(self) -> None:
        """The node refuses the task (its limits) but the answer is lost: unknown while the node
        cannot be asked, and nothing is posted again meanwhile; once it answers, it has no such
        task, so the task is refused and its slot missed."""
        slot = self.over_limits_slot()
        self.fake.lose_task_answers(1)
        assert reconcile().unanswered == 1
        task = Task.objects.get(slot=slot)
        assert (task.state, task.url) == (TaskState.UNANSWERED, "")

        self.fake.go_down("refuse")
        report = reconcile()
        assert (report.unanswered, report.adopted, report.created) == (0, 0, 0), report
        assert any("could not be looked up" in error for error in report.errors), report
        assert Task.objects.get(pk=task.pk).state == TaskState.UNANSWERED
        assert Slot.objects.get(pk=slot.pk).state == SlotState.PLANNED

        self.fake.go_up()
        report = reconcile()
        assert (report.adopted, report.created, report.refused) == (0, 0, 0), report
        task.refresh_from_db()
        assert task.state == TaskState.REFUSED and "the node has no such task" in task.reason
        assert Node.objects.get(pk=self.node.pk).last_error.startswith("task refused: ")
        slot.refresh_from_db()
        assert slot.state == SlotState.MISSED and "did not create the task" in slot.reason
        assert self.fake.tasks() == []

    def test_only_a_request_that_may_have_reached_the_node_counts_as_unanswered(self) -> None:
        client = client_for(self.node)
        self.fake.go_down("refuse")
        with pytest.raises(PSchedulerError) as refused:
            client.api_level()
        assert (refused.value.kind, refused.value.unanswered) == ("unreachable", False)
        self.fake.go_up()
        self.fake.lose_task_answers(1)
        with pytest.raises(PSchedulerError) as lost:
            client.create_task({"schema": 1, "test": {"type": "idle", "spec": {"duration": "PT1S"}}, "schedule": {}})
        assert (lost.value.kind, lost.value.unanswered) == ("unreachable", True)

    @override_settings(PERFSONAR_TASK_TTL_S=600)
    def test_a_repeating_task_is_renewed_before_it_ends_and_retired_after(self) -> None:
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=60)
        first = Task.objects.get(state=TaskState.ACTIVE)
        assert (first.until - first.starts_at).total_seconds() == 600
        assert reconcile(first.starts_at + timedelta(seconds=400)).renewed == 0  # a third left
        report = reconcile(first.starts_at + timedelta(seconds=460))  # under a quarter left
        assert report.renewed == 1, report
        successor = Task.objects.exclude(pk=first.pk).get(state=TaskState.ACTIVE)
        assert successor.starts_at == first.until and successor.key == first.key
        on_node = {task["url"]: task for task in self.fake.tasks()}
        assert on_node[successor.url]["json"]["schedule"]["start"] == first.until.isoformat()

    def test_behind_a_firewall_runs_are_polled_and_failed_runs_keep_their_reason(self) -> None:
        task = self.unpushed_runs("Run forbidden by limits")
        assert not Run.objects.exists()  # nothing was pushed through the firewall
        report = poll(timezone.now() + timedelta(seconds=30))  # past PERFSONAR_POLL_AFTER_S of both
        assert report.polled_runs >= 2, (
            report,
            list(Run.objects.values_list("status", "error")),
            [(r["state"], r["start-time"], r["end-time"]) for r in self.fake.runs()],
            timezone.now(),
            Task.objects.get(pk=task.pk).polled_until,
        )
        failed = Run.objects.get(status="failed")
        assert failed.error == "pScheduler run nonstart: Run forbidden by limits"
        assert failed.source_id == self.node.pk and failed.destination_id == self.agent.pk
        assert Run.objects.filter(status="ok").exists()
        assert Node.objects.get(pk=self.node.pk).last_poll_at is not None
        # Polling again stores nothing twice.
        count = Run.objects.count()
        poll(timezone.now() + timedelta(seconds=30))
        assert Run.objects.count() == count

    def test_a_run_fathom_cannot_keep_is_refused_and_polling_goes_on(self) -> None:
        """A NUL in a run's text (PostgreSQL's text refuses it) once failed the insert and ended
        the poll: every later task of every node went unpolled. Now the run is refused with
        its reason and the task's other runs are still taken in."""
        self.unpushed_runs("Run forbidden\u0000by limits")
        report = poll(timezone.now() + timedelta(seconds=30))
        assert report.errors == [] and report.polled_runs >= 1, report
        assert Run.objects.filter(status="ok").exists() and not Run.objects.filter(status="failed").exists()
        assert "run refused" in Node.objects.get(pk=self.node.pk).last_error
        assert "NUL" in Node.objects.get(pk=self.node.pk).last_error
        # The refused run is not asked for again and again: the next poll stores nothing twice.
        count = Run.objects.count()
        poll(timezone.now() + timedelta(seconds=30))
        assert Run.objects.count() == count

    def test_a_task_the_nodes_limits_refuse_is_recorded_and_its_slot_missed(self) -> None:
        slot = self.over_limits_slot()
        report = reconcile()
        assert report.refused == 1
        task = Task.objects.get(slot=slot)
        assert task.state == TaskState.REFUSED and "limits" in task.reason.lower()
        slot.refresh_from_db()
        assert slot.state == SlotState.MISSED and "refused" in slot.reason
        assert "task refused" in Node.objects.get(pk=self.node.pk).last_error
        assert reconcile().refused == 0  # not retried at once

    # --- a mixed pair, measured for real -------------------------------------------------

    @pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
    def test_a_mixed_pair_runs_a_real_iperf3_against_the_agents_one_off_server(self) -> None:
        self.agent.address = "127.0.0.1"
        self.agent.save()
        with FakePScheduler(speed=1, live_iperf3=True, first_run_delay_s=0.3) as live:
            node = register_node("ps-live", live.base_url, "198.18.9.5", TlsMode.PINNED, "", live.fingerprint_sha256)
            test = self.add_test("thr", "throughput", {"duration_s": 2}, interval_s=6 * 3600)
            start = timezone.now() + timedelta(seconds=3)
            slot = Slot.objects.create(
                mesh_test=test,
                source=self.agent,
                destination=node.agent,
                test_type="throughput",
                period_start=start,
                start_at=start,
                end_at=start + timedelta(seconds=40),
                spec={"duration_s": 2, "omit_s": 0, "parallel": 1, "reverse": False},
            )
            with one_off_iperf3_server(IPERF3_PORT):
                report = reconcile()
                assert report.created >= 1, report
                task = Task.objects.get(slot=slot)
                spec = task.body["test"]["spec"]
                assert spec["single-ended"] is True and spec["reverse"] is True and spec["dest"] == "127.0.0.1"
                run = wait_until("the throughput run stored", lambda: Run.objects.filter(slot_id=slot.pk).first(), 40)
            # Its one run over and taken in, the task is deleted from the node as well.
            poll(slot.end_at + timedelta(minutes=1))
            task.refresh_from_db()
            assert task.state == TaskState.DELETED and task.reason == "ran its course"
            assert {row["url"]: row["enabled"] for row in live.tasks()}[task.url] is False
        assert run.status == "ok", run.error
        assert run.source_id == self.agent.pk and run.destination_id == node.pk
        assert run.summary["sender_bits_per_s"] > 0
        slot.refresh_from_db()
        assert slot.state == SlotState.OK

    # --- a node that subscribes to an exported mesh ------------------------------------

    def test_runs_of_a_node_subscribed_to_an_exported_mesh_are_taken_for_its_paths_only(self) -> None:
        test = self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)
        assert delete_all_tasks(self.node) == []  # Fathom's own tasks aside: the node schedules itself
        template = export_mesh(self.mesh)
        # What pSConfig's agent makes of the template's archive: _meta dropped, the transform applied.
        archive = {k: v for k, v in template["archives"][next(iter(template["archives"]))].items() if k != "_meta"}
        archive["data"] = {k: v for k, v in archive["data"].items() if k != "_meta"}
        archive["data"]["_headers"]["Authorization"] = authorization_header(self.node)  # the node's transform
        archive["data"]["_headers"]["x-ps-observer"] = self.node.agent.address
        reference = template["tasks"]["rtt"]["reference"]
        client = PSchedulerClient(self.fake.base_url, Trust(TlsMode.PINNED, "", self.fake.fingerprint_sha256))

        def task(dest: str) -> dict[str, Any]:
            return {
                "schema": 1,
                "test": {"type": "rtt", "spec": {"schema": 1, "source": "198.18.9.1", "dest": dest, "count": 5}},
                "schedule": {"start": (timezone.now() + timedelta(seconds=1)).isoformat()},
                "archives": [archive],
                "reference": reference,
            }

        ours = client.create_task(task(self.agent.address))
        stranger = client.create_task(task("198.18.77.7"))  # no such path in the mesh
        run = wait_until("the subscribed run stored", lambda: Run.objects.filter(source_id=self.node.pk).first())
        assert run.test_id == f"ps-mesh/rtt:{self.agent.pk}" and run.destination_id == self.agent.pk
        assert test.pk and ours != stranger
        self.fake.wait_for_runs(stranger, "finished")
        refused = wait_until(
            "the stranger's push refused",
            lambda: [a for a in self.fake.archive_attempts() if stranger.rsplit("/", 1)[-1] in json.dumps(a)],
        )
        # Only runs to athens: the stranger's is not stored. (A run of the task Fathom keeps on
        # the node for the mesh's own ping test may land as well, once a sync has put it back.)
        destinations = set(Run.objects.filter(source_id=self.node.pk).values_list("destination_id", flat=True))
        assert refused and destinations == {self.agent.pk}, destinations
        assert "no path of a mesh it subscribes to" in Node.objects.get(pk=self.node.pk).last_error

    # --- slow nodes ----------------------------------------------------------------------

    def test_a_node_trickling_its_answer_is_cut_off_at_the_calls_total_time(self) -> None:
        """A byte every 0.2 s meets no 15 s read timeout; the call's total time ends it."""
        client = PSchedulerClient(self.fake.base_url, Trust(TlsMode.PINNED, "", self.fake.fingerprint_sha256))
        self.fake.trickle(0.2)
        begun = time.monotonic()
        with mock.patch("perfsonar.client.CALL_TOTAL_S", 1.5), pytest.raises(PSchedulerError) as raised:
            client.api_level()
        took = time.monotonic() - begun
        assert raised.value.kind == "unreachable" and "took over 1.5 s" in str(raised.value), raised.value
        assert raised.value.unanswered  # it had a connection: the request may have been carried out
        assert took < 5, took
        self.fake.trickle(0.0)
        assert client.api_level() >= 1  # the next call gets a fresh connection

    def test_a_sync_past_its_deadline_starts_no_call_and_the_next_takes_up_the_rest(self) -> None:
        self.add_test("rtt", "ping", {"count": 5, "interval_s": 1}, interval_s=30)  # its edit syncs at once
        assert delete_all_tasks(self.node) == []  # as if that sync had not been
        report = reconcile(deadline=time.monotonic())
        assert report.cut_short and report.created == 0 and "deadline" in report.errors[-1], report
        assert not Task.objects.filter(state=TaskState.ACTIVE).exists()
        assert reconcile(deadline=time.monotonic() + 60).created == 1

    # --- the receiver's refusals ---------------------------------------------------------

    def test_the_receiver_refuses_strangers_garbage_unknown_runs_and_huge_bodies(self) -> None:
        url = self.live_server_url + "/api/v1/perfsonar/archive/"
        body = json.loads((Path(__file__).parent / "fixtures" / "archive-rtt.json").read_text())
        auth = {"Authorization": authorization_header(self.node)}
        assert requests.put(url, json=body, timeout=10).status_code == 401
        assert requests.put(url, json=body, headers={"Authorization": "Bearer fps_0.x"}, timeout=10).status_code == 401
        garbage = requests.put(url, data=b"{not json", headers=auth, timeout=10)
        assert garbage.status_code == 400 and "not a pScheduler archive record" in garbage.json()["detail"]
        nested = requests.put(url, data=b"[" * 100_000 + b"]" * 100_000, headers=auth, timeout=10)
        assert nested.status_code == 400 and "nested deeper" in nested.json()["detail"]
        nul = requests.put(url, json={**body, "result": {"error": "a\u0000b"}}, headers=auth, timeout=10)
        assert nul.status_code == 400 and "NUL" in nul.json()["detail"]
        not_a_run = requests.post(url, json={"id": "x"}, headers=auth, timeout=10)
        assert not_a_run.status_code == 400
        body["reference"] = {"fathom": {"task": str(uuid.uuid4())}}
        unknown = requests.put(url, json=body, headers=auth, timeout=10)
        assert unknown.status_code == 404 and "belongs to no task" in unknown.json()["detail"]
        huge = requests.put(url, data=b"x" * (9 * 1024 * 1024), headers=auth, timeout=30)
        assert huge.status_code == 413
        assert not Run.objects.exists()
        assert "push refused" in Node.objects.get(pk=self.node.pk).last_error
        assert Agent.objects.filter(kind=AgentKind.PERFSONAR).count() == 1


@contextmanager
def one_off_iperf3_server(port: int) -> Iterator[None]:
    """What a Fathom agent opens for a node's slot (agents/internal/iperfwindow)."""
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-p", str(port), "-B", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        # Wait for its listener without connecting: a connection would be its one test.
        deadline = time.monotonic() + 10
        while not listening_on(port) and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        yield
    finally:
        server.kill()
        server.wait()


def listening_on(port: int) -> bool:
    """Whether a TCP socket listens on the port, asked of `ss` as the lab's wait_for_port does."""
    found = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())
