"""A dual-stack pair is two paths (issue 33 item 4): the plan measures each family, ingest
keys every row by the family of the address probed, and every path view answers for one
family only, IPv4 unless asked for IPv6."""

from __future__ import annotations

import copy
import itertools
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from analysis.models import Finding
from fathom.testing import FathomTestCase, load_example
from history.refresh import refresh
from measurements.models import PathLatestRun, PingSample, Run
from meshes.models import Slot
from meshes.services.slot_planning import plan_exclusive_slots

RESULTS_URL = "/api/v1/agent/results/"


def ipv6_ping(rtt_offset_ms: float) -> dict[str, Any]:
    """The contract's example ping, sent to frankfurt's IPv6 address, its RTTs shifted."""
    batch: dict[str, Any] = copy.deepcopy(load_example("valid/ping-ok.json"))
    result = batch["results"][0]
    result["id"] = str(uuid.uuid4())
    result["target"] = "2001:2::21"
    result["test_id"] = "default/ping:0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f:ipv6"
    for sample in result["ping"]["samples"]:
        sample["rtt_ms"] += rtt_offset_ms
    return batch


class DualStackPathTests(FathomTestCase):
    def setUp(self) -> None:
        for agent, six in ((self.athens, "2001:2::11"), (self.frankfurt, "2001:2::21")):
            agent.other_addresses = [six]
            agent.save(update_fields=["other_addresses"])
        self.uploader = self.agent_client(self.athens, self.athens_credential)
        self.viewer = self.user_client(self.outsider)

    def upload_both_families(self) -> None:
        for batch in (load_example("valid/ping-ok.json"), ipv6_ping(10.0)):
            reply = self.uploader.post(RESULTS_URL, batch, format="json")
            assert reply.status_code == 200, reply.content

    def test_the_plan_measures_each_family_towards_its_address(self) -> None:
        tests = self.uploader.get("/api/v1/agent/plan/").json()["tests"]
        pings = sorted((t["id"], t["peer"]["address"]) for t in tests if t["type"] == "ping")
        assert [address for _, address in pings] == ["198.18.2.1", "2001:2::21"], pings
        assert pings[1][0] == pings[0][0] + ":ipv6"

    def test_exclusive_slots_are_planned_per_family_and_never_overlap_on_a_host(self) -> None:
        plan_exclusive_slots(now=datetime.now(UTC), seed=3)
        slots = list(Slot.objects.filter(source=self.athens, destination=self.frankfurt))
        assert {slot.family for slot in slots} == {4, 6}
        busy = sorted(
            (slot.start_at, slot.end_at)
            for slot in Slot.objects.filter(source__in=[self.athens, self.frankfurt], state="planned")
        )
        assert all(end <= start for (_, end), (start, _) in itertools.pairwise(busy)), busy

    def test_rows_views_and_lists_keep_the_families_apart(self) -> None:
        self.upload_both_families()
        assert sorted(Run.objects.values_list("family", flat=True)) == [4, 6]
        assert set(PingSample.objects.filter(family=6).values_list("rtt_ms", flat=True)) == {17.81, 17.93, 21.9}
        assert PathLatestRun.objects.filter(source=self.athens, destination=self.frankfurt).count() == 2

        listed = self.viewer.get("/api/v1/paths/").json()
        assert sorted((row["destination"]["name"], row["family"]) for row in listed) == [
            ("frankfurt", 4),
            ("frankfurt", 6),
        ]
        ends = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk), "start": "2026-11-22T09:00:00Z",
                "end": "2026-11-22T11:00:00Z"}  # fmt: skip
        four = self.viewer.get("/api/v1/paths/rtt/", ends).json()
        six = self.viewer.get("/api/v1/paths/rtt/", {**ends, "family": "6"}).json()
        assert (four["family"], six["family"]) == (4, 6)
        assert [point["rtt_min_ms"] for point in four["points"]] == [7.81]
        assert [point["rtt_min_ms"] for point in six["points"]] == [17.81]
        pair = {"source": ends["source"], "destination": ends["destination"]}
        runs = self.viewer.get("/api/v1/paths/runs/", {**pair, "family": "6"}).json()
        assert [run["test_id"] for run in runs] == [ipv6_ping(0)["results"][0]["test_id"]]

        paths = self.viewer.get("/api/v1/analysis/paths/").json()["paths"]
        assert sorted(row["family"] for row in paths) == [4, 6]
        only_six = self.viewer.get("/api/v1/analysis/paths/", {"family": "6"}).json()["paths"]
        assert [row["family"] for row in only_six] == [6]
        bad = self.viewer.get("/api/v1/paths/rtt/", {**ends, "family": "5"})
        assert bad.status_code == 400 and "family" in bad.json()

    def test_history_rolls_each_family_up_on_its_own(self) -> None:
        self.upload_both_families()
        refresh(datetime(2026, 11, 22, 10, 10, tzinfo=UTC))
        query = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk),
                 "from": "2026-11-22T09:00:00Z", "to": "2026-11-22T11:00:00Z"}  # fmt: skip
        four = self.viewer.get("/api/v1/paths/history/", query).json()
        six = self.viewer.get("/api/v1/paths/history/", {**query, "family": "6"}).json()
        assert [row["min"] for row in four["rtt"]] == [7.81]
        assert [row["min"] for row in six["rtt"]] == [17.81]
        assert six["family"] == 6

    def test_findings_are_per_family(self) -> None:
        started = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
        for family in (4, 6):
            Finding.objects.create(
                source=self.athens, destination=self.frankfurt, family=family, metric="rtt", started_at=started,
                detected_at=started + timedelta(minutes=5), direction="up", baseline=8.0, current=9.5 + family,
                magnitude=1.5, unit="ms",
            )  # fmt: skip
        ends = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)}
        six = self.viewer.get("/api/v1/analysis/findings/", {**ends, "family": "6"}).json()
        assert [(row["family"], row["current"]) for row in six] == [(6, 15.5)]
        both = self.viewer.get("/api/v1/analysis/findings/", ends).json()
        assert sorted(row["family"] for row in both) == [4, 6]
        analysis = self.viewer.get("/api/v1/analysis/path/", {**ends, "family": "6"}).json()
        assert analysis["family"] == 6 and [f["current"] for f in analysis["findings"]] == [15.5]
