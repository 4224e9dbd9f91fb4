"""Registering nodes (bad input refused, nothing written), their problems, archive tokens,
and how a node in a mesh changes Fathom agents' plans and the tasks Fathom wants on nodes."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from unittest import mock

import pytest
from django.test import override_settings
from django.utils import timezone

from audit.models import AuditEntry
from audit.services import Actor
from core import contract
from fathom.testing import FathomTestCase
from inventory.choices import AgentKind
from inventory.models import Agent
from inventory.services import decommission_agent
from meshes.iperf3_auth import slot_username
from meshes.models import Slot
from meshes.services.plans import build_plan
from meshes.services.slot_planning import plan_exclusive_slots
from perfsonar.api.serializers import NodeSerializer
from perfsonar.choices import TaskState
from perfsonar.client import _text as client_text
from perfsonar.models import Node, Task
from perfsonar.nodes import NodeError, node_problems, normalize_fingerprint, note_error, register_node, remove_node
from perfsonar.retention import forget_finished_tasks
from perfsonar.sync_lock import sync_lock
from perfsonar.tokens import archive_token, node_of_token
from perfsonar.wanted import desired_background, slots_for_nodes, throughput_test

PIN = "AB:" * 31 + "CD"


class RegisterNodeTests(FathomTestCase):
    def test_a_node_is_an_agent_of_kind_perfsonar_with_its_trust(self) -> None:
        node = register_node("ps-lisbon", "https://127.0.0.1:8443/pscheduler/", "198.18.9.1", "pinned", "", PIN)
        assert node.agent.kind == AgentKind.PERFSONAR and node.agent.address == "198.18.9.1"
        assert node.api_url == "https://127.0.0.1:8443/pscheduler"
        assert node.pinned_sha256 == "ab" * 31 + "cd" and node.ca_bundle == ""
        assert node.agent.credential_sha256 == ""  # it can never authenticate as an agent
        entry = AuditEntry.objects.get(object_key=str(node.pk))
        assert entry.after is not None and entry.after["api_url"] == node.api_url and entry.via == "command"

    def test_the_address_defaults_to_the_api_host(self) -> None:
        node = register_node("ps-porto", "https://198.18.9.2/pscheduler")
        assert node.agent.address == "198.18.9.2" and node.api_url == "https://198.18.9.2/pscheduler"

    def test_bad_input_is_refused_and_nothing_is_written(self) -> None:
        cases = [
            ({"name": "Bad Name", "api_url": "https://198.18.9.3/pscheduler"}, "name"),
            ({"name": "athens", "api_url": "https://198.18.9.3/pscheduler"}, "name"),
            ({"name": "ps-a", "api_url": "http://198.18.9.3/pscheduler"}, "api_url"),
            ({"name": "ps-a", "api_url": "https://user@198.18.9.3/pscheduler"}, "api_url"),
            ({"name": "ps-a", "api_url": "not a url"}, "api_url"),
            ({"name": "ps-a", "api_url": "https://198.18.9.3/pscheduler", "address": "10.0.0.1"}, "address"),
            ({"name": "ps-a", "api_url": "https://198.18.9.3/pscheduler", "address": "ps.example.net"}, "address"),
            ({"name": "ps-a", "api_url": "https://198.18.9.3/pscheduler", "tls_mode": "pinned"}, "pinned_sha256"),
            (
                {
                    "name": "ps-a",
                    "api_url": "https://198.18.9.3/pscheduler",
                    "tls_mode": "pinned",
                    "pinned_sha256": "zz",
                },
                "pinned_sha256",
            ),
            (
                {"name": "ps-a", "api_url": "https://198.18.9.3/pscheduler", "tls_mode": "ca_bundle", "ca_bundle": "x"},
                "ca_bundle",
            ),
            ({"name": "ps-a", "api_url": "https://198.18.9.3/pscheduler", "tls_mode": "none"}, "tls_mode"),
        ]
        before = Agent.objects.count()
        for arguments, field in cases:
            with self.subTest(arguments=arguments), pytest.raises(NodeError) as raised:
                register_node(**arguments)  # type: ignore[arg-type]
            assert raised.value.field == field, (arguments, raised.value.field, str(raised.value))
        assert Agent.objects.count() == before and not Node.objects.exists()

    def test_a_decommissioned_name_is_never_taken_again(self) -> None:
        node = register_node("ps-gone", "https://198.18.9.4/pscheduler")
        decommission_agent(node.agent)
        with pytest.raises(NodeError, match="decommissioned"):
            register_node("ps-gone", "https://198.18.9.4/pscheduler")

    def test_fingerprints_are_read_as_openssl_prints_them(self) -> None:
        assert normalize_fingerprint(PIN) == "ab" * 31 + "cd"
        assert normalize_fingerprint(" " + "AB" * 32 + " ") == "ab" * 32
        with pytest.raises(NodeError):
            normalize_fingerprint("ab" * 31)

    def test_the_api_registers_and_validates(self) -> None:
        client = self.user_client(self.operator)
        reply = client.post(
            "/api/v1/perfsonar/nodes/",
            {"name": "ps-x", "api_url": "https://127.0.0.1:9/pscheduler", "address": "198.18.9.5"},
            format="json",
        )
        assert reply.status_code == 201, reply.content
        body = reply.json()
        # Nothing listens on port 9: registered, with its error.
        assert body["kind"] == "perfsonar" and body["reachable"] is False
        assert "unreachable" in body["last_error"] and body["problems"]
        refused = client.post("/api/v1/perfsonar/nodes/", {"name": "ps-y", "api_url": "ftp://x"}, format="json")
        assert refused.status_code == 400 and "api_url" in refused.json()
        unknown = client.post(
            "/api/v1/perfsonar/nodes/", {"name": "ps-y", "api_url": "https://198.18.9.6/", "x": 1}, format="json"
        )
        assert unknown.status_code == 400 and "x" in unknown.json()
        assert not Agent.objects.filter(name="ps-y").exists()
        viewer = self.user_client(self.outsider)
        assert viewer.get("/api/v1/perfsonar/nodes/").json()[0]["name"] == "ps-x"
        assert viewer.post("/api/v1/perfsonar/nodes/", {}, format="json").status_code == 403
        assert viewer.get("/api/v1/perfsonar/nodes/ps-x/archive-token/").status_code == 403
        agents = viewer.get("/api/v1/agents/").json()
        assert {row["name"]: row["kind"] for row in agents}["ps-x"] == "perfsonar"


class ProblemTests(FathomTestCase):
    def test_clock_skew_missing_tools_and_no_http_archiver_are_problems(self) -> None:
        node = register_node("ps-skew", "https://198.18.9.7/pscheduler")
        assert node_problems(node) == ["not checked yet"]
        node.checked_at = timezone.now()
        node.reachable = True
        node.tests = ["rtt", "throughput", "trace"]
        node.tools = ["ping", "iperf3"]
        node.archivers = ["http"]
        node.clock_offset_s = 0.4
        node.clock_synchronized = True
        assert node_problems(node) == []
        node.clock_offset_s = -1.6
        node.clock_synchronized = False
        node.tools = ["ping", "nuttcp"]
        node.archivers = ["esmond"]
        problems = " | ".join(node_problems(node))
        assert "-1.6 s" in problems and "not synchronized" in problems
        assert "no iperf3 tool" in problems and "no http archiver" in problems


class TokenTests(FathomTestCase):
    def test_tokens_name_their_node_and_stop_working_when_rotated_or_revoked(self) -> None:
        node = register_node("ps-token", "https://198.18.9.8/pscheduler")
        token = archive_token(node)
        found = node_of_token(token)
        assert found is not None and found.pk == node.pk
        for bad in ("", "fps_", token[:-1] + ("0" if token[-1] != "0" else "1"), "fps_nothex.abc", token + "x" * 200):
            assert node_of_token(bad) is None, bad
        node.token_generation += 1
        node.save()
        assert node_of_token(token) is None and node_of_token(archive_token(node)) is not None
        Agent.objects.filter(pk=node.pk).update(revoked_at=timezone.now())
        assert node_of_token(archive_token(node)) is None


# Two default periods (6 h, slip 6 h) of horizon: with one, a period's slot that the jitter put
# before the planning lead moves to the next period, past the horizon, so a direction had no
# slot when the tests ran at 04:50, 10:50, 16:50 or 22:50 UTC (seed 3). Twelve hours always
# hold a whole period (checked every 2 min of a day).
@override_settings(PERFSONAR_IPERF3_PORT=5203, SLOT_HORIZON_S=12 * 3600)
class MixedPairPlanTests(FathomTestCase):
    """athens (a Fathom agent) and ps-madrid (a node) in the default mesh (every agent)."""

    def setUp(self) -> None:
        self.node = register_node("ps-madrid", "https://198.18.9.9/pscheduler")
        plan_exclusive_slots(seed=3)

    def test_an_agent_runs_no_flow_sweep_and_leads_no_slot_towards_a_node(self) -> None:
        plan = build_plan(self.athens)
        to_node = [test for test in plan.tests if test.peer.name == "ps-madrid"]
        assert sorted(test.type for test in to_node) == ["ping", "trace"]
        assert all(slot.peer.name != "ps-madrid" for slot in plan.slots)
        as_json = plan.as_json()
        assert not list(contract.validator("plan.v1.schema.json").iter_errors(as_json))

    def test_the_slots_it_shares_with_a_node_open_its_one_off_iperf3_server(self) -> None:
        now = timezone.now()
        plan = build_plan(self.athens, now)
        shared = Slot.objects.filter(
            source__in=[self.athens, self.node.agent],
            destination__in=[self.athens, self.node.agent],
            start_at__lte=now + timedelta(days=1),
        )
        assert shared.exists()
        assert {window.slot_id for window in plan.iperf3_windows} == {str(slot.pk) for slot in shared}
        assert {window.port for window in plan.iperf3_windows} == {5203}
        assert {window.peer_name for window in plan.iperf3_windows} == {"ps-madrid"}
        # The node's iperf3 client cannot present Fathom's credentials: no user for it.
        from_node = {slot_username(pk) for pk in shared.filter(source=self.node.agent).values_list("pk", flat=True)}
        assert from_node and not from_node & {user.username for user in plan.iperf3_users}

    def test_the_node_leads_both_directions_single_ended_against_the_agent(self) -> None:
        to_node = Slot.objects.filter(source=self.athens, destination=self.node.agent).first()
        from_node = Slot.objects.filter(source=self.node.agent, destination=self.athens).first()
        assert to_node is not None and from_node is not None
        sending = throughput_test(to_node, self.athens, self.node.agent)["spec"]
        receiving = throughput_test(from_node, self.node.agent, self.athens)["spec"]
        for spec in (sending, receiving):
            assert spec["single-ended"] is True and spec["single-ended-port"] == 5203
            assert spec["dest"] == self.athens.address and spec["duration"] == "PT20S"
        assert sending.get("reverse") is True and "reverse" not in receiving

    def test_two_nodes_run_a_two_ended_test_led_by_the_source(self) -> None:
        other = register_node("ps-bilbao", "https://198.18.9.10/pscheduler")
        plan_exclusive_slots(seed=4)
        slot = Slot.objects.filter(source=self.node.agent, destination=other.agent).first()
        assert slot is not None
        spec = throughput_test(slot, self.node.agent, other.agent)["spec"]
        assert spec["source"] == "198.18.9.9" and spec["dest"] == "198.18.9.10" and "single-ended" not in spec

    def test_background_tasks_are_wanted_only_from_nodes(self) -> None:
        wanted = desired_background()
        assert {(task.source.name, task.test.get("type")) for task in wanted} == {
            ("ps-madrid", "rtt"),
            ("ps-madrid", "trace"),
        }
        rtt = next(task for task in wanted if task.test["type"] == "rtt")
        assert rtt.test["spec"] == {"schema": 1, "dest": "198.18.1.1", "count": 10, "interval": "PT1S", "length": 56}
        assert rtt.repeat_s == 300 and rtt.test_id.startswith("default/ping:")
        first = Slot.objects.filter(source=self.node.agent).order_by("start_at").first()
        assert first is not None
        soon = slots_for_nodes(first.start_at - timedelta(minutes=10))
        assert first in soon and all(self.node.agent.pk in (slot.source_id, slot.destination_id) for slot in soon)
        assert first not in slots_for_nodes(first.start_at - timedelta(seconds=10))  # too late to give it


ACTOR = Actor.command("remover")


class RemoveNodeTests(FathomTestCase):
    """A node's removal waits for a sync that is running, so a task the sync creates on the
    node meanwhile is among those it deletes (the system test saw one left behind)."""

    def test_removal_waits_for_a_running_sync_then_removes(self) -> None:
        node = register_node("ps-faro", "https://198.18.9.4/pscheduler")

        def sync_for(seconds: float) -> None:
            with sync_lock() as held:
                assert held
                started.set()
                time.sleep(seconds)

        started = threading.Event()
        sync = threading.Thread(target=sync_for, args=(1.0,))
        sync.start()
        started.wait(5)
        begun = time.monotonic()
        assert remove_node(node, ACTOR) == []  # no task of its own, nothing failed
        took = time.monotonic() - begun
        sync.join()
        assert took >= 0.8, took
        assert Agent.objects.get(pk=node.agent.pk).decommissioned_at is not None
        with sync_lock() as held:
            assert held, "the removal released the lock"

    def test_the_api_decommissions_at_once_and_a_worker_deletes_the_tasks(self) -> None:
        """A node with many tasks, or a slow one, must not hold the web request: DELETE
        answers 202 with the node shown as being removed; the worker's task finishes it."""
        node = register_node("ps-lagos", "https://198.18.9.6/pscheduler")
        now = timezone.now()
        Task.objects.create(
            node=node, key="bg:x", test_type="ping", source=node.agent, target="198.18.1.1", test_id="t",
            body={}, starts_at=now, until=now + timedelta(hours=1),
        )  # fmt: skip
        self.client.force_authenticate(self.operator)
        with self.captureOnCommitCallbacks(execute=False) as queued:
            reply = self.client.delete("/api/v1/perfsonar/nodes/ps-lagos/")
        assert reply.status_code == 202, reply.content
        assert reply.json()["removing_since"] is not None
        assert Agent.objects.get(pk=node.agent.pk).decommissioned_at is not None  # at once, audited
        listed = self.client.get("/api/v1/perfsonar/nodes/").json()
        assert [(n["name"], n["removing_since"] is not None) for n in listed] == [("ps-lagos", True)]
        removal = [callback for callback in queued if "request_removal" in getattr(callback, "__qualname__", "")]
        assert Task.objects.get(node=node).state == TaskState.ACTIVE and len(removal) == 1
        with self.captureOnCommitCallbacks(execute=False) as again_queued:
            again = self.client.delete("/api/v1/perfsonar/nodes/ps-lagos/")  # a second click queues nothing
        assert again.status_code == 202 and again_queued == []
        removal[0]()  # the worker's task (eager here)
        assert Task.objects.get(node=node).state == TaskState.DELETED
        assert self.client.get("/api/v1/perfsonar/nodes/").json() == []
        assert self.client.get("/api/v1/perfsonar/nodes/ps-lagos/").status_code == 404

    @mock.patch("perfsonar.nodes.REMOVE_WAIT_S", 0.3)
    def test_a_sync_that_never_ends_does_not_stop_the_removal(self) -> None:
        node = register_node("ps-tavira", "https://198.18.9.5/pscheduler")
        with sync_lock() as held:
            assert held
            failures = remove_node(node, ACTOR)
        assert failures == ["a sync with the nodes ran for over 0.3 s: the next one deletes what it left"]
        assert Agent.objects.get(pk=node.agent.pk).decommissioned_at is not None


