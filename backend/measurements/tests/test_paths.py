from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fathom.testing import FathomTestCase
from measurements.models import PingSample
from measurements.paths import bucket_width_s

T0 = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("span", "max_points", "expected_s"),
    [
        (timedelta(hours=1), 1000, 5),
        (timedelta(hours=6), 1000, 30),
        (timedelta(days=7), 1000, 900),
        (timedelta(days=365), 1000, 43200),
        (timedelta(days=3650), 100, 37 * 86400),
    ],
)
def test_bucket_width(span: timedelta, max_points: int, expected_s: int) -> None:
    assert bucket_width_s(T0, T0 + span, max_points) == expected_s


def test_bucket_width_refuses_fewer_than_two_points() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        bucket_width_s(T0, T0 + timedelta(hours=1), 1)


class PathRttTests(FathomTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        # 30 days of one ping every 10 minutes, every 7th lost, one duplicate reply.
        run_id = uuid.uuid4()
        rows = []
        for index in range(30 * 24 * 6):
            lost = index % 7 == 0
            rows.append(
                PingSample(
                    time=T0 + timedelta(minutes=10 * index),
                    run_id=run_id,
                    sample_index=index,
                    source_id=cls.athens.pk,
                    destination_id=cls.frankfurt.pk,
                    seq=index % 65536,
                    rtt_ms=None if lost else 7.8 + (index % 3),
                    ttl=None if lost else 60,
                )
            )
        rows.append(
            PingSample(
                time=T0 + timedelta(minutes=1),
                run_id=run_id,
                sample_index=len(rows),
                source_id=cls.athens.pk,
                destination_id=cls.frankfurt.pk,
                seq=0,
                rtt_ms=99.0,
                duplicate=True,
            )
        )
        PingSample.objects.bulk_create(rows)

    def rtt(self, **params: str | int) -> dict[str, Any]:
        query = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **params}
        reply = self.user_client(self.outsider).get("/api/v1/paths/rtt/", query)
        assert reply.status_code == 200, reply.content
        body: dict[str, Any] = reply.json()
        return body

    def test_long_range_never_exceeds_max_points(self) -> None:
        for max_points in (2, 10, 97, 500, 5000):
            body = self.rtt(start="2026-05-25T00:00:00Z", end="2026-07-05T00:00:00Z", max_points=max_points)
            points = body["points"]
            assert isinstance(points, list) and 0 < len(points) <= max_points, (max_points, len(points))

    def test_bucket_values(self) -> None:
        body = self.rtt(start="2026-06-01T00:00:00Z", end="2026-06-01T01:10:00Z", max_points=8)
        assert body["bucket_s"] == 600
        points = body["points"]
        assert isinstance(points, list)
        first = points[0]
        # Bucket 00:00-00:10 holds sample 0 (lost) and the duplicate at 00:01 (not counted).
        assert first == {
            "time": "2026-06-01T00:00:00Z",
            "rtt_min_ms": None,
            "rtt_median_ms": None,
            "sent": 1,
            "lost": 1,
            "loss_fraction": 1.0,
        }
        second = points[1]
        assert second["rtt_min_ms"] == pytest.approx(8.8) and second["sent"] == 1 and second["lost"] == 0

    def test_default_range_is_the_last_day(self) -> None:
        body = self.rtt()
        assert body["points"] == []
        start = datetime.fromisoformat(str(body["start"]))
        end = datetime.fromisoformat(str(body["end"]))
        assert end - start == timedelta(hours=24)

    def test_bad_queries(self) -> None:
        client = self.user_client(self.outsider)
        source, destination = str(self.athens.pk), str(self.frankfurt.pk)
        cases: list[dict[str, str | int]] = [
            {"source": "nope", "destination": destination},
            {"source": source},
            {"source": source, "destination": str(uuid.uuid4())},
            {"source": source, "destination": destination, "max_points": 1},
            {"source": source, "destination": destination, "max_points": 100000},
            {
                "source": source,
                "destination": destination,
                "start": "2026-06-02T00:00:00Z",
                "end": "2026-06-01T00:00:00Z",
            },
            {"source": source, "destination": destination, "start": "yesterday"},
            {"source": source, "destination": destination, "colour": "red"},
        ]
        for query in cases:
            reply = client.get("/api/v1/paths/rtt/", query)
            assert reply.status_code == 400, query

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(
            "/api/v1/paths/rtt/", {"source": str(self.athens.pk), "destination": str(self.athens.pk)}
        )
        assert reply.status_code == 403


class PathListTests(FathomTestCase):
    def test_lists_paths_with_flat_query_count(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        from fathom.testing import load_example

        client.post("/api/v1/agent/results/", load_example("valid/ping-ok.json"), format="json")
        client.post("/api/v1/agent/results/", load_example("valid/ping-failed.json"), format="json")
        user = self.user_client(self.outsider)
        with self.assertNumQueries(3):  # session, user, latest runs joined with agents
            listed = user.get("/api/v1/paths/").json()
        assert listed == [
            {
                "source": {"id": str(self.athens.pk), "name": "athens"},
                "destination": {"id": str(self.frankfurt.pk), "name": "frankfurt"},
                "family": 4,
                "test_types": ["ping"],
                "last_run_at": "2026-11-22T10:02:00Z",
                "last_status": "failed",
            }
        ]
