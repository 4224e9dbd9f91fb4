"""External targets (a list mesh's far ends, no agent there): ingest keeps TargetLatestRun and
one spelling of each target; GET /api/v1/targets/ lists them, and targets/rtt/, latency/,
runs/ and routes/ read one target path; bad input is refused with its reason, and nothing is
mixed up with another target of the same agent."""

from __future__ import annotations

import importlib
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from fathom.testing import FathomTestCase
from inventory.models import Agent
from measurements import ingest
from measurements.api.serializers import PathLatencyPointSerializer
from measurements.models import PathLatestRun, Run, TargetLatestRun, TracePath
from measurements.targets import normalize_target
from measurements.tests.test_ingest_latency import answered_result


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Example.ORG", "example.org"),
        ("example.org.", "example.org"),
        ("  ns1.Example.org ", "ns1.example.org"),
        ("2001:DB8:0:0::1", "2001:db8::1"),
        ("192.0.2.7", "192.0.2.7"),
        (".", "."),
    ],
)
def test_normalize_target(raw: str, normalized: str) -> None:
    assert normalize_target(raw) == normalized


def ping_result(
    target: str, started_at: datetime, rtts: list[float | None], status: str = "ok", error: str = ""
) -> dict[str, Any]:
    """A ping run to an external target (no peer_id) with one packet a second."""
    samples = [
        {"seq": seq, "time": (started_at + timedelta(seconds=seq)).isoformat(), "rtt_ms": rtt, "ttl": 60,
         "duplicate": False}
        for seq, rtt in enumerate(rtts, start=1)
    ]  # fmt: skip
    received = sum(1 for rtt in rtts if rtt is not None)
    return {
        "id": str(uuid.uuid4()),
        "test_type": "ping",
        "test_id": f"targets/ping:{target}",
        "target": target,
        "started_at": started_at.isoformat(),
        "ended_at": (started_at + timedelta(seconds=len(rtts) + 1)).isoformat(),
        "status": status,
        "error": error,
        "ping": {
            "count": max(len(rtts), 1), "interval_s": 1.0, "size_bytes": 56, "ttl": None,
            "transmitted": len(rtts), "received": received, "duplicates": 0, "errors": 0, "samples": samples,
        },
    }  # fmt: skip


def failed_result(target: str, started_at: datetime, test_type: str, error: str) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "test_type": test_type,
        "test_id": f"targets/{test_type}:{target}",
        "target": target,
        "started_at": started_at.isoformat(),
        "ended_at": (started_at + timedelta(seconds=1)).isoformat(),
        "status": "failed",
        "error": error,
    }


class TargetTestCase(FathomTestCase):
    # Times relative to the wall clock: the views read up to their own now.
    ingest_now = None
    now: ClassVar[datetime]

    @classmethod
    def store(cls, agent: Agent, *results: dict[str, Any]) -> None:
        ingest.ingest_batch(agent, {"schema_version": 1, "results": list(results)}, vouched=True)

    def setUp(self) -> None:
        super().setUp()
        self.viewer = self.user_client(self.outsider)

    def get(self, name: str, **params: Any) -> Any:
        return self.viewer.get(reverse(name), params)


class TargetIngestTests(TargetTestCase):
    def test_latest_run_per_target_and_test_type_in_one_spelling(self) -> None:
        now = timezone.now()
        self.store(self.athens, ping_result("Example.ORG", now - timedelta(minutes=10), [8.0]))
        self.store(
            self.athens,
            ping_result("example.org.", now - timedelta(minutes=5), [None], status="failed", error="unreachable"),
            ping_result("example.org", now - timedelta(minutes=20), [8.5]),  # older: changes nothing
            failed_result("2001:DB8::7", now - timedelta(minutes=3), "trace", "traceroute: not found"),
        )
        rows = {
            (row.target, row.test_type): row.status
            for row in TargetLatestRun.objects.filter(source=self.athens)
        }  # fmt: skip
        assert rows == {("example.org", "ping"): "failed", ("2001:db8::7", "trace"): "failed"}
        assert set(Run.objects.filter(destination_id__isnull=True).values_list("target", flat=True)) == {
            "example.org",
            "2001:db8::7",
        }
        assert not PathLatestRun.objects.exists()

    def test_fill_migration_builds_the_table_from_stored_runs(self) -> None:
        now = timezone.now()
        for minutes, target, status in ((30, "Mixed.Example", "ok"), (10, "mixed.example", "failed")):
            Run.objects.create(
                id=uuid.uuid4(), started_at=now - timedelta(minutes=minutes), ended_at=now,
                source_id=self.athens.pk, target=target, test_type="ping", test_id="t", status=status,
            )  # fmt: skip
        # A run of an agent since deleted has no row to point at.
        Run.objects.create(
            id=uuid.uuid4(), started_at=now, ended_at=now, source_id=uuid.uuid4(), target="gone.example",
            test_type="ping", test_id="t", status="ok",
        )  # fmt: skip
        migration = importlib.import_module("measurements.migrations.0006_target_latest_run")
        migration.fill(None, SimpleNamespace(connection=connection))
        (row,) = TargetLatestRun.objects.all()
        assert (row.source_id, row.target, row.status) == (self.athens.pk, "mixed.example", "failed")


