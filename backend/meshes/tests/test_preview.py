"""The pure parts of a mesh change's preview: its effect on a trial plan, and its wording;
and the draft a serializer's validated data makes."""

from __future__ import annotations

from typing import Any

from django.test import SimpleTestCase

from fathom.testing import FathomTestCase
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.preview import draft_mesh, percent, plan_effect, span
from meshes.services.writes import flat_messages
from meshes.slots import Placement, SlotRequest
from meshes.tests.test_meshes_api import throughput_mesh


def request(key: str, source: str, destination: str, duration_s: float, slip_s: float = 0) -> SlotRequest:
    return SlotRequest(key, source, destination, 100, duration_s, slip_s, anchor_s=0)


class PlanEffectTests(SimpleTestCase):
    def test_a_new_request_adds_its_runs_and_its_demand(self) -> None:
        new = request("new", "a", "b", 10)
        effect = plan_effect([], [new], {"new"}, [], [], 0, 0, 1000)
        assert effect.demand_before == {} and effect.demand == {"a": 0.1, "b": 0.1}
        assert effect.slots == {"a": 10, "b": 10} and effect.exclusive_s == {"a": 100, "b": 100}
        assert effect.unplaceable == [] and effect.periods == {"new": 10}

    def test_runs_already_planned_count_within_the_horizon_only(self) -> None:
        kept = [Placement("old", "a", "c", -100, -5, 5), Placement("old", "a", "c", 900, 995, 1005)]
        effect = plan_effect([], [], set(), kept, kept, 0, 10, 1000)
        assert effect.slots == {"a": 2, "c": 2} and effect.exclusive_s == {"a": 10, "c": 10}

    def test_the_changes_own_runs_without_time_are_its_conflicts(self) -> None:
        busy = [Placement("other", "a", "c", 0, 0, 2000)]
        effect = plan_effect([], [request("new", "a", "b", 10)], {"new"}, busy, busy, 0, 0, 1000)
        assert len(effect.unplaceable) == 10 and {run.key for run in effect.unplaceable} == {"new"}
        assert effect.unplaceable[0].reason.startswith("sender a has no 10 s")

    def test_another_requests_runs_count_only_when_the_change_takes_their_time(self) -> None:
        other = request("other", "a", "c", 50, slip_s=10)
        # The new runs have no slip, so they are placed first and take the other's window.
        new = request("new", "a", "b", 60)
        effect = plan_effect([other], [other, new], {"new"}, [], [], 0, 0, 1000)
        assert len(effect.unplaceable) == 10 and {run.key for run in effect.unplaceable} == {"other"}
        assert effect.demand == {"a": 1.1, "b": 0.6, "c": 0.5} and effect.demand_before == {"a": 0.5, "c": 0.5}
        # Runs that found no time without the change either are none of its doing.
        blocked = [Placement("x", "a", "d", 0, 0, 2000)]
        effect = plan_effect([other], [other], set(), blocked, blocked, 0, 0, 1000)
        assert effect.unplaceable == []

    def test_the_same_requests_in_another_order_get_the_same_plan(self) -> None:
        requests = [request(f"r{i}", "a", f"p{i}", 10, slip_s=50) for i in range(8)]
        first = plan_effect([], requests, {r.key for r in requests}, [], [], 0, 0, 1000)
        second = plan_effect([], requests[::-1], {r.key for r in requests}, [], [], 0, 0, 1000)
        assert first == second


class WordingTests(SimpleTestCase):
    def test_percentages_round_up_so_an_overbooked_agent_never_reads_100(self) -> None:
        assert [percent(x) for x in (0.0, 0.7, 1.25, 1.0004, 0.3333)] == ["0%", "70%", "125%", "100.1%", "33.4%"]

    def test_spans(self) -> None:
        assert [span(x) for x in (21600, 86400, 600, 90, 0.5)] == ["6 h", "1 d", "10 min", "90 s", "0.5 s"]

    def test_nested_field_errors_flatten_to_dotted_lines(self) -> None:
        detail: Any = {"members": [{}, {"agent": ["no such agent"]}], "non_field_errors": ["bad"], "name": ["taken"]}
        assert flat_messages(detail) == ["members.1.agent: no such agent", "bad", "name: taken"]
        assert flat_messages(["plain"]) == ["plain"]


class DraftMeshTests(FathomTestCase):
    def test_a_new_mesh_without_tests_gets_the_default_tests(self) -> None:
        data = throughput_mesh()
        del data["tests"]
        serializer = MeshSerializer(data=data)
        assert serializer.is_valid(), serializer.errors
        draft = draft_mesh(serializer.validated_data, None)
        assert [test.name for test in draft.tests] == ["throughput", "ping", "flowsweep", "trace"]
        assert all(test.pk is None for test in draft.tests)
        assert [(agent.name, side) for agent, side in draft.members] == [("athens", "a"), ("frankfurt", "a")]
        assert (draft.kind, draft.all_agents, draft.enabled, draft.targets) == ("mesh", False, True, [])

    def test_a_partial_update_keeps_what_it_leaves_out_and_the_tests_it_names(self) -> None:
        serializer = MeshSerializer(data=throughput_mesh())
        assert serializer.is_valid(), serializer.errors
        mesh = serializer.save()
        tput = mesh.tests.get(name="tput")
        tput.enabled = False
        tput.save()
        tests = [{"name": "tput", "test_type": "throughput", "interval_s": 600}]
        update = MeshSerializer(Mesh.objects.get(pk=mesh.pk), data={"tests": tests}, partial=True)
        assert update.is_valid(), update.errors
        draft = draft_mesh(update.validated_data, mesh)
        [test] = draft.tests
        # A test's fields left out of a partial update stay as they were, as the update writes them.
        assert (test.pk, test.interval_s, test.spec, test.slip_s) == (tput.pk, 600, {"duration_s": 5}, 60)
        assert test.enabled is False
        assert [agent.name for agent, _ in draft.members] == ["athens", "frankfurt"]
