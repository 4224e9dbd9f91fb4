"""A streams probe as an agent uploads it: stored with its mark in the run's options, or
refused whole when it is no run of several TCP streams."""

from __future__ import annotations

import copy
import json
from typing import Any

from fathom.testing import FathomTestCase, load_example
from measurements.models import Run

RESULTS_URL = "/api/v1/agent/results/"


class StreamsProbeIngestTests(FathomTestCase):
    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)
        self.batch = load_example("valid/throughput-streams-probe.json")

    def with_options(self, **changes: Any) -> dict[str, Any]:
        batch: dict[str, Any] = copy.deepcopy(self.batch)
        batch["results"][0]["throughput"]["options"].update(changes)
        return batch

    def test_a_probe_is_stored_with_its_mark(self) -> None:
        reply = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        assert reply.status_code == 200, reply.content
        run = Run.objects.get(id=self.batch["results"][0]["id"])
        assert (run.params["streams_probe"], run.params["parallel"]) == (True, 4)

    def test_a_probe_of_one_stream_or_of_udp_is_refused_and_nothing_is_stored(self) -> None:
        cases = [
            self.with_options(parallel=1),
            self.with_options(udp=True, bitrate_bps=1_000_000),
        ]
        for batch in cases:
            reply = self.client_athens.post(RESULTS_URL, batch, format="json")
            assert reply.status_code == 400, reply.content
            assert "a streams probe runs several TCP streams" in json.dumps(reply.json()["errors"])
        not_boolean = self.with_options(streams_probe="yes")
        reply = self.client_athens.post(RESULTS_URL, not_boolean, format="json")
        assert reply.status_code == 400 and "streams_probe" in json.dumps(reply.json()["errors"])
        assert Run.objects.count() == 0