class TargetListTests(TargetTestCase):
    def test_empty(self) -> None:
        with self.assertNumQueries(3):  # session, user, latest runs
            body = self.get("target-list").json()
        assert body["targets"] == []

    def test_rows_with_last_hour_rtt_and_loss_in_a_fixed_number_of_queries(self) -> None:
        now = timezone.now()
        self.store(
            self.athens,
            ping_result("example.org", now - timedelta(minutes=2), [8.0, 9.0, None, 10.0]),
            ping_result("example.org", now - timedelta(hours=3), [50.0]),  # not in the last hour
            failed_result("example.org", now - timedelta(minutes=1), "trace", "traceroute: not found"),
            ping_result("192.0.2.7", now - timedelta(minutes=4), [20.0]),
        )
        self.store(self.frankfurt, ping_result("example.org", now - timedelta(minutes=3), [30.0, 31.0]))
        with self.assertNumQueries(4):  # session, user, latest runs with agents, last hour of pings
            body = self.get("target-list").json()
        rows = {(row["source"]["name"], row["target"]): row for row in body["targets"]}
        assert list(rows) == [("athens", "192.0.2.7"), ("athens", "example.org"), ("frankfurt", "example.org")]
        row = rows[("athens", "example.org")]
        assert row["test_types"] == ["ping", "trace"]
        assert (row["last_status"], row["last_run_test_type"]) == ("failed", "trace")
        assert row["rtt_median_ms"] == pytest.approx(9.0)
        assert row["loss_fraction"] == pytest.approx(0.25) and row["sent_last_hour"] == 4
        assert 50 <= row["data_age_s"] < 600
        assert rows[("frankfurt", "example.org")]["rtt_median_ms"] == pytest.approx(30.5)

    def test_a_target_with_only_failed_runs(self) -> None:
        now = timezone.now()
        self.store(
            self.athens, ping_result("dark.example", now - timedelta(minutes=1), [None, None], "failed", "100% loss")
        )
        (row,) = self.get("target-list").json()["targets"]
        assert row["last_status"] == "failed" and row["rtt_median_ms"] is None and row["loss_fraction"] == 1.0