class SyncLockTests(FathomTestCase):
    def test_a_holder_past_the_locks_expiry_does_not_free_the_next_holders_lock(self) -> None:
        """The lock is owned: a sync that outlived it (a node slower than every bound) must
        not release the lock a later sync has since taken."""
        later = sync_lock()
        with mock.patch("perfsonar.sync_lock.HOLD_S", 0.3), sync_lock() as first:
            assert first
            time.sleep(0.5)  # expired under its holder
            assert later.__enter__(), "the expired lock was not free"
        # The first holder has left; the later one still holds.
        with sync_lock() as third:
            assert not third, "the first holder released the later holder's lock"
        later.__exit__(None, None, None)
        with sync_lock() as fourth:
            assert fourth


class TaskRecordTests(FathomTestCase):
    """What a node's row says of its tasks, and how long the records of finished ones stay."""

    def setUp(self) -> None:
        super().setUp()
        self.node = register_node("ps-records", "https://198.18.9.20/pscheduler")
        self.now = timezone.now()

    def task(self, state: TaskState, age: timedelta, **fields: object) -> Task:
        made = self.now - age
        return Task.objects.create(
            node=self.node,
            key=f"rtt:{uuid.uuid4()}",
            test_type="ping",
            source=self.node.agent,
            target="198.18.9.21",
            test_id="t",
            body={},
            state=state,
            created_at=made,
            starts_at=made,
            until=made + timedelta(hours=24),
            **fields,
        )

    def test_the_row_counts_active_refused_and_unanswered_tasks_but_not_deleted_ones(self) -> None:
        for state, count in ((TaskState.ACTIVE, 3), (TaskState.REFUSED, 2), (TaskState.UNANSWERED, 1)):
            for _ in range(count):
                self.task(state, timedelta(hours=1))
        for _ in range(40):
            self.task(TaskState.DELETED, timedelta(days=2), deleted_at=self.now - timedelta(days=1))
        client = self.user_client(self.outsider)
        # One query for every node, however many task records they have.
        with self.assertNumQueries(3):  # the session, the user, the nodes with their counts
            listed = client.get("/api/v1/perfsonar/nodes/").json()
        assert listed[0]["tasks"] == {"active": 3, "refused": 2, "unanswered": 1}
        assert client.get("/api/v1/perfsonar/nodes/ps-records/").json()["tasks"] == listed[0]["tasks"]
        # A node read otherwise (as a check or an edit answers) is counted the same.
        assert NodeSerializer(Node.objects.get(pk=self.node.pk)).data["tasks"] == listed[0]["tasks"]

    def test_finished_tasks_are_forgotten_after_the_raw_retention_and_live_ones_never(self) -> None:
        old = timedelta(days=31)
        kept = [
            self.task(TaskState.ACTIVE, old),
            self.task(TaskState.UNANSWERED, old),
            self.task(TaskState.DELETED, old, deleted_at=self.now - timedelta(days=29)),
            self.task(TaskState.REFUSED, timedelta(days=29)),
        ]
        self.task(TaskState.DELETED, old, deleted_at=self.now - timedelta(days=30, minutes=1))
        self.task(TaskState.REFUSED, old)
        with override_settings(RAW_RETENTION_DAYS=30):
            assert forget_finished_tasks(self.now) == 2
        assert set(Task.objects.values_list("pk", flat=True)) == {task.pk for task in kept}
        assert forget_finished_tasks(self.now, keep_days=1) == 2  # the deleted and the refused one
        with pytest.raises(ValueError, match="at least one day"):
            forget_finished_tasks(self.now, keep_days=0)
        assert Task.objects.count() == 2


class ErrorLineTests(FathomTestCase):
    def test_a_nul_in_what_a_node_answered_never_reaches_the_database(self) -> None:
        """A node's error page with a NUL once made note_error fail in PostgreSQL, outside the
        poll's error handling: every task's polling stopped."""
        node = register_node("ps-braga", "https://198.18.9.3/pscheduler")
        quoted = client_text(b"Internal error\x00 in the scheduler")
        assert "\x00" not in quoted and quoted.startswith("Internal error")
        note_error(node, "poll failed: GET /tasks answered 500: bad\x00page")
        node.refresh_from_db()
        assert node.last_error == "poll failed: GET /tasks answered 500: bad\ufffdpage"
