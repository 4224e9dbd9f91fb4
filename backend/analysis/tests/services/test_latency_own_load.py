"""Latency intervals that Fathom's own throughput tests overlapped are flagged as they are
stored, or when the test's run lands after them; a path with only latency results passes
through the analysis and its pages like any other."""

from __future__ import annotations

import copy
import uuid
from datetime import datetime, timedelta
from typing import Any

from analysis.services.run_analyses import analyze_recent
from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase, add_latency_mesh, load_example
from history.tests.builders import ingest, throughput_result
from inventory.models import Agent
from measurements.choices import TestType as Kind
from measurements.models import LatencyInterval
from meshes.choices import SlotState
from meshes.models import Slot

T0 = EXAMPLES_RECORDED_AT - timedelta(hours=2)  # ingest's clock is EXAMPLES_RECORDED_AT
MINUTE = timedelta(minutes=1)


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def latency_result(peer: Agent, started: datetime) -> dict[str, Any]:
    """The contract example's answered minute, from `started`, towards `peer`."""
    result: dict[str, Any] = copy.deepcopy(load_example("valid/latency-one-way-loss.json")["results"][0])
    result.update(
        id=str(uuid.uuid4()),
        peer_id=str(peer.pk),
        test_id=f"latency/latency:{peer.pk}",
        started_at=_stamp(started),
        ended_at=_stamp(started + MINUTE),
    )
    return result


def loaded_minutes(source: Agent, destination: Agent) -> list[int]:
    rows = LatencyInterval.objects.filter(source_id=source.pk, destination_id=destination.pk, own_load=True)
    return sorted(int((time - T0) / MINUTE) for time in rows.values_list("time", flat=True))


def minutes(source: Agent, peer: Agent, count: int) -> list[dict[str, Any]]:
    return [latency_result(peer, T0 + index * MINUTE) for index in range(count)]


class LatencyOwnLoadTests(FathomTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        add_latency_mesh()

    def slot(self, source: Agent, destination: Agent, state: str = SlotState.PLANNED) -> Slot:
        """A throughput slot from 1:30 to 2:10 after T0: it overlaps minutes 1 and 2."""
        start = T0 + 90 * timedelta(seconds=1)
        return Slot.objects.create(
            source=source, destination=destination, test_type=Kind.THROUGHPUT, state=state,
            period_start=start, start_at=start, end_at=start + 40 * timedelta(seconds=1),
        )  # fmt: skip

    def test_an_interval_overlapping_a_planned_slot_of_either_host_is_flagged(self) -> None:
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        self.slot(lisbon, self.frankfurt)  # the peer's test with a third agent loads the path too
        ingest(self.athens, *minutes(self.athens, self.frankfurt, 4))
        assert loaded_minutes(self.athens, self.frankfurt) == [1, 2]

    def test_an_unschedulable_slot_and_other_hosts_tests_flag_nothing(self) -> None:
        lisbon, _ = self.enroll("lisbon", "198.18.3.1")
        porto, _ = self.enroll("porto", "198.18.3.2")
        self.slot(self.athens, self.frankfurt, SlotState.UNSCHEDULABLE)
        self.slot(lisbon, porto)
        ingest(self.athens, *minutes(self.athens, self.frankfurt, 4))
        assert loaded_minutes(self.athens, self.frankfurt) == []

    def test_a_run_stored_after_the_intervals_flags_them(self) -> None:
        # A run no slot announced: the intervals it overlapped were stored unflagged.
        ingest(self.athens, *minutes(self.athens, self.frankfurt, 4))
        assert loaded_minutes(self.athens, self.frankfurt) == []
        run = throughput_result(self.athens, T0 + 90 * timedelta(seconds=1), 9e8)
        run["ended_at"] = _stamp(T0 + 130 * timedelta(seconds=1))
        ingest(self.frankfurt, run)
        assert loaded_minutes(self.athens, self.frankfurt) == [1, 2]

    def test_a_path_with_only_latency_results_passes_through_the_analysis_and_its_pages(self) -> None:
        ingest(self.athens, *minutes(self.athens, self.frankfurt, 3))
        progress = analyze_recent(EXAMPLES_RECORDED_AT)
        assert progress.findings_opened == 0
        client = self.user_client(self.outsider)
        path = {"source": str(self.athens.pk), "destination": str(self.frankfurt.pk)}
        listed = client.get("/api/v1/paths/").json()
        assert [entry["test_types"] for entry in listed] == [["latency"]]
        summaries = client.get("/api/v1/analysis/paths/").json()
        assert any(row["test_types"] == ["latency"] for row in summaries["paths"]), summaries
        for url in ("/api/v1/analysis/path/", "/api/v1/analysis/path/timeline/", "/api/v1/paths/runs/"):
            assert client.get(url, path).status_code == 200, url
        grid = client.get("/api/v1/analysis/meshes/latency/grid/")
        assert grid.status_code == 200, grid.content