class TargetRttTests(TargetTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        # On a minute, so each run's ten packets fall in one minute's bucket.
        cls.now = timezone.now().replace(second=0, microsecond=0)
        # Two hours of one 10-packet run a minute to example.org (every 10th lost) and a slower
        # second target of the same agent, which must not leak into the first.
        results = []
        for minute in range(120):
            started = cls.now - timedelta(minutes=120 - minute)
            results.append(ping_result("example.org", started, [None if i == 9 else 10.0 + i for i in range(10)]))
            results.append(ping_result("slow.example", started, [90.0]))
        cls.store(cls.athens, *results)

    def rtt(self, **params: Any) -> Any:
        return self.get("target-rtt", source=str(self.athens.pk), target="Example.ORG", **params)

    def test_percentiles_and_loss_per_bucket(self) -> None:
        start = self.now - timedelta(minutes=60)
        reply = self.rtt(**{"from": start.isoformat(), "to": (start + timedelta(minutes=10)).isoformat()}, max_points=3)
        assert reply.status_code == 200, reply.content
        body = reply.json()
        assert body["target"] == "example.org" and body["bucket_s"] == 300
        assert [row["test_type"] for row in body["latest"]] == ["ping"]
        point = body["points"][1]
        assert (point["min"], point["max"], point["sent"], point["lost"], point["count"]) == (10.0, 18.0, 50, 5, 45)
        # 45 replies, five of each of 10..18 ms: percentile_cont between the sorted neighbours.
        assert point["p50"] == pytest.approx(14.0) and point["p10"] == pytest.approx(10.4)
        assert point["p90"] == pytest.approx(17.6) and point["loss"] == pytest.approx(0.1)

    def test_points_are_bounded(self) -> None:
        for max_points in (2, 7, 100):
            points = self.rtt(max_points=max_points).json()["points"]
            assert 0 < len(points) <= max_points

    def test_default_range_is_the_last_day_and_a_range_before_the_data_is_empty(self) -> None:
        body = self.rtt().json()
        assert body["bucket_s"] == 120 and len(body["points"]) in (60, 61)
        then = self.now - timedelta(days=3)
        body = self.rtt(**{"from": then.isoformat(), "to": (then + timedelta(hours=1)).isoformat()}).json()
        assert body["points"] == []

    def test_a_range_reaching_before_raw_retention_is_cut_there(self) -> None:
        body = self.rtt(**{"from": (self.now - timedelta(days=5000)).isoformat()}).json()
        assert body["from"] == body["retained_from"]

    def test_bad_queries_say_why(self) -> None:
        source = str(self.athens.pk)
        future = (self.now + timedelta(days=1)).isoformat()
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"source": "nope", "target": "example.org"}, 400, "source"),
            ({"source": str(uuid.uuid4()), "target": "example.org"}, 400, "source"),
            ({"source": source}, 400, "target"),
            ({"source": source, "target": ""}, 400, "target"),
            ({"source": source, "target": "   "}, 400, "target"),
            ({"source": source, "target": "x" * 256}, 400, "target"),
            ({"source": source, "target": "example.org", "from": self.now.isoformat(),
              "to": (self.now - timedelta(hours=1)).isoformat()}, 400, "reversed"),
            ({"source": source, "target": "example.org", "from": self.now.isoformat(),
              "to": self.now.isoformat()}, 400, "empty"),
            ({"source": source, "target": "example.org", "from": future}, 400, "future"),
            ({"source": source, "target": "example.org", "to": "2000-01-01T00:00:00Z"}, 400, "retention"),
            ({"source": source, "target": "example.org", "from": "yesterday"}, 400, "from"),
            ({"source": source, "target": "example.org", "max_points": 1}, 400, "max_points"),
            ({"source": source, "target": "example.org", "colour": "red"}, 400, "colour"),
            ({"source": source, "target": "unknown.example"}, 404, "no runs"),
            ({"source": str(self.frankfurt.pk), "target": "example.org"}, 404, "no runs"),
        ]  # fmt: skip
        for query, status, reason in cases:
            reply = self.viewer.get(reverse("target-rtt"), query)
            assert reply.status_code == status, (query, reply.content)
            assert reason in reply.content.decode(), (query, reply.content)

    def test_query_count(self) -> None:
        with self.assertNumQueries(5):  # session, user, agent, latest runs, buckets
            assert self.rtt().status_code == 200

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(reverse("target-rtt"), {"source": str(self.athens.pk), "target": "example.org"})
        assert reply.status_code == 403


