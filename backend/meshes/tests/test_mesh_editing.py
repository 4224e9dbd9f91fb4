"""Editing meshes through the API: the audit entry every change leaves, the refusal of a change
that overbooks an agent or leaves runs without a slot, the plan preview, history and revert."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, ClassVar

from django.conf import settings
from django.utils import timezone

from accounts.choices import TokenScope
from accounts.services import create_api_token
from audit.models import AuditEntry
from fathom.testing import FathomTestCase
from inventory.models import Agent
from inventory.services import revoke_agent
from meshes.models import Mesh, MeshMember, MeshTest, Slot
from meshes.tests.test_meshes_api import MESHES_URL, throughput_mesh

PREVIEW_URL = f"{MESHES_URL}preview/"
# The default mesh's throughput test: 20 s + 2 s omit + 8 s margin every 6 h, to and from
# each of two peers (athens, frankfurt and geneva are enrolled).
DEFAULT_DEMAND = 4 * 30 / 21600


def written() -> tuple[int, int, int, int, int]:
    """What a refused change must leave as it was."""
    return (
        Mesh.objects.count(),
        MeshMember.objects.count(),
        MeshTest.objects.count(),
        Slot.objects.count(),
        AuditEntry.objects.count(),
    )


def tput(duration_s: int = 5, interval_s: int = 120, slip_s: int = 60, name: str = "tput") -> dict[str, Any]:
    return {
        "name": name,
        "test_type": "throughput",
        "spec": {"duration_s": duration_s},
        "interval_s": interval_s,
        "slip_s": slip_s,
    }


def hourly_mesh(**overrides: Any) -> dict[str, Any]:
    """A mesh whose throughput runs fit easily: 15 s every hour within a 30 min window."""
    return throughput_mesh(**({"tests": [tput(interval_s=3600, slip_s=1800)]} | overrides))


class MeshEditingTestCase(FathomTestCase):
    geneva: ClassVar[Agent]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.geneva, _ = cls.enroll("geneva", "198.18.3.1")

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        reply = self.user_client(self.operator).post(MESHES_URL, data, format="json")
        assert reply.status_code == 201, reply.content
        body: dict[str, Any] = reply.json()
        return body

    def entries(self, mesh: str = "lab") -> list[AuditEntry]:
        pk = Mesh.objects.get(name=mesh).pk
        return list(AuditEntry.objects.filter(object_type="mesh", object_key=str(pk)).order_by("id"))


class MeshAuditTests(MeshEditingTestCase):
    def test_a_created_mesh_is_recorded_with_who_and_what(self) -> None:
        body = self.create(hourly_mesh())
        [entry] = self.entries()
        assert (entry.action, entry.actor_name, entry.via) == ("create", "operator", "session")
        assert entry.object_type == "mesh"
        assert entry.actor == self.operator and entry.object_repr == "lab"
        assert entry.before is None and entry.after == body
        # An empty object (thresholds left unset) has no leaves to list.
        assert entry.changes == {field: [None, value] for field, value in body.items() if value != {}}

    def test_an_update_records_before_after_and_the_changed_fields_only(self) -> None:
        created = self.create(hourly_mesh())
        client = self.user_client(self.owner)
        reply = client.patch(f"{MESHES_URL}lab/", {"description": "lab pair", "unidirectional": True}, format="json")
        assert reply.status_code == 200, reply.content
        entry = self.entries()[-1]
        assert (entry.action, entry.actor_name) == ("update", "owner")
        assert entry.before == created and entry.after == reply.json()
        assert entry.changes == {"description": ["", "lab pair"], "unidirectional": [False, True]}

    def test_a_full_update_of_tests_records_the_tests_as_a_whole(self) -> None:
        created = self.create(hourly_mesh())
        data = hourly_mesh(tests=[tput(duration_s=10, interval_s=3600, slip_s=1800)])
        reply = self.user_client(self.operator).put(f"{MESHES_URL}lab/", data, format="json")
        assert reply.status_code == 200, reply.content
        entry = self.entries()[-1]
        assert entry.action == "update"
        assert entry.changes == {"tests": [created["tests"], reply.json()["tests"]]}
        assert entry.after is not None and entry.after["tests"][0]["spec"] == {"duration_s": 10}

    def test_an_update_that_changes_nothing_leaves_no_entry(self) -> None:
        self.create(hourly_mesh())
        reply = self.user_client(self.operator).patch(f"{MESHES_URL}lab/", {"description": ""}, format="json")
        assert reply.status_code == 200
        assert [entry.action for entry in self.entries()] == ["create"]

    def test_a_deleted_mesh_is_recorded_with_its_last_state(self) -> None:
        created = self.create(hourly_mesh())
        pk = Mesh.objects.get(name="lab").pk
        assert self.user_client(self.operator).delete(f"{MESHES_URL}lab/").status_code == 204
        entry = AuditEntry.objects.filter(object_key=str(pk), object_type="mesh").latest("id")
        assert (entry.action, entry.actor_name, entry.object_repr) == ("delete", "operator", "lab")
        assert entry.before == created and entry.after is None

    def test_a_change_through_an_api_token_names_the_token(self) -> None:
        issued = create_api_token(self.operator, "script", TokenScope.WRITE, None)
        reply = self.client.post(
            MESHES_URL, hourly_mesh(), format="json", HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}"
        )
        assert reply.status_code == 201, reply.content
        [entry] = self.entries()
        assert (entry.actor_name, entry.via) == ("operator", f"token {issued.token.prefix}")

    def test_viewers_read_meshes_and_history_but_change_nothing(self) -> None:
        self.create(hourly_mesh())
        entry = self.entries()[0]
        viewer = self.user_client(self.outsider)
        before = written()
        assert viewer.get(f"{MESHES_URL}lab/history/").status_code == 200
        assert viewer.post(MESHES_URL, hourly_mesh(name="other"), format="json").status_code == 403
        assert viewer.patch(f"{MESHES_URL}lab/", {"description": "x"}, format="json").status_code == 403
        assert viewer.delete(f"{MESHES_URL}lab/").status_code == 403
        assert viewer.post(PREVIEW_URL, {"mesh": hourly_mesh(name="other")}, format="json").status_code == 403
        assert viewer.post(f"{MESHES_URL}lab/revert/", {"entry": entry.pk}, format="json").status_code == 403
        assert self.client.get(f"{MESHES_URL}lab/history/").status_code == 403
        assert written() == before


def one_way(name: str, source: str, destination: str, duration_s: int) -> dict[str, Any]:
    """One exclusive request: source -> destination every 300 s at its period's start, which
    the planner always places when nothing else competes."""
    return {
        "name": name,
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": source, "side": "a"}, {"agent": destination, "side": "b"}],
        "tests": [tput(duration_s=duration_s, interval_s=300, slip_s=0)],
    }


class OverbookingTests(MeshEditingTestCase):
    def test_a_mesh_that_overbooks_its_agents_is_refused_naming_them_and_their_share(self) -> None:
        before = written()
        # 70 s + 2 s omit + 8 s margin every 120 s, both ways: 133.3% of each agent's time.
        reply = self.user_client(self.operator).post(
            MESHES_URL, throughput_mesh(tests=[tput(duration_s=70, slip_s=0)]), format="json"
        )
        assert reply.status_code == 400, reply.content
        messages = reply.json()["tests"]
        overbooked = [m for m in messages if "of its time" in m]
        assert len(overbooked) == 2 and overbooked[0].startswith("athens:") and overbooked[1].startswith("frankfurt:")
        assert "would take 133.9% of its time" in overbooked[0] and "(now 0.6%)" in overbooked[0]
        assert written() == before

    def test_meshes_are_refused_when_together_they_overbook_an_agent(self) -> None:
        Mesh.objects.filter(name="default").delete()
        self.create(one_way("first", "athens", "frankfurt", 200))  # 210 s of every 300 s: 70%
        before = written()
        reply = self.user_client(self.operator).post(
            MESHES_URL, one_way("second", "athens", "geneva", 200), format="json"
        )
        assert reply.status_code == 400, reply.content
        [message] = [m for m in reply.json()["tests"] if "of its time" in m]
        assert message.startswith("athens:") and "would take 140% of its time" in message and "(now 70%)" in message
        assert written() == before

    def test_an_update_that_overbooks_is_refused_and_the_mesh_stays_as_it_was(self) -> None:
        created = self.create(hourly_mesh())
        slots = set(Slot.objects.values_list("id", flat=True))
        before = written()
        reply = self.user_client(self.operator).patch(
            f"{MESHES_URL}lab/", {"description": "busy", "tests": [tput(duration_s=70, slip_s=0)]}, format="json"
        )
        assert reply.status_code == 400 and "133.9%" in reply.json()["tests"][0], reply.content
        assert written() == before and set(Slot.objects.values_list("id", flat=True)) == slots
        assert self.user_client(self.operator).get(f"{MESHES_URL}lab/").json() == created

    def test_a_mesh_that_already_overbooks_can_be_edited_where_the_plan_is_no_concern_and_lowered(self) -> None:
        # Overbooked behind the API's back (as an older Fathom could leave it).
        mesh = Mesh.objects.create(name="lab")
        MeshMember.objects.bulk_create(MeshMember(mesh=mesh, agent=a) for a in (self.athens, self.frankfurt))
        MeshTest.objects.create(mesh=mesh, name="tput", test_type="throughput", spec={"duration_s": 70}, interval_s=120)
        client = self.user_client(self.operator)
        ping = throughput_mesh()["tests"][1]
        url = f"{MESHES_URL}lab/"
        reply = client.patch(url, {"description": "x", "tests": [tput(70, 120, 0), ping]}, format="json")
        assert reply.status_code == 200, reply.content
        # Still more than the agents' time: refused, though less than before.
        reply = client.patch(url, {"tests": [tput(duration_s=60, slip_s=0)]}, format="json")
        assert reply.status_code == 400, reply.content
        reply = client.patch(url, {"tests": [tput(duration_s=20, interval_s=3600, slip_s=600)]}, format="json")
        assert reply.status_code == 200, reply.content

    def test_runs_that_find_no_free_time_are_shown_as_conflicts_not_refused(self) -> None:
        # Every second of athens' planning horizon is already taken by a run planned earlier:
        # not an overbooking (the demand is small), a conflict the preview names and the slots
        # page keeps as unschedulable, with its reason.
        now = timezone.now()
        Slot.objects.create(
            source=self.athens,
            destination=self.geneva,
            test_type="throughput",
            period_start=now,
            start_at=now,
            end_at=now + timedelta(hours=8),
        )
        client = self.user_client(self.operator)
        preview = client.post(PREVIEW_URL, {"mesh": hourly_mesh()}, format="json").json()
        assert preview["ok"] is True
        reasons = [f"{c['test']} {c['source']} -> {c['destination']}: {c['reason']}" for c in preview["conflicts"]]
        assert len(reasons) == 2, reasons
        assert re.match(r"lab/tput athens -> frankfurt: (\d) of \1 runs in the next 6 h find no slot: ", reasons[0])
        assert reasons[0].endswith("sender athens has no 15 s of free exclusive time within the slip window")
        assert reasons[1].startswith("lab/tput frankfurt -> athens: ") and "receiver athens" in reasons[1]
        self.create(hourly_mesh())

    def test_a_disabled_mesh_asks_for_no_time(self) -> None:
        self.create(throughput_mesh(enabled=False, tests=[tput(duration_s=70, slip_s=0)]))


class MeshPreviewTests(MeshEditingTestCase):
    def test_the_preview_shows_each_agents_slots_and_demand_and_writes_nothing(self) -> None:
        before = written()
        reply = self.user_client(self.operator).post(PREVIEW_URL, {"mesh": throughput_mesh()}, format="json")
        assert reply.status_code == 200, reply.content
        body = reply.json()
        assert set(body) == {"ok", "horizon_s", "agents", "conflicts"}
        assert body["ok"] is True and body["conflicts"] == [] and body["horizon_s"] == settings.SLOT_HORIZON_S
        assert [row["agent"] for row in body["agents"]] == ["athens", "frankfurt"]
        athens = body["agents"][0]
        assert set(athens) == {"agent", "slots", "exclusive_s", "demand_before", "demand", "overbooked"}
        assert athens["demand_before"] == round(DEFAULT_DEMAND, 4)
        assert athens["demand"] == round(DEFAULT_DEMAND + 2 * 15 / 120, 4) and athens["overbooked"] is False
        # Two directions, a run every 120 s over 6 h, the first 90 s ahead; plus the default mesh's.
        assert 2 * 178 <= athens["slots"] <= 2 * 180 + 4
        assert athens["exclusive_s"] >= 2 * 178 * 15
        assert written() == before

    def test_the_preview_of_an_overbooking_mesh_is_not_ok(self) -> None:
        reply = self.user_client(self.operator).post(
            PREVIEW_URL,
            {"mesh": throughput_mesh(tests=[tput(duration_s=70, slip_s=0)]), "replaces": None},
            format="json",
        )
        assert reply.status_code == 200, reply.content
        body = reply.json()
        assert body["ok"] is False
        assert [(a["agent"], a["overbooked"], a["demand"]) for a in body["agents"]] == [
            ("athens", True, round(DEFAULT_DEMAND + 2 * 80 / 120, 4)),
            ("frankfurt", True, round(DEFAULT_DEMAND + 2 * 80 / 120, 4)),
        ]
        assert body["conflicts"] and {c["test"] for c in body["conflicts"]} <= {"lab/tput", "default/throughput"}
        conflict = body["conflicts"][0]
        assert set(conflict) == {"test", "source", "destination", "reason"} and "find no slot" in conflict["reason"]

    def test_a_preview_replacing_a_mesh_lists_the_agents_it_leaves(self) -> None:
        three = [{"agent": "athens"}, {"agent": "frankfurt"}, {"agent": "geneva"}]
        self.create(throughput_mesh(members=three, tests=[tput(interval_s=600, slip_s=600)]))
        # Its own name is no clash when it replaces itself; geneva leaves, the runs get longer.
        data = throughput_mesh(tests=[tput(duration_s=10, interval_s=600, slip_s=600)])
        before = written()
        reply = self.user_client(self.operator).post(PREVIEW_URL, {"mesh": data, "replaces": "lab"}, format="json")
        assert reply.status_code == 200, reply.content
        rows = {row["agent"]: row for row in reply.json()["agents"]}
        assert set(rows) == {"athens", "frankfurt", "geneva"}
        # Each agent was in four 15 s runs per 600 s (two peers, both ways); now in two of 20 s.
        assert rows["athens"]["demand_before"] == round(DEFAULT_DEMAND + 4 * 15 / 600, 4)
        assert rows["athens"]["demand"] == round(DEFAULT_DEMAND + 2 * 20 / 600, 4)
        assert rows["geneva"]["demand"] == round(DEFAULT_DEMAND, 4)
        assert written() == before

    def test_a_preview_of_a_mesh_without_agents_lists_none(self) -> None:
        reply = self.user_client(self.operator).post(
            PREVIEW_URL, {"mesh": {"name": "empty", "tests": [tput()]}}, format="json"
        )
        assert reply.status_code == 200 and reply.json()["agents"] == [] and reply.json()["ok"] is True

    def test_bad_preview_bodies_get_field_errors_like_saving(self) -> None:
        self.create(hourly_mesh())
        client = self.user_client(self.operator)
        before = written()
        cases: list[tuple[Any, str, str]] = [
            ({"mesh": throughput_mesh(name="new", tests=[tput() | {"spec": {"bogus": 1}}])}, "tests", "bogus"),
            ({"mesh": throughput_mesh(name="new", tests=[tput(duration_s=200)])}, "tests", "holds both agents"),
            ({"mesh": throughput_mesh(name="new", members=[{"agent": "nowhere"}])}, "members", "nowhere"),
            ({"mesh": hourly_mesh()}, "name", "already exists"),  # a new mesh may not take lab's name
            ({"mesh": hourly_mesh(), "replaces": "nowhere"}, "replaces", "nowhere"),
            ({"mesh": "lab"}, "mesh", "dictionary"),
            ({"mesh": hourly_mesh(name="new"), "bogus": 1}, "bogus", "unknown field"),
            ({}, "mesh", "required"),
            ([hourly_mesh(name="new")], "non_field_errors", "dictionary"),
            ({"mesh": hourly_mesh(name="preview")}, "name", "endpoint"),
        ]
        for data, field, expected in cases:
            reply = client.post(PREVIEW_URL, data, format="json")
            assert reply.status_code == 400, (data, reply.content)
            assert field in reply.json() and expected in str(reply.json()[field]), (field, reply.content)
        assert written() == before


class MeshHistoryTests(MeshEditingTestCase):
    def test_history_lists_the_meshes_changes_newest_first_across_a_rename(self) -> None:
        self.create(hourly_mesh())
        self.create(hourly_mesh(name="other"))
        client = self.user_client(self.operator)
        assert client.patch(f"{MESHES_URL}lab/", {"description": "one"}, format="json").status_code == 200
        assert client.patch(f"{MESHES_URL}lab/", {"name": "lab2"}, format="json").status_code == 200
        reply = self.user_client(self.outsider).get(f"{MESHES_URL}lab2/history/")
        assert reply.status_code == 200
        history = reply.json()
        assert [(e["action"], e["object_repr"]) for e in history] == [
            ("update", "lab2"),
            ("update", "lab"),
            ("create", "lab"),
        ]
        assert history[0]["changes"] == {"name": ["lab", "lab2"]}
        assert set(history[0]) == {
            "id",
            "at",
            "actor_name",
            "via",
            "action",
            "object_type",
            "object_key",
            "object_repr",
            "before",
            "after",
            "changes",
        }
        assert self.user_client(self.outsider).get(f"{MESHES_URL}nowhere/history/").status_code == 404


class MeshRevertTests(MeshEditingTestCase):
    def test_revert_restores_the_state_before_an_entry_replans_and_is_recorded(self) -> None:
        created = self.create(hourly_mesh())
        client = self.user_client(self.operator)
        changed = hourly_mesh(description="longer runs", tests=[tput(duration_s=30, interval_s=3600, slip_s=1800)])
        assert client.put(f"{MESHES_URL}lab/", changed, format="json").status_code == 200
        assert {slot.spec["duration_s"] for slot in Slot.objects.filter(mesh_test__mesh__name="lab")} == {30}
        update = self.entries()[-1]
        reply = self.user_client(self.owner).post(f"{MESHES_URL}lab/revert/", {"entry": update.pk}, format="json")
        assert reply.status_code == 200, reply.content
        assert reply.json() == created
        assert {slot.spec["duration_s"] for slot in Slot.objects.filter(mesh_test__mesh__name="lab")} == {5}
        revert = self.entries()[-1]
        assert (revert.action, revert.actor_name) == ("revert", "owner")
        assert revert.before == update.after and revert.after == created
        assert revert.changes["description"] == ["longer runs", ""]

    def test_revert_restores_removed_members_and_tests(self) -> None:
        created = self.create(
            throughput_mesh(
                members=[{"agent": "athens"}, {"agent": "frankfurt"}, {"agent": "geneva", "side": "b"}],
                tests=[tput(interval_s=3600, slip_s=1800), throughput_mesh()["tests"][1]],
            )
        )
        client = self.user_client(self.operator)
        reply = client.patch(f"{MESHES_URL}lab/", {"members": [{"agent": "athens"}], "tests": []}, format="json")
        assert reply.status_code == 200, reply.content
        reply = client.post(f"{MESHES_URL}lab/revert/", {"entry": self.entries()[-1].pk}, format="json")
        assert reply.status_code == 200 and reply.json() == created, reply.content

    def test_revert_is_refused_when_it_cannot_be_done_and_changes_nothing(self) -> None:
        self.create(throughput_mesh(members=[{"agent": "athens"}, {"agent": "geneva"}], tests=[]))
        self.create(hourly_mesh(name="other"))
        client = self.user_client(self.operator)
        assert client.patch(f"{MESHES_URL}lab/", {"members": [{"agent": "athens"}]}, format="json").status_code == 200
        create, update = self.entries()
        foreign = self.entries("other")[0]
        revoke_agent(self.geneva)  # a member of the state before `update`
        before = written()
        cases: list[tuple[Any, str, str]] = [
            ({"entry": foreign.pk}, "entry", "not a change of mesh lab"),
            ({"entry": create.pk}, "entry", "no earlier state"),
            ({"entry": 10**12}, "entry", "not a change of mesh lab"),
            ({"entry": update.pk}, "entry", "members.1.agent"),
            ({"entry": "first"}, "entry", "valid integer"),
            ({"entry": 0}, "entry", "greater than or equal to 1"),
            ({"entry": 2**70}, "entry", "less than or equal to"),
            ({}, "entry", "required"),
            ({"entry": update.pk, "force": True}, "force", "unknown field"),
        ]
        for data, field, expected in cases:
            reply = client.post(f"{MESHES_URL}lab/revert/", data, format="json")
            assert reply.status_code == 400, (data, reply.content)
            assert expected in str(reply.json()[field]), (data, reply.content)
        assert written() == before
        assert client.post(f"{MESHES_URL}nowhere/revert/", {"entry": update.pk}, format="json").status_code == 404

    def test_a_revert_that_would_overbook_is_refused(self) -> None:
        Mesh.objects.filter(name="default").delete()
        self.create(one_way("lab", "athens", "frankfurt", 200))  # 70% of the pair's time
        client = self.user_client(self.operator)
        reply = client.patch(f"{MESHES_URL}lab/", {"tests": [tput(interval_s=300, slip_s=0)]}, format="json")
        assert reply.status_code == 200, reply.content
        update = self.entries()[-1]
        # Another mesh takes half the pair's time meanwhile.
        second = Mesh.objects.create(name="second")
        MeshMember.objects.bulk_create(MeshMember(mesh=second, agent=a) for a in (self.athens, self.frankfurt))
        MeshTest.objects.create(
            mesh=second, name="tput", test_type="throughput", spec={"duration_s": 20}, interval_s=120, slip_s=120
        )
        before = written()
        reply = client.post(f"{MESHES_URL}lab/revert/", {"entry": update.pk}, format="json")
        assert reply.status_code == 400, reply.content
        [message, *_] = reply.json()["entry"]
        assert message.startswith(f"mesh lab cannot be restored as it was before entry {update.pk}: tests: athens:")
        assert "would take 120% of its time" in message
        assert written() == before


class BadMeshInputTests(MeshEditingTestCase):
    """Every bad value gets a field-level 400, on a create as on an update, and writes nothing."""

    def test_bad_values_are_refused_field_by_field_on_create_and_update(self) -> None:
        self.create(hourly_mesh())
        client = self.user_client(self.operator)
        cases: list[tuple[dict[str, Any], str, str]] = [
            ({"tests": [tput() | {"spec": {"duration_s": 5, "bogus": 1}}]}, "tests", "unknown option"),
            ({"tests": [tput(duration_s=200, interval_s=120)]}, "tests", "holds both agents for 210 s"),
            ({"members": [{"agent": "nowhere"}]}, "members", "nowhere"),
            ({"members": [{"agent": "athens", "side": "c"}]}, "members", "not a valid choice"),
            ({"tests": [tput(duration_s=70, slip_s=0)]}, "tests", "% of its time, more than it has"),
            ({"name": "preview"}, "name", "endpoint"),
            # A member or a test is given whole, in a PATCH too.
            ({"members": [{"side": "a"}]}, "members", "required"),
            ({"tests": [{"name": "tput", "interval_s": 600}]}, "tests", "required"),
        ]
        before = written()
        for change, field, expected in cases:
            for method, url, data in (
                ("post", MESHES_URL, hourly_mesh(name="new") | change),
                ("patch", f"{MESHES_URL}lab/", change),
            ):
                reply = getattr(client, method)(url, data, format="json")
                assert reply.status_code == 400, (method, change, reply.content)
                assert expected in str(reply.json()[field]), (method, change, reply.content)
        assert written() == before

    def test_a_revoked_agent_is_no_member(self) -> None:
        revoke_agent(self.geneva)
        before = written()
        reply = self.user_client(self.operator).post(
            MESHES_URL, hourly_mesh(members=[{"agent": "athens"}, {"agent": "geneva"}]), format="json"
        )
        assert reply.status_code == 400 and "geneva" in str(reply.json()["members"]), reply.content
        assert written() == before
