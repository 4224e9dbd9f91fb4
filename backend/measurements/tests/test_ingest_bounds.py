"""Input a column or the calendar cannot hold is a 400 that stores nothing, never a 500 the
agent would retry forever: integers beyond their column, times beyond what retention keeps
or the clock allows, numbers beyond a double."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

from django.test import override_settings

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase, load_example
from measurements.models import PingSample, Run, ThroughputInterval

RESULTS_URL = "/api/v1/agent/results/"
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def stamp(offset: timedelta) -> str:
    return (EXAMPLES_RECORDED_AT + offset).isoformat().replace("+00:00", "Z")


class IngestBoundsTestCase(FathomTestCase):
    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)

    def refused(self, batch: dict[str, Any], where: str, says: str = "") -> None:
        reply = self.client_athens.post(RESULTS_URL, batch, format="json")
        assert reply.status_code == 400, (where, reply.status_code, reply.content[:300])
        text = json.dumps(reply.json())
        assert where in text and says in text, (where, says, text)
        assert Run.objects.count() == 0 and PingSample.objects.count() == 0 and ThroughputInterval.objects.count() == 0

    def throughput(self, **interval: Any) -> dict[str, Any]:
        batch: dict[str, Any] = copy.deepcopy(load_example("valid/throughput-ok.json"))
        batch["results"][0]["throughput"]["intervals"][0].update(interval)
        return batch

    def ping(self) -> dict[str, Any]:
        batch: dict[str, Any] = copy.deepcopy(load_example("valid/ping-ok.json"))
        return batch


class IntegerBoundsTests(IngestBoundsTestCase):
    def test_integers_beyond_their_columns_are_refused(self) -> None:
        cases = {
            "bytes": INT64_MAX + 1,  # bigint
            "rtt_us": INT64_MAX + 1,
            "lost_packets": INT64_MAX + 1,
            "stream": INT32_MAX + 1,  # integer
            "pmtu": INT32_MAX + 1,
        }
        for field, value in cases.items():
            self.refused(self.throughput(**{field: value}), f"intervals/0/{field}", "greater than the maximum")
        # At the columns' limits they are stored.
        reply = self.client_athens.post(
            RESULTS_URL, self.throughput(bytes=INT64_MAX, stream=INT32_MAX, pmtu=INT32_MAX), format="json"
        )
        assert reply.status_code == 200, reply.content
        assert ThroughputInterval.objects.filter(bytes=INT64_MAX, stream=INT32_MAX).count() == 1

    def test_summary_counters_are_bounded_too(self) -> None:
        batch = self.ping()
        batch["results"][0]["ping"]["errors"] = 10**30
        self.refused(batch, "ping/errors", "greater than the maximum")
        batch = self.throughput()
        batch["results"][0]["throughput"]["summary"]["sender_bytes"] = INT64_MAX + 1
        self.refused(batch, "summary/sender_bytes", "greater than the maximum")

    def test_a_huge_interval_end_is_refused(self) -> None:
        self.refused(self.throughput(end_s=1e300), "intervals/0/end_s", "greater than the maximum")

    def test_a_number_beyond_a_double_is_refused(self) -> None:
        body = json.dumps(self.throughput()).replace('"bits_per_s": 1200000000.0', '"bits_per_s": 1e400', 1)
        assert "1e400" in body
        reply = self.client_athens.post(RESULTS_URL, body, content_type="application/json")
        assert reply.status_code == 400 and "beyond the range of a double" in reply.json()["errors"][0]["message"]
        assert Run.objects.count() == 0


class TimeBoundsTests(IngestBoundsTestCase):
    def test_a_huge_end_time_is_refused(self) -> None:
        for ended_at in ("9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59Z"):
            batch = self.ping()
            batch["results"][0]["ended_at"] = ended_at
            self.refused(batch, "results/0/ended_at", "ahead of the server")

    def test_sample_times_far_in_the_future_are_refused(self) -> None:
        batch = self.ping()
        batch["results"][0]["ping"]["samples"][1]["time"] = stamp(timedelta(days=400))
        self.refused(batch, "results/0/ping/samples/1/time", "ahead of the server")
        # Within the clock-skew allowance a sample is accepted.
        batch["results"][0]["ping"]["samples"][1]["time"] = stamp(timedelta(minutes=5))
        assert self.client_athens.post(RESULTS_URL, batch, format="json").status_code == 200

    def test_throughput_interval_times_are_bounded_from_the_run_start(self) -> None:
        # The run started at 10:00, two hours before the server's clock: 80,000 s after it is tomorrow.
        self.refused(self.throughput(end_s=80_000), "intervals/0/end_s", "ahead of the server")

    def test_times_older_than_the_raw_retention_are_refused(self) -> None:
        batch = self.ping()
        batch["results"][0]["ping"]["samples"][0]["time"] = "0001-01-01T00:00:00+01:00"
        self.refused(batch, "results/0/ping/samples/0/time", "older than the raw retention (30 days)")
        batch = self.ping()
        result = batch["results"][0]
        result["started_at"], result["ended_at"] = stamp(-timedelta(days=200)), stamp(-timedelta(days=200))
        self.refused(batch, "results/0/started_at", "older than the raw retention")

    @override_settings(RAW_RETENTION_DAYS=1)
    def test_the_bound_follows_the_retention_setting(self) -> None:
        batch = self.ping()
        for sample in batch["results"][0]["ping"]["samples"]:
            sample["time"] = stamp(-timedelta(days=2))
        self.refused(batch, "results/0/ping/samples/0/time", "older than the raw retention (1 days)")
