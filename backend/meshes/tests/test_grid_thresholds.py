"""The grid's thresholds of a mesh: operators write them, everyone signed in reads them, a
malformed set is refused whole, and unset values take their defaults."""

from __future__ import annotations

from typing import Any
from unittest import mock

from django.test import SimpleTestCase

from audit.choices import AuditObject
from audit.models import AuditEntry
from fathom.testing import FathomTestCase
from meshes.models import Mesh, MeshTest
from meshes.services.slot_planning import replan_mesh
from meshes.thresholds import DEFAULTS, STALE_FLOOR_S, effective_thresholds, threshold_errors

URL = "/api/v1/meshes/lab/"


class ThresholdsApiTests(FathomTestCase):
    def setUp(self) -> None:
        self.mesh = Mesh.objects.create(name="lab", thresholds={"rtt_warn_ms": 80})
        MeshTest.objects.create(mesh=self.mesh, name="ping", test_type="ping", spec={"count": 5}, interval_s=60)

    def patch(self, thresholds: Any, user: Any = None) -> Any:
        return self.user_client(user or self.operator).patch(URL, {"thresholds": thresholds}, format="json")

    def test_an_operator_sets_them_and_everyone_reads_them(self) -> None:
        wanted = {"fraction_good": 0.8, "fraction_bad": 0.3, "rtt_warn_ms": 20, "rtt_crit_ms": 60, "stale_after_s": 900}
        reply = self.patch(wanted)
        assert reply.status_code == 200, reply.content
        assert reply.json()["thresholds"] == wanted
        self.mesh.refresh_from_db()
        assert self.mesh.thresholds == wanted
        assert self.user_client(self.outsider).get(URL).json()["thresholds"] == wanted

    def test_a_viewer_cannot_set_them(self) -> None:
        assert self.patch({"rtt_warn_ms": 10}, user=self.outsider).status_code == 403
        self.mesh.refresh_from_db()
        assert self.mesh.thresholds == {"rtt_warn_ms": 80}

    def test_they_are_written_whole_and_an_empty_set_restores_the_defaults(self) -> None:
        assert self.patch({"loss_warn": 0.002}).json()["thresholds"] == {"loss_warn": 0.002}
        assert self.patch({}).json()["thresholds"] == {}

    def test_an_edit_that_leaves_them_out_keeps_them(self) -> None:
        reply = self.user_client(self.operator).patch(URL, {"description": "lab pair"}, format="json")
        assert reply.status_code == 200, reply.content
        assert reply.json()["thresholds"] == {"rtt_warn_ms": 80}

    def test_a_threshold_change_is_audited_but_does_not_re_plan_the_mesh(self) -> None:
        # Re-planning waits for the planner's lock, which a busy beat task holds for seconds.
        with mock.patch("meshes.services.writes.replan_mesh", wraps=replan_mesh) as replan:
            assert self.patch({"rtt_warn_ms": 5}).status_code == 200
            assert replan.call_count == 0
            members = {"members": [], "all_agents": True}
            assert self.user_client(self.operator).patch(URL, members, format="json").status_code == 200
            assert replan.call_count == 1
        changes = AuditEntry.objects.filter(object_type=AuditObject.MESH, object_key=str(self.mesh.pk))
        assert changes.count() == 2
        first = changes.order_by("id").first()
        assert first is not None and first.after is not None and first.after["thresholds"] == {"rtt_warn_ms": 5}

    def test_malformed_thresholds_are_refused_with_a_reason_and_nothing_is_saved(self) -> None:
        cases: list[tuple[Any, str, str]] = [
            ({"fraction_good": 0.5, "fraction_bad": 0.7}, "fraction_bad", "must be below fraction_good (0.5)"),
            ({"fraction_bad": 0.95}, "fraction_bad", "must be below fraction_good (0.9)"),
            ({"fraction_good": 1.5}, "fraction_good", "less than or equal to 1"),
            ({"rtt_warn_ms": 300, "rtt_crit_ms": 200}, "rtt_warn_ms", "must be below rtt_crit_ms (200)"),
            ({"rtt_warn_ms": 0, "rtt_crit_ms": 10}, "rtt_warn_ms", "must be above 0"),
            ({"rate_bad_bps": -1}, "rate_bad_bps", "must be above 0"),
            ({"loss_crit": 2}, "loss_crit", "less than or equal to 1"),
            ({"loss_warn": 0.05, "loss_crit": 0.05}, "loss_warn", "must be below loss_crit"),
            ({"stale_after_s": 0}, "stale_after_s", "greater than or equal to 1"),
            ({"stale_after_s": "soon"}, "stale_after_s", "valid integer"),
            ({"rtt_warn_ms": "fast"}, "rtt_warn_ms", "valid number"),
            ({"red": 0.1}, "red", "unknown field"),
        ]
        for thresholds, key, message in cases:
            with self.subTest(thresholds=thresholds):
                reply = self.patch(thresholds)
                assert reply.status_code == 400, reply.content
                assert message in " ".join(reply.json()["thresholds"][key])
        reply = self.patch([0.9, 0.5])
        assert reply.status_code == 400 and "thresholds" in reply.json()
        self.mesh.refresh_from_db()
        assert self.mesh.thresholds == {"rtt_warn_ms": 80}


class EffectiveThresholdsTests(SimpleTestCase):
    def test_unset_values_take_their_defaults(self) -> None:
        effective = effective_thresholds({"loss_crit": 0.05}, [])
        assert effective.loss_crit == 0.05 and effective.fraction_good == DEFAULTS.fraction_good

    def test_stale_after_defaults_to_three_of_the_longest_interval_and_never_under_an_hour(self) -> None:
        assert effective_thresholds({}, []).stale_after_s == STALE_FLOOR_S
        assert effective_thresholds({}, [60, 300]).stale_after_s == STALE_FLOOR_S
        assert effective_thresholds({}, [60, 6 * 3600]).stale_after_s == 18 * 3600
        assert effective_thresholds({"stale_after_s": 600}, [6 * 3600]).stale_after_s == 600

    def test_pairs_are_checked_against_the_defaults_of_what_is_unset(self) -> None:
        assert threshold_errors({}) == {}
        assert set(threshold_errors({"rtt_warn_ms": 400})) == {"rtt_warn_ms"}
        assert threshold_errors({"rtt_warn_ms": 400, "rtt_crit_ms": 500}) == {}