class TargetRunsTests(TargetTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.now = timezone.now().replace(microsecond=0)
        cls.store(
            cls.athens,
            ping_result("example.org", cls.now - timedelta(minutes=30), [8.0]),
            failed_result("example.org", cls.now - timedelta(minutes=20), "trace", "traceroute: not found"),
            ping_result("example.org", cls.now - timedelta(minutes=10), [None], "failed", "100% packet loss"),
            ping_result("other.example", cls.now - timedelta(minutes=5), [8.0]),
        )

    def runs(self, **params: Any) -> Any:
        return self.get("target-runs", source=str(self.athens.pk), target="EXAMPLE.org", **params)

    def test_newest_first_with_reasons_and_summary(self) -> None:
        with self.assertNumQueries(5):  # session, user, agent, latest runs, runs
            body = self.runs().json()
        assert [(run["test_type"], run["status"], run["error"]) for run in body["runs"]] == [
            ("ping", "failed", "100% packet loss"),
            ("trace", "failed", "traceroute: not found"),
            ("ping", "ok", ""),
        ]
        assert body["runs"][2]["summary"]["rtt_min_ms"] == 8.0
        assert body["next_before"] is None

    def test_pages_and_filters(self) -> None:
        first = self.runs(limit=2).json()
        assert len(first["runs"]) == 2 and first["next_before"] == first["runs"][1]["started_at"]
        second = self.runs(limit=2, before=first["next_before"]).json()
        assert [run["status"] for run in second["runs"]] == ["ok"] and second["next_before"] is None
        assert [run["test_type"] for run in self.runs(status="failed").json()["runs"]] == ["ping", "trace"]
        assert [run["status"] for run in self.runs(test_type="ping", status="ok").json()["runs"]] == ["ok"]

    def test_bad_queries(self) -> None:
        for params in ({"limit": 0}, {"limit": 501}, {"status": "broken"}, {"test_type": "smoke"}, {"before": "x"}):
            assert self.runs(**params).status_code == 400, params
        reply = self.get("target-runs", source=str(self.athens.pk), target="nowhere.example")
        assert reply.status_code == 404 and "no runs" in reply.json()["detail"]


class TargetRoutesTests(TargetTestCase):
    def test_routes_of_this_target_only(self) -> None:
        now = timezone.now().replace(microsecond=0)
        hops = [{"ttl": 1, "probes": [{"address": "198.18.128.1", "rtt_ms": 1.5}], "mtu": 1500}]
        for target, fingerprint in (("example.org", "fa"), ("other.example", "fb")):
            started = now - timedelta(minutes=5)
            self.store(self.athens, failed_result(target, started, "trace", "interrupted"))
            run_id = TargetLatestRun.objects.get(target=target).run_id
            TracePath.objects.create(
                time=started, run_id=run_id, flow=0, source_id=self.athens.pk, destination_id=None, src_port=33434,
                reached=True, fingerprint=fingerprint, hop_count=1, hops=hops,
            )  # fmt: skip
        with self.assertNumQueries(6):  # session, user, agent, latest runs, runs and routes, hops
            reply = self.get("target-routes", source=str(self.athens.pk), target="Example.org")
        assert reply.status_code == 200, reply.content
        body = reply.json()
        (route,) = body["routes"]
        assert (route["label"], route["fingerprint"], route["path_mtu"]) == ("A", "fa", 1500)
        assert len(body["runs"]) == 1 and body["changes"] == [] and body["truncated"] is False

    def test_no_traces_is_an_empty_answer(self) -> None:
        self.store(self.athens, ping_result("example.org", timezone.now() - timedelta(minutes=1), [8.0]))
        body = self.get("target-routes", source=str(self.athens.pk), target="example.org").json()
        assert body["routes"] == [] and body["runs"] == []


def latency_result(target: str, started_at: datetime, reflector_synchronized: bool = True) -> dict[str, Any]:
    """A minute of TWAMP-light towards a device's reflector (no peer_id): 580 sent, 568
    answered, 1 lost forward and 11 backward, round trip median 25.139 ms."""
    result = answered_result()
    result["latency"]["reflector_clock"] = {"synchronized": reflector_synchronized, "error_ms": 0.001}
    result.update(
        id=str(uuid.uuid4()), peer_id=None, target=target, test_id=f"routers/owd:{target}",
        started_at=started_at.isoformat(), ended_at=(started_at + timedelta(minutes=1)).isoformat(),
    )  # fmt: skip
    return result


class TargetLatencyTests(TargetTestCase):
    # Minutes 10..14 of the half hour: the device declared its clock unsynchronized (S bit 0).
    UNSYNCHRONIZED = range(10, 15)

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        # On five minutes, so the half hour is six whole buckets of 300 s.
        cls.now = datetime.fromtimestamp(timezone.now().timestamp() // 300 * 300, tz=UTC)
        start = cls.now - timedelta(minutes=30)
        results = [
            latency_result("Router1.Example.NET", start + timedelta(minutes=minute), minute not in cls.UNSYNCHRONIZED)
            for minute in range(30)
        ]
        # Another device of the same agent, and an agent path at the same times: neither may leak in.
        results += [latency_result("198.18.9.9", start + timedelta(minutes=minute)) for minute in range(30)]
        agent_path = latency_result(str(cls.frankfurt.address), start)
        agent_path["peer_id"] = str(cls.frankfurt.pk)
        results.append(agent_path)
        results.append(ping_result("ping-only.example", start, [8.0]))
        cls.store(cls.athens, *results)

    def latency(self, target: str = "router1.example.NET", **params: Any) -> Any:
        return self.get("target-latency", source=str(self.athens.pk), target=target, **params)

    def half_hour(self) -> dict[str, Any]:
        start = self.now - timedelta(minutes=30)
        reply = self.latency(**{"from": start.isoformat(), "to": self.now.isoformat()}, max_points=7)
        assert reply.status_code == 200, reply.content
        body: dict[str, Any] = reply.json()
        return body

    def test_buckets_in_the_points_of_an_agent_paths_latency(self) -> None:
        body = self.half_hour()
        assert body["target"] == "router1.example.net" and body["source"]["name"] == "athens"
        assert (body["bucket_s"], body["clock_error_limit_ms"]) == (300, 0.5)
        points = body["points"]
        assert len(points) == 6
        assert set(points[0]) == set(PathLatencyPointSerializer().fields)
        assert all(
            (point["sent"], point["answered"], point["forward_lost"], point["backward_lost"]) == (2900, 2840, 5, 55)
            for point in points
        )
        assert points[0]["backward_loss_fraction"] == pytest.approx(55 / 2895)
        assert points[0]["forward_p50_ms"] == pytest.approx(20.081) and points[0]["one_way_trusted"] is True

    def test_an_unsynchronized_device_keeps_round_trip_and_loss(self) -> None:
        trusted = [point["one_way_trusted"] for point in self.half_hour()["points"]]
        assert trusted == [True, True, False, True, True, True]
        point = self.half_hour()["points"][2]
        # Its one-way figures are there, but flagged; what needs one clock only stands.
        assert point["round_trip_p50_ms"] == pytest.approx(25.139) and point["round_trip_min_ms"] == 25.031
        assert point["forward_loss_fraction"] == pytest.approx(5 / 2900)

    def test_a_target_without_a_latency_test_has_no_points(self) -> None:
        reply = self.latency("ping-only.example")
        assert reply.status_code == 200 and reply.json()["points"] == []

    def test_points_are_bounded(self) -> None:
        for max_points in (2, 7, 100):
            points = self.latency(max_points=max_points).json()["points"]
            assert 0 < len(points) <= max_points

    def test_bad_queries_say_why(self) -> None:
        source, target = str(self.athens.pk), "router1.example.net"
        future = (self.now + timedelta(days=1)).isoformat()
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"source": "nope", "target": target}, 400, "source"),
            ({"source": str(uuid.uuid4()), "target": target}, 400, "unknown agent"),
            ({"source": source}, 400, "target"),
            ({"source": source, "target": " "}, 400, "target"),
            ({"source": source, "target": "x" * 256}, 400, "target"),
            ({"source": source, "target": target, "from": self.now.isoformat(),
              "to": (self.now - timedelta(hours=1)).isoformat()}, 400, "reversed"),
            ({"source": source, "target": target, "from": future}, 400, "future"),
            ({"source": source, "target": target, "to": "2000-01-01T00:00:00Z"}, 400, "retention"),
            ({"source": source, "target": target, "to": "tomorrow"}, 400, "to"),
            ({"source": source, "target": target, "max_points": 1}, 400, "max_points"),
            ({"source": source, "target": target, "destination": str(self.frankfurt.pk)}, 400, "destination"),
            ({"source": source, "target": "unknown.example"}, 404, "no runs"),
            ({"source": str(self.frankfurt.pk), "target": target}, 404, "no runs"),
        ]  # fmt: skip
        for query, status, reason in cases:
            reply = self.viewer.get(reverse("target-latency"), query)
            assert reply.status_code == status, (query, reply.content)
            assert reason in reply.content.decode(), (query, reply.content)

    def test_query_count(self) -> None:
        with self.assertNumQueries(5):  # session, user, agent, latest runs, buckets
            assert self.latency().status_code == 200

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(reverse("target-latency"), {"source": str(self.athens.pk), "target": "198.18.9.9"})
        assert reply.status_code == 403
