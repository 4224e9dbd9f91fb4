"""A perfSONAR node's runs go through Fathom's analysis unchanged: a throughput run gets its
ceilings and diagnosis although a node reports no host facts, and its RTT is on the path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.models import RunAnalysis
from analysis.services.run_analyses import analyze_throughput_run
from fathom.testing import FathomTestCase
from measurements.models import Run
from perfsonar.intake import store_placed_run
from perfsonar.mapping import Placement, run_from_archive
from perfsonar.nodes import register_node

FIXTURES = Path(__file__).resolve().parents[2] / "perfsonar" / "tests" / "fixtures"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


class NodeRunAnalysisTests(FathomTestCase):
    ingest_now = None  # the recorded run's own time, by the real clock

    def test_a_nodes_throughput_run_gets_ceilings_and_a_diagnosis(self) -> None:
        node = register_node("ps-ams", "https://198.18.9.20/pscheduler")
        body = load("archive-throughput.json")
        run = run_from_archive(body)
        where = Placement(
            test_type="throughput",
            test_id=f"default/throughput:{self.athens.pk}",
            peer_id=str(self.athens.pk),
            target=self.athens.address,
            slot_id=None,
            reversed=False,
            options={},
        )
        with self.settings(RAW_RETENTION_DAYS=100000):  # however old the recording gets
            assert store_placed_run(node.agent, where, run) == "created"
            assert store_placed_run(node.agent, where, run) == "duplicate"
        stored = Run.objects.get(source_id=node.pk)
        analysis = analyze_throughput_run(stored)
        assert analysis is not None and RunAnalysis.objects.filter(run_id=stored.id).exists()
        assert analysis.source_id == node.pk and analysis.destination_id == self.athens.pk
        expected = body["result"]["summary"]["summary"]["throughput-bits"]
        assert analysis.rate_bps is not None and abs(analysis.rate_bps - expected) / expected < 0.2
        assert analysis.limit and analysis.diagnosis
