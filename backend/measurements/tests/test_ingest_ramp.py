"""A policer's UDP ramp as an agent uploads it: stored with its steps, or refused whole when
its steps do not match what its options asked for."""

from __future__ import annotations

import copy
import json
from typing import Any

from fathom.testing import FathomTestCase, load_example
from measurements.models import Run, ThroughputInterval

RESULTS_URL = "/api/v1/agent/results/"


class RampIngestTests(FathomTestCase):
    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)
        self.batch = load_example("valid/throughput-udp-ramp.json")

    def with_throughput(self, **changes: Any) -> dict[str, Any]:
        batch: dict[str, Any] = copy.deepcopy(self.batch)
        batch["results"][0]["throughput"].update(changes)
        return batch

    def test_a_ramp_is_stored_with_its_steps_beside_the_summary(self) -> None:
        reply = self.client_athens.post(RESULTS_URL, self.batch, format="json")
        assert reply.status_code == 200, reply.content
        sent = self.batch["results"][0]
        run = Run.objects.get(id=sent["id"])
        assert run.params["ramp_bps"] == [60_000_000, 90_000_000, 135_000_000, 200_000_000]
        assert run.summary["ramp"] == sent["throughput"]["ramp"] and run.summary["protocol"] == "UDP"
        assert ThroughputInterval.objects.filter(run_id=run.id).count() == len(sent["throughput"]["intervals"])

    def test_steps_that_do_not_match_the_options_are_refused_and_nothing_is_stored(self) -> None:
        throughput = self.batch["results"][0]["throughput"]
        options, steps = throughput["options"], throughput["ramp"]
        unasked = {**options, "ramp_bps": []}
        wrong_rate = [{**steps[0], "offered_bps": 1}, *steps[1:]]
        cases: list[tuple[dict[str, Any], str]] = [
            (self.with_throughput(options=unasked), "4 ramp steps, but options.ramp_bps asked for 0"),
            (self.with_throughput(ramp=wrong_rate), "step 0 offered 1, asked 60000000"),
            (self.with_throughput(protocol="TCP"), "a ramp is UDP"),
            (self.with_throughput(ramp=[]), "ramp"),  # the contract: a ramp has at least one step
            (self.with_throughput(ramp=[{**steps[0], "receiver_bits_per_s": -1}]), "receiver_bits_per_s"),
            (self.with_throughput(options={**options, "ramp_bps": [1] * 9}), "ramp_bps"),
        ]  # fmt: skip
        for batch, message in cases:
            reply = self.client_athens.post(RESULTS_URL, batch, format="json")
            assert reply.status_code == 400, message
            assert message in json.dumps(reply.json()["errors"]), (message, reply.json())
        assert Run.objects.count() == 0 and ThroughputInterval.objects.count() == 0
