"""Latency results (TWAMP-light intervals): stored as one row per interval with the run's
summary, and every count or delay that contradicts another refused, naming its field."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from fathom.testing import EXAMPLES_RECORDED_AT, FathomTestCase, add_latency_mesh, add_list_mesh, load_example
from measurements.ingest import TimeWindow, semantic_errors
from measurements.kinds.latency import errors
from measurements.models import LatencyInterval, PathLatestRun, Run, TargetLatestRun

RESULTS_URL = "/api/v1/agent/results/"
EXAMPLE = "valid/latency-one-way-loss.json"


def answered_result() -> dict[str, Any]:
    """The example's first result: 580 sent, 568 answered, 1 lost forward, 11 backward."""
    result: dict[str, Any] = copy.deepcopy(load_example(EXAMPLE)["results"][0])
    return result


def unanswered_result() -> dict[str, Any]:
    """The example's second result: 580 sent, every one lost forward."""
    result: dict[str, Any] = copy.deepcopy(load_example(EXAMPLE)["results"][1])
    return result


def one_way_result() -> dict[str, Any]:
    """The answered minute as a one-way-only test (OWAMP) reports it: 579 of 580 arrived."""
    result = answered_result()
    result["latency"].update(answered=579, backward=None, round_trip=None)
    return result


def with_latency(result: dict[str, Any], **changes: Any) -> dict[str, Any]:
    result["latency"].update(changes)
    return result


def delays(**values: float | None) -> dict[str, float | None]:
    base: dict[str, float | None] = {"min_ms": 1.0, "p50_ms": 2.0, "p90_ms": 3.0, "p99_ms": 4.0, "max_ms": 5.0}
    return {**base, **values}


def bad_results() -> list[tuple[dict[str, Any], str, str]]:
    """(result, the path its error names, a word of its message): every invariant broken once."""
    cases: list[tuple[dict[str, Any], str, str]] = []
    cases.append((with_latency(answered_result(), answered=581), "latency/answered", "exceeds"))
    cases.append((with_latency(answered_result(), sent=600), "latency/sent", "lost backward"))
    broken = answered_result()
    broken["latency"]["backward"]["lost"] = 12
    cases.append((broken, "latency/sent", "12 lost backward"))
    cases.append((with_latency(unanswered_result(), duplicates=3), "latency/duplicates", "no packet was answered"))
    broken = answered_result()
    broken["latency"]["forward"]["delay"] = delays(p90_ms=1.5)
    cases.append((broken, "latency/forward/delay/p90_ms", "below p50_ms"))
    broken = answered_result()
    broken["latency"]["backward"]["delay"] = delays(max_ms=3.5)
    cases.append((broken, "latency/backward/delay/max_ms", "below p99_ms"))
    broken = answered_result()
    broken["latency"]["round_trip"] = delays(min_ms=2.5)
    cases.append((broken, "latency/round_trip/p50_ms", "below min_ms"))
    broken = answered_result()
    broken["latency"]["backward"]["delay"] = delays(p99_ms=None)
    cases.append((broken, "latency/backward/delay/p99_ms", "is null"))
    broken = unanswered_result()
    broken["latency"]["forward"]["delay"] = delays()
    cases.append((broken, "latency/forward/delay", "no packet was answered"))
    broken = unanswered_result()
    broken["latency"]["round_trip"] = delays(max_ms=None)
    cases.append((broken, "latency/round_trip", "no packet was answered"))
    broken = unanswered_result()
    broken["latency"]["backward"]["hops"] = 3
    cases.append((broken, "latency/backward/hops", "no packet was answered"))
    broken = unanswered_result()
    broken["latency"]["forward"]["reordered_fraction"] = 0.0
    cases.append((broken, "latency/forward/reordered_fraction", "no packet was answered"))
    broken = unanswered_result()
    broken["latency"]["forward"]["ipdv_ms"] = 0.1
    cases.append((broken, "latency/forward/ipdv_ms", "no packet was answered"))
    cases.append((with_latency(answered_result(), reflector_clock=None), "latency/reflector_clock", "null exactly"))
    reflector = {"synchronized": True, "error_ms": 0.001}
    cases.append((with_latency(unanswered_result(), reflector_clock=reflector), "latency/reflector_clock", "null"))
    # A one-way-only test has neither a way back nor a round trip, and loses only forward.
    cases.append((with_latency(answered_result(), round_trip=None), "latency/round_trip", "exactly when backward"))
    cases.append((with_latency(one_way_result(), answered=568), "latency/sent", "568 answered + 1 lost forward"))
    return cases


