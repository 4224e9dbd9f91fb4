"""The streaming replica: which reads go to it, and what happens when it does not answer.

The compose test's `scale` profile runs a real replica (tests/compose/test_scale.py); here the
routing rules and the fallbacks are checked without one.
"""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command, get_commands
from django.db import OperationalError, connection, connections
from django.test import RequestFactory, SimpleTestCase, TestCase
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from core import replica
from core.api.history_view import HistoryReadView
from core.env import replica_from_url

PRIMARY: dict[str, object] = {"USER": "fathom", "PASSWORD": "primary-secret"}
# By name: core sits below the apps whose tables it routes.
Run = apps.get_model("measurements", "Run")
RunAnalysis = apps.get_model("analysis", "RunAnalysis")
Agent = apps.get_model("inventory", "Agent")


def test_a_replica_url_without_credentials_takes_the_primarys() -> None:
    with mock.patch.dict(os.environ, {"FATHOM_REPLICA": "postgresql://replica.example:5433/fathom"}):
        entry = replica_from_url("FATHOM_REPLICA", PRIMARY)
    assert entry is not None
    assert (entry["HOST"], entry["PORT"], entry["NAME"]) == ("replica.example", "5433", "fathom")
    assert (entry["USER"], entry["PASSWORD"]) == ("fathom", "primary-secret")
    assert entry["TEST"] == {"MIRROR": "default"}
    with mock.patch.dict(os.environ, {"FATHOM_REPLICA": "postgresql://reader:its-own@replica.example/fathom"}):
        entry = replica_from_url("FATHOM_REPLICA", PRIMARY)
    assert entry is not None and (entry["USER"], entry["PASSWORD"]) == ("reader", "its-own")


def test_no_replica_url_is_no_replica_and_a_bad_one_stops_the_start() -> None:
    with mock.patch.dict(os.environ, {}, clear=True):
        assert replica_from_url("FATHOM_REPLICA", PRIMARY) is None
    for bad in ("mysql://replica/fathom", "postgresql://replica.example", "postgresql:///fathom"):
        with (
            mock.patch.dict(os.environ, {"FATHOM_REPLICA": bad}),
            pytest.raises(ImproperlyConfigured, match="FATHOM_REPLICA"),
        ):
            replica_from_url("FATHOM_REPLICA", PRIMARY)


class RouterTests(SimpleTestCase):
    def setUp(self) -> None:
        self.router = replica.ReplicaRouter()
        patches = [
            mock.patch.object(replica, "replica_configured", return_value=True),
            mock.patch.object(replica, "replica_answers", return_value=True),
        ]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)

    def test_only_history_reads_of_history_tables_go_to_the_replica(self) -> None:
        assert self.router.db_for_read(Run) is None  # not within a history view
        with replica.history_reads():
            assert self.router.db_for_read(Run) == "replica"
            assert self.router.db_for_read(RunAnalysis) == "replica"
            assert self.router.db_for_read(Agent) is None  # who may see what: the primary's word
        assert self.router.db_for_read(Run) is None
        assert self.router.db_for_write(Run) is None

    def test_a_read_inside_a_transaction_stays_on_the_primary(self) -> None:
        with replica.history_reads(), mock.patch.object(connections["default"], "in_atomic_block", True):
            assert self.router.db_for_read(Run) is None

    def test_a_replica_that_does_not_answer_gets_no_reads(self) -> None:
        with replica.history_reads(), mock.patch.object(replica, "replica_answers", return_value=False):
            assert self.router.db_for_read(Run) is None

    def test_nothing_migrates_the_replica(self) -> None:
        assert self.router.allow_migrate("replica", "measurements") is False
        assert self.router.allow_migrate("default", "measurements") is None


class ReplicaAnswersTests(SimpleTestCase):
    def test_a_replica_that_failed_is_left_out_for_the_retry_period(self) -> None:
        failing = mock.Mock(**{"ensure_connection.side_effect": OperationalError("connection refused")})
        clock = [1000.0]
        with (
            mock.patch.object(replica, "connections", {"replica": failing}),
            mock.patch("core.replica.time.monotonic", side_effect=lambda: clock[0]),
            mock.patch.object(replica, "_left_out_until", 0.0),
            self.settings(DATABASE_REPLICA_RETRY_S=30),
            self.assertLogs("core.replica", "WARNING"),
        ):
            assert replica.replica_answers() is False
            clock[0] += 29
            assert replica.replica_answers() is False
            assert failing.ensure_connection.call_count == 1  # not asked again within the period
            clock[0] += 2
            failing.ensure_connection.configure_mock(side_effect=None)
            assert replica.replica_answers() is True
            assert failing.ensure_connection.call_count == 2


class FailingOnReplicaView(HistoryReadView):
    """Fails as a vanished replica does while history reads are on; answers from the primary."""

    authentication_classes: list[type] = []
    permission_classes = [AllowAny]
    calls: list[bool] = []

    def get(self, request: Request) -> Response:
        reading = replica._reading_history.get()
        self.calls.append(reading)
        if reading and replica._left_out_until == 0.0:
            raise OperationalError("server closed the connection unexpectedly")
        return Response({"from_replica": reading})


class HistoryReadViewTests(SimpleTestCase):
    def test_a_read_the_replica_fails_is_answered_from_the_primary(self) -> None:
        FailingOnReplicaView.calls = []
        request = RequestFactory().get("/history")
        with (
            mock.patch.object(replica, "replica_configured", return_value=True),
            mock.patch("core.api.history_view.replica_configured", return_value=True),
            mock.patch.object(replica, "_left_out_until", 0.0),
            self.assertLogs("core.api.history_view", "WARNING"),
        ):
            response: Any = FailingOnReplicaView.as_view()(request)
            assert replica._left_out_until > 0.0
        assert response.status_code == 200 and response.data == {"from_replica": False}
        assert FailingOnReplicaView.calls == [True, False]

    def test_without_a_replica_nothing_is_routed(self) -> None:
        FailingOnReplicaView.calls = []
        response: Any = FailingOnReplicaView.as_view()(RequestFactory().get("/history"))
        assert response.status_code == 200 and FailingOnReplicaView.calls == [False]


class MigrateTests(TestCase):
    def test_migrate_is_fathoms_and_releases_its_lock(self) -> None:
        assert get_commands()["migrate"] == "core"
        call_command("migrate", "--check", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted"
            )
            assert cursor.fetchone() == (0,)
