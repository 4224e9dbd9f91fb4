"""GET /api/v1/paths/history/: the resolution a range gets, both directions, the unsettled
tail computed from raw data, and every bad query refused with a clear 400."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from fathom.testing import FathomTestCase
from history.buckets import DAY, HOUR, MINUTE
from history.refresh import refresh
from history.tests.builders import ingest, ping_result, throughput_result

URL = "/api/v1/paths/history/"


def iso(moment: datetime) -> str:
    return moment.isoformat()


class PathHistoryApiTests(FathomTestCase):
    ingest_now = None  # the view answers for the wall clock's now
    now: ClassVar[datetime]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.now = timezone.now()
        # Pings each way every minute for the last two hours (the newest minutes unsettled),
        # a week-old hour, and one throughput run each way (between the pings: pings a run
        # overlaps are Fathom's own load, left out of the RTT figures).
        start = MINUTE.floor(cls.now) - timedelta(hours=2)
        minutes = [start + timedelta(minutes=k) for k in range(120)]
        ingest(cls.athens, *[ping_result(cls.frankfurt, at, [10.0, 12.0], timedelta(seconds=20)) for at in minutes])
        ingest(cls.frankfurt, *[ping_result(cls.athens, at, [11.0], timedelta(seconds=20)) for at in minutes])
        old = HOUR.floor(cls.now) - timedelta(days=7)
        ingest(cls.athens, ping_result(cls.frankfurt, old, [30.0, None], timedelta(seconds=20)))
        ingest(cls.athens, throughput_result(cls.frankfurt, start + timedelta(minutes=3, seconds=30), 9e8))
        reverse_at = start + timedelta(minutes=40, seconds=30)
        ingest(cls.athens, throughput_result(cls.frankfurt, reverse_at, 4e8, reverse=True))
        refresh(cls.now)

    def get(self, **query: str) -> Any:
        params = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), **query}
        return self.user_client(self.outsider).get(URL, params)

    def test_a_day_comes_at_one_minute_with_both_directions_and_the_unsettled_tail(self) -> None:
        reply = self.get()
        assert reply.status_code == 200, reply.content
        body: dict[str, Any] = reply.json()
        assert (body["resolution"], body["bucket_s"]) == ("minute", 60)
        # Every minute up to now, whether stored by the refresh or computed live from raw data.
        assert len(body["rtt"]) == 120 and len(body["reverse"]["rtt"]) == 120
        newest = body["rtt"][-1]
        assert [newest[key] for key in ("min", "p50", "max", "count", "loss")] == [10.0, 11.0, 12.0, 2, 0]
        assert body["reverse"]["rtt"][0]["p50"] == 11.0
        assert [point["median_bps"] for point in body["throughput"]] == [9e8]
        assert [point["median_bps"] for point in body["reverse"]["throughput"]] == [4e8]
        assert body["source"] == {"id": str(self.athens.pk), "name": "athens"}

    def test_longer_ranges_get_coarser_resolutions_and_stay_bounded(self) -> None:
        for days, resolution in ((30, "hour"), (365, "day"), (1400, "day")):
            span = timedelta(days=days)
            reply = self.get(**{"from": iso(self.now - span), "to": iso(self.now)})
            assert reply.status_code == 200, reply.content
            body = reply.json()
            assert body["resolution"] == resolution
            assert len(body["rtt"]) <= 1500
        week = self.get(**{"from": iso(self.now - timedelta(days=8)), "to": iso(self.now - timedelta(days=6))}).json()
        assert week["resolution"] == "hour"
        assert [(point["count"], point["lost"], point["loss"]) for point in week["rtt"]] == [(1, 1, 0.5)]

    def test_the_day_being_measured_is_computed_from_raw_data(self) -> None:
        body = self.get(**{"from": iso(self.now - timedelta(days=90))}).json()
        assert body["resolution"] == "day"
        # The last two hours fall in today's bucket (computed live) and perhaps yesterday's.
        since = DAY.floor(self.now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
        recent = [point for point in body["rtt"] if point["t"] >= since]
        assert sum(point["sent"] for point in recent) == 240
        # The newest ping's day: today's, unless now is in the first minute after midnight (a
        # run of the whole suite from 23:58 under libfaketime met that).
        newest_ping = MINUTE.floor(self.now) - timedelta(minutes=1)
        assert recent[-1]["t"] == DAY.floor(newest_ping).strftime("%Y-%m-%dT%H:%M:%SZ")

    def test_a_range_with_no_data_is_an_empty_series_not_an_error(self) -> None:
        reply = self.get(**{"from": iso(self.now - timedelta(days=20)), "to": iso(self.now - timedelta(days=19))})
        assert reply.status_code == 200
        body = reply.json()
        assert (body["rtt"], body["throughput"], body["reverse"]["rtt"]) == ([], [], [])

    def test_an_end_in_the_future_is_clipped_to_now(self) -> None:
        body = self.get(**{"from": iso(self.now - timedelta(hours=1)), "to": iso(self.now + timedelta(days=3))}).json()
        assert body["resolution"] == "minute"
        assert datetime.fromisoformat(body["to"].replace("Z", "+00:00")) <= timezone.now()

    @override_settings(ROLLUP_DAILY_RETENTION_DAYS=365)
    def test_bad_queries_are_refused_with_the_reason(self) -> None:
        unknown = str(uuid.uuid4())
        cases: list[tuple[dict[str, str], str, str]] = [
            ({"source": ""}, "source", "valid UUID"),
            ({"destination": "not-a-uuid"}, "destination", "valid UUID"),
            ({"destination": unknown}, "destination", "unknown agent"),
            ({"destination": str(self.athens.pk)}, "destination", "two different agents"),
            ({"from": "yesterday"}, "from", "Datetime has wrong format"),
            ({"from": iso(self.now), "to": iso(self.now - timedelta(hours=1))}, "from", "reversed"),
            ({"from": iso(self.now - timedelta(hours=1)), "to": iso(self.now - timedelta(hours=1))}, "from", "empty"),
            ({"from": iso(self.now + timedelta(hours=1)), "to": iso(self.now + timedelta(hours=2))}, "from", "future"),
            ({"from": iso(self.now - timedelta(days=1600))}, "from", "longer than 1500 days"),
            ({"from": iso(self.now - timedelta(days=400))}, "from", "daily rollups go back 365 days"),
            ({"max_points": "10"}, "max_points", "unknown field"),
        ]
        for query, field, message in cases:
            with self.subTest(query=query):
                reply = self.get(**query)
                assert reply.status_code == 400, reply.content
                assert message in " ".join(reply.json()[field]), reply.json()
        missing = self.user_client(self.outsider).get(URL, {"source": str(self.athens.pk)})
        assert missing.status_code == 400 and "required" in missing.json()["destination"][0]

    def test_anonymous_is_refused(self) -> None:
        reply = self.client.get(URL, {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)})
        assert reply.status_code in (401, 403)

    def test_query_count_does_not_grow_with_the_range(self) -> None:
        client = self.user_client(self.outsider)
        path = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)}
        counts = []
        for span in (timedelta(hours=3), timedelta(days=30), timedelta(days=365)):
            with CaptureQueriesContext(connection) as queries:
                assert client.get(URL, {**path, "from": iso(self.now - span)}).status_code == 200
            counts.append(len(queries.captured_queries))
        assert counts == [counts[0]] * 3, counts