@pytest.mark.parametrize(("result", "where", "words"), bad_results())
def test_each_broken_invariant_is_an_error_naming_its_field(result: dict[str, Any], where: str, words: str) -> None:
    found = errors("results/0/latency", result["latency"])
    assert [error.path for error in found] == [f"results/0/{where}"], found
    assert words in found[0].message


def test_the_examples_break_no_invariant() -> None:
    assert errors("latency", answered_result()["latency"]) == []
    assert errors("latency", unanswered_result()["latency"]) == []
    assert errors("latency", one_way_result()["latency"]) == []


class LatencyIngestTests(FathomTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        add_latency_mesh()

    def setUp(self) -> None:
        self.client_athens = self.agent_client(self.athens, self.athens_credential)

    def post(self, *results: dict[str, Any]) -> Any:
        return self.client_athens.post(RESULTS_URL, {"schema_version": 1, "results": list(results)}, format="json")

    def test_each_interval_is_one_row_with_the_runs_summary(self) -> None:
        batch = load_example(EXAMPLE)
        assert self.post(*batch["results"]).status_code == 200
        first, second = (result["id"] for result in batch["results"])
        run = Run.objects.get(id=first)
        assert run.test_type == "latency" and run.destination_id == self.frankfurt.pk
        assert run.params == {"packet_interval_s": 0.1, "size_bytes": 41, "dscp": 0, "port": 862}
        summary = run.summary
        assert (summary["sent"], summary["answered"], summary["forward_lost"], summary["backward_lost"]) == (
            580, 568, 1, 11
        )  # fmt: skip
        assert summary["forward_loss_fraction"] == pytest.approx(1 / 580)
        # Answers are lost only of the 579 packets that reached the reflector.
        assert summary["backward_loss_fraction"] == pytest.approx(11 / 579)
        assert (summary["forward_p50_ms"], summary["backward_p50_ms"], summary["round_trip_p50_ms"]) == (
            20.081, 5.052, 25.139
        )  # fmt: skip
        assert (summary["forward_min_ms"], summary["backward_min_ms"]) == (20.012, 5.004)
        assert summary["clock_error_ms"] == pytest.approx(0.002)
        assert summary["sender_synchronized"] is summary["reflector_synchronized"] is True
        row = LatencyInterval.objects.get(run_id=first)
        assert (row.time, row.ended_at) == (run.started_at, run.ended_at)
        assert (row.source_id, row.destination_id, row.sent, row.answered, row.duplicates) == (
            self.athens.pk, self.frankfurt.pk, 580, 568, 0
        )  # fmt: skip
        assert (row.forward_lost, row.forward_p99_ms, row.forward_hops, row.forward_ipdv_ms) == (1, 20.402, 3, 0.041)
        assert (row.backward_lost, row.backward_max_ms, row.backward_reordered_fraction) == (11, 5.611, 0.0)
        assert (row.forward_reordered_fraction, row.backward_ipdv_ms) == (0.0, 0.033)
        assert (row.round_trip_min_ms, row.round_trip_p90_ms, row.round_trip_p99_ms, row.round_trip_max_ms) == (
            25.031, 25.22, 25.61, 26.5
        )  # fmt: skip
        assert (row.sender_error_ms, row.reflector_error_ms, row.own_load) == (0.001, 0.001, False)
        # Nothing came back: no delay, no reflector clock, and its figures say so.
        silent = LatencyInterval.objects.get(run_id=second)
        assert (silent.answered, silent.forward_lost, silent.malformed) == (0, 580, 2)
        assert silent.forward_p50_ms is silent.round_trip_min_ms is silent.backward_hops is None
        assert silent.reflector_synchronized is silent.reflector_error_ms is None
        assert silent.sender_synchronized is False and silent.sender_error_ms == 12.5
        summary = Run.objects.get(id=second).summary
        assert summary["backward_loss_fraction"] is None and summary["clock_error_ms"] is None
        # A path that has only latency results is a path like any other.
        assert list(PathLatestRun.objects.values_list("test_type", "run_id")) == [("latency", uuid.UUID(second))]

    def test_a_broken_result_stores_nothing_and_names_its_field(self) -> None:
        for bad, where, words in bad_results():
            good = answered_result()
            good["id"] = str(uuid.uuid4())
            reply = self.post(good, bad)
            assert reply.status_code == 400, where
            assert reply.json()["errors"][0]["path"] == f"results/1/{where}"
            assert words in reply.json()["errors"][0]["message"]
        assert Run.objects.count() == 0 and LatencyInterval.objects.count() == 0

    def test_a_one_way_only_result_has_no_way_back(self) -> None:
        result = one_way_result()
        assert self.post(result).status_code == 200
        summary = Run.objects.get().summary
        assert summary["forward_lost"] == 1 and summary["forward_loss_fraction"] == pytest.approx(1 / 580)
        assert summary["backward_lost"] is summary["backward_loss_fraction"] is summary["round_trip_p50_ms"] is None
        row = LatencyInterval.objects.get()
        assert (row.answered, row.forward_lost, row.forward_p50_ms) == (579, 1, 20.081)
        assert row.backward_lost is row.backward_p50_ms is row.backward_hops is row.round_trip_min_ms is None

    def test_a_failed_run_is_a_run_without_intervals(self) -> None:
        failed = answered_result()
        del failed["latency"]
        failed.update(status="failed", error="no answer from the reflector's port")
        assert self.post(failed).status_code == 200
        assert Run.objects.get().summary == {} and LatencyInterval.objects.count() == 0

    def test_a_latency_section_under_another_test_type_is_refused(self) -> None:
        # Its interval would be stored under a ping run.
        under_ping = answered_result()
        under_ping["test_type"] = "ping"
        under_ping["ping"] = load_example("valid/ping-ok.json")["results"][0]["ping"]
        reply = self.post(under_ping)
        assert reply.status_code == 400
        paths = {error["path"] for error in reply.json()["errors"]}
        assert paths & {"results/0/latency", "results/0/test_type"}, paths
        assert Run.objects.count() == 0 and LatencyInterval.objects.count() == 0
        # Ingest refuses it itself, whatever the schema lets through.
        window = TimeWindow.at(EXAMPLES_RECORDED_AT)
        found = semantic_errors([under_ping], {self.frankfurt.pk: False}, window)
        assert [(error.path, error.message) for error in found] == [
            ("results/0/latency", "a result of test_type 'ping' carries no latency section")
        ]


class LatencyTargetIngestTests(FathomTestCase):
    """A list mesh's latency test measures a device's own TWAMP-light reflector: its results
    are keyed as a ping's to a target are (no destination, the target in one spelling)."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        add_list_mesh("routers", cls.athens, ["Router1.Example.NET"], "latency", {"port": 4000})

    def post(self, *results: dict[str, Any]) -> Any:
        client = self.agent_client(self.athens, self.athens_credential)
        return client.post(RESULTS_URL, {"schema_version": 1, "results": list(results)}, format="json")

    def device_result(self, target: str = "Router1.Example.NET") -> dict[str, Any]:
        """The answered minute towards a device whose clock is not synchronized (S bit 0)."""
        result = with_latency(answered_result(), port=4000, reflector_clock={"synchronized": False, "error_ms": 0})
        result.update(peer_id=None, target=target, test_id=f"routers/latency:{target}")
        return result

    def test_stored_with_no_destination_and_the_target_in_one_spelling(self) -> None:
        result = self.device_result()
        reply = self.post(result)
        assert reply.status_code == 200, reply.content
        run = Run.objects.get(id=result["id"])
        assert (run.destination_id, run.target, run.params["port"]) == (None, "router1.example.net", 4000)
        assert run.summary["reflector_synchronized"] is False and run.summary["round_trip_p50_ms"] == 25.139
        row = LatencyInterval.objects.get(run_id=result["id"])
        assert (row.source_id, row.destination_id, row.answered) == (self.athens.pk, None, 568)
        assert (row.reflector_synchronized, row.round_trip_p50_ms, row.backward_lost) == (False, 25.139, 11)
        latest = TargetLatestRun.objects.get()
        assert (latest.source_id, latest.target, latest.test_type) == (self.athens.pk, "router1.example.net", "latency")
        assert not PathLatestRun.objects.exists()

    def test_a_target_no_mesh_measures_by_latency_is_refused(self) -> None:
        reply = self.post(self.device_result("198.18.9.9"))
        assert reply.status_code == 400
        [error] = reply.json()["errors"]
        assert error["path"] == "results/0/target" and "no latency test on it" in error["message"]
        assert Run.objects.count() == 0 and LatencyInterval.objects.count() == 0
