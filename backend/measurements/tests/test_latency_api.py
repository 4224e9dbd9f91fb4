"""GET /paths/latency/: a path's latency intervals in time buckets, each with whether its
one-way delays can be trusted and whether Fathom's own throughput tests loaded it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import override_settings

from fathom.testing import FathomTestCase
from measurements.models import LatencyInterval

T0 = datetime(2026, 6, 1, tzinfo=UTC)
URL = "/api/v1/paths/latency/"
MINUTE = timedelta(minutes=1)
# Half an hour of minute intervals: minute 10's reflector clock is not synchronised, minute 12's
# declares 1 ms of error, minute 15 had no answer, minute 20 overlapped a throughput test.
UNSYNCHRONIZED, LARGE_ERROR, UNANSWERED, LOADED = 10, 12, 15, 20


def interval(source: uuid.UUID, destination: uuid.UUID, minute: int) -> LatencyInterval:
    answered = 0 if minute == UNANSWERED else 590
    delays = {
        f"{direction}_{key}": (None if not answered else base + offset + minute % 3)
        for direction, base in (("forward", 20.0), ("backward", 5.0), ("round_trip", 25.0))
        for key, offset in (("min_ms", 0.0), ("p50_ms", 0.1), ("p90_ms", 0.2), ("p99_ms", 0.4), ("max_ms", 1.0))
    }
    return LatencyInterval(
        time=T0 + minute * MINUTE,
        ended_at=T0 + (minute + 1) * MINUTE,
        run_id=uuid.uuid4(),
        source_id=source,
        destination_id=destination,
        sent=600,
        answered=answered,
        duplicates=0,
        malformed=0,
        forward_lost=600 if not answered else 4,
        backward_lost=0 if not answered else 6,
        sender_synchronized=True,
        sender_error_ms=0.001,
        reflector_synchronized=None if not answered else minute != UNSYNCHRONIZED,
        reflector_error_ms=None if not answered else (1.0 if minute == LARGE_ERROR else 0.001),
        own_load=minute == LOADED,
        **delays,
    )


class PathLatencyTests(FathomTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        rows = [interval(cls.athens.pk, cls.frankfurt.pk, minute) for minute in range(30)]
        # The other direction's sessions are another path's.
        rows.append(interval(cls.frankfurt.pk, cls.athens.pk, 0))
        LatencyInterval.objects.bulk_create(rows)

    def latency(self, **params: str | int) -> dict[str, Any]:
        query = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **params}
        reply = self.user_client(self.outsider).get(URL, query)
        assert reply.status_code == 200, reply.content
        body: dict[str, Any] = reply.json()
        return body

    def half_hour(self) -> dict[str, Any]:
        return self.latency(start=T0.isoformat(), end=(T0 + 30 * MINUTE).isoformat(), max_points=7)

    def test_a_bucket_sums_counts_and_keeps_extremes_and_median_percentiles(self) -> None:
        body = self.half_hour()
        assert body["bucket_s"] == 300 and body["clock_error_limit_ms"] == 0.5
        assert body["source"] == {"id": str(self.athens.pk), "name": "athens"}
        points = body["points"]
        assert [point["time"] for point in points] == [
            (T0 + 5 * index * MINUTE).isoformat().replace("+00:00", "Z") for index in range(6)
        ]
        first = points[0]
        # Minutes 0..4: delays 20 + minute % 3, so minima 20, 21, 22, 20, 21.
        assert first == {
            "time": "2026-06-01T00:00:00Z",
            "sent": 3000,
            "answered": 2950,
            "forward_lost": 20,
            "backward_lost": 30,
            "forward_loss_fraction": pytest.approx(20 / 3000),
            "backward_loss_fraction": pytest.approx(30 / 2980),
            "forward_min_ms": 20.0,
            "forward_p50_ms": pytest.approx(21.1),
            "forward_p90_ms": pytest.approx(21.2),
            "forward_p99_ms": pytest.approx(21.4),
            "forward_max_ms": 23.0,
            "backward_min_ms": 5.0,
            "backward_p50_ms": pytest.approx(6.1),
            "backward_p90_ms": pytest.approx(6.2),
            "backward_p99_ms": pytest.approx(6.4),
            "backward_max_ms": 8.0,
            "round_trip_min_ms": 25.0,
            "round_trip_p50_ms": pytest.approx(26.1),
            "round_trip_p99_ms": pytest.approx(26.4),
            "clock_error_ms": pytest.approx(0.002),
            "one_way_trusted": True,
            "loaded": False,
        }

    def test_trust_in_one_way_delays_follows_both_clocks(self) -> None:
        points = self.half_hour()["points"]
        # Minutes 10..14: one reflector unsynchronised, one declaring 1 ms.
        assert points[2]["one_way_trusted"] is False
        assert points[2]["clock_error_ms"] == pytest.approx(1.001)
        # Minutes 15..19: the unanswered minute has no delay and no clock to doubt.
        assert points[3]["one_way_trusted"] is True
        assert points[3]["forward_lost"] == 600 + 4 * 4 and points[3]["answered"] == 4 * 590
        with override_settings(LATENCY_CLOCK_ERROR_LIMIT_MS=2.0):
            relaxed = self.half_hour()
        assert relaxed["clock_error_limit_ms"] == 2.0
        # Still not: minute 10's reflector clock is not synchronised.
        assert relaxed["points"][2]["one_way_trusted"] is False

    def test_a_bucket_without_any_answer_trusts_nothing(self) -> None:
        body = self.latency(
            start=(T0 + UNANSWERED * MINUTE).isoformat(), end=(T0 + (UNANSWERED + 1) * MINUTE).isoformat()
        )
        [point] = body["points"]
        assert point["answered"] == 0 and point["forward_loss_fraction"] == 1.0
        assert point["backward_loss_fraction"] is None  # nothing entered the backward direction
        assert point["forward_p50_ms"] is None and point["clock_error_ms"] is None
        assert point["one_way_trusted"] is False

    def test_a_one_way_only_session_has_no_way_back(self) -> None:
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        one_way = interval(self.athens.pk, lisbon.pk, 0)
        for field in (
            "backward_lost",
            "backward_min_ms",
            "backward_p50_ms",
            "backward_p90_ms",
            "backward_p99_ms",
            "backward_max_ms",
            "round_trip_min_ms",
            "round_trip_p50_ms",
            "round_trip_p99_ms",
        ):
            setattr(one_way, field, None)  # fmt: skip
        one_way.answered = 596  # what arrived of 600, 4 lost on the way
        one_way.save()
        reply = self.user_client(self.outsider).get(
            URL, {"source": str(self.athens.pk), "destination": str(lisbon.pk), "start": T0.isoformat(),
                  "end": (T0 + MINUTE).isoformat()},
        )  # fmt: skip
        [point] = reply.json()["points"]
        assert (point["answered"], point["forward_lost"], point["forward_loss_fraction"]) == (596, 4, 4 / 600)
        assert point["backward_lost"] is point["backward_loss_fraction"] is point["round_trip_p50_ms"] is None
        assert point["forward_p50_ms"] == pytest.approx(20.1) and point["one_way_trusted"] is True

    def test_own_load_marks_its_bucket(self) -> None:
        assert [point["loaded"] for point in self.half_hour()["points"]] == [False] * 4 + [True, False]

    def test_long_range_never_exceeds_max_points(self) -> None:
        for max_points in (2, 10, 97):
            body = self.latency(start="2026-05-25T00:00:00Z", end="2026-07-05T00:00:00Z", max_points=max_points)
            assert 0 < len(body["points"]) <= max_points

    def test_default_range_is_the_last_day(self) -> None:
        body = self.latency()
        assert body["points"] == []
        assert datetime.fromisoformat(body["end"]) - datetime.fromisoformat(body["start"]) == timedelta(hours=24)

    def test_bad_queries_are_400_naming_the_field(self) -> None:
        client = self.user_client(self.outsider)
        source, destination = str(self.athens.pk), str(self.frankfurt.pk)
        unknown = str(uuid.uuid4())
        cases: list[tuple[dict[str, str | int], str]] = [
            ({"source": "nope", "destination": destination}, "source"),
            ({"source": source}, "destination"),
            ({"source": source, "destination": unknown}, "destination"),
            ({"source": source, "destination": destination, "max_points": 1}, "max_points"),
            ({"source": source, "destination": destination, "max_points": 100000}, "max_points"),
            (
                {"source": source, "destination": destination, "start": "2026-06-02T00:00:00Z", "end": "2026-06-01"},
                "start",
            ),
            ({"source": source, "destination": destination, "start": "yesterday"}, "start"),
            ({"source": source, "destination": destination, "colour": "red"}, "colour"),
        ]
        for query, field in cases:
            reply = client.get(URL, query)
            assert reply.status_code == 400, query
            assert field in reply.json(), (query, reply.json())
        assert "unknown agent" in str(client.get(URL, cases[2][0]).json()["destination"])

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(URL, {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)})
        assert reply.status_code == 403
