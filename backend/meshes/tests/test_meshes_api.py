from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from fathom.testing import FathomTestCase
from meshes.models import Mesh, MeshTest, Slot

MESHES_URL = "/api/v1/meshes/"


def throughput_mesh(**overrides: Any) -> dict[str, Any]:
    mesh = {
        "name": "lab",
        "kind": "mesh",
        "members": [{"agent": "athens"}, {"agent": "frankfurt"}],
        "tests": [
            {"name": "tput", "test_type": "throughput", "spec": {"duration_s": 5}, "interval_s": 120, "slip_s": 60},
            {"name": "ping", "test_type": "ping", "spec": {"count": 5}, "interval_s": 30},
        ],
    }
    mesh.update(overrides)
    return mesh


class MeshApiTests(FathomTestCase):
    def test_operator_creates_a_mesh_and_its_slots_are_planned_at_once(self) -> None:
        reply = self.user_client(self.operator).post(MESHES_URL, throughput_mesh(), format="json")
        assert reply.status_code == 201, reply.content
        body = reply.json()
        assert [m["agent"] for m in body["members"]] == ["athens", "frankfurt"]
        assert {t["name"] for t in body["tests"]} == {"tput", "ping"}
        slots = Slot.objects.filter(mesh_test__mesh__name="lab", state="planned")
        assert slots.filter(source=self.athens).exists() and slots.filter(source=self.frankfurt).exists()
        slot = slots.first()
        assert slot is not None and slot.spec["duration_s"] == 5 and slot.end_at > slot.start_at

    def test_a_mesh_without_tests_gets_perfsonars_defaults(self) -> None:
        reply = self.user_client(self.operator).post(MESHES_URL, throughput_mesh(tests=None), format="json")
        assert reply.status_code == 400  # null is not a list of tests
        data = throughput_mesh()
        del data["tests"]
        reply = self.user_client(self.operator).post(MESHES_URL, data, format="json")
        assert reply.status_code == 201, reply.content
        tests = {t.name: (t.interval_s, t.spec) for t in MeshTest.objects.filter(mesh__name="lab")}
        assert tests["throughput"] == (21600, {"duration_s": 20}) and tests["ping"] == (300, {"count": 10})
        assert tests["flowsweep"][0] == 900 and tests["trace"][0] == 1800

    def test_bad_meshes_are_refused_field_by_field_and_change_nothing(self) -> None:
        client = self.user_client(self.operator)
        meshes_before, slots_before = Mesh.objects.count(), Slot.objects.count()
        tput = throughput_mesh()["tests"][0]
        cases: list[tuple[dict[str, Any], str]] = [
            (throughput_mesh(tests=[tput | {"spec": {"duration_s": -5}}]), "duration_s"),
            (throughput_mesh(tests=[tput | {"spec": {"duration_s": 5, "bogus": 1}}]), "bogus"),
            (throughput_mesh(tests=[tput | {"spec": {"parallel": 1000}}]), "parallel"),
            (throughput_mesh(tests=[tput | {"spec": {"udp": True}}]), "bitrate_bps"),
            (throughput_mesh(tests=[tput | {"slip_s": 500}]), "slip_s"),
            (throughput_mesh(tests=[tput | {"interval_s": 12, "slip_s": 0}]), "interval_s"),
            (throughput_mesh(tests=[tput, tput]), "unique"),
            (throughput_mesh(members=[{"agent": "nowhere"}]), "nowhere"),
            (throughput_mesh(members=[{"agent": "athens"}, {"agent": "athens"}]), "twice"),
            (throughput_mesh(kind="list", targets=["198.18.9.9"]), "throughput needs an agent"),
            (throughput_mesh(kind="list", tests=[]), "external target"),
            (throughput_mesh(targets=["not a host!"]), "neither an IP address"),
            (throughput_mesh(kind="disjoint", all_agents=True, members=[]), "disjoint"),
            (throughput_mesh(tests=[tput | {"test_type": "owamp"}]), "owamp"),
            # A latency test runs back to back: its interval is each result's length.
            (
                throughput_mesh(tests=[{"name": "owd", "test_type": "latency", "interval_s": 300}]),
                "must equal spec.report_interval_s (60)",
            ),
            (
                throughput_mesh(
                    tests=[
                        {
                            "name": "sweep",
                            "test_type": "flowsweep",
                            "interval_s": 900,
                            "spec": {"flows": 64, "samples_per_flow": 100, "interval_ms": 100},
                        }
                    ]
                ),
                "at most 600",
            ),
        ]
        for data, expected in cases:
            reply = client.post(MESHES_URL, data, format="json")
            assert reply.status_code == 400, (expected, reply.content)
            assert expected in reply.content.decode(), (expected, reply.content)
        assert Mesh.objects.count() == meshes_before and Slot.objects.count() == slots_before

    def test_a_latency_test_may_measure_to_agents_and_list_targets(self) -> None:
        owd = {"name": "owd", "test_type": "latency", "interval_s": 30, "spec": {"report_interval_s": 30}}
        client = self.user_client(self.operator)
        reply = client.post(MESHES_URL, throughput_mesh(tests=[owd]), format="json")
        assert reply.status_code == 201, reply.content
        # A device's TWAMP-light reflector answers as an agent's does, at the port it listens on.
        device = owd | {"spec": {"report_interval_s": 30, "port": 4000}}
        routers = throughput_mesh(name="routers", kind="list", targets=["198.18.9.9"], tests=[device])
        reply = client.post(MESHES_URL, routers, format="json")
        assert reply.status_code == 201, reply.content
        assert reply.json()["tests"][0]["spec"] == {"report_interval_s": 30, "port": 4000}
        assert Slot.objects.filter(mesh_test__test_type="latency").count() == 0  # a background test

    def test_only_operators_change_meshes_and_only_users_read_them(self) -> None:
        assert self.client.get(MESHES_URL).status_code == 403
        assert self.user_client(self.outsider).get(MESHES_URL).status_code == 200
        assert self.user_client(self.outsider).post(MESHES_URL, throughput_mesh(), format="json").status_code == 403
        assert self.user_client(self.outsider).delete(f"{MESHES_URL}default/").status_code == 403
        assert Mesh.objects.filter(name="default").exists()

    def test_editing_a_mesh_replans_its_future_slots(self) -> None:
        # Alone, the pair's two tight windows always fit; the default mesh's runs, planned at
        # random, could take a window's only gap, and an edit that leaves a run without a
        # slot is refused.
        Mesh.objects.filter(name="default").delete()
        client = self.user_client(self.operator)
        client.post(MESHES_URL, throughput_mesh(), format="json")
        before = set(Slot.objects.filter(mesh_test__mesh__name="lab").values_list("id", flat=True))
        tests = throughput_mesh()["tests"]
        tests[0]["spec"] = {"duration_s": 10}
        reply = client.patch(f"{MESHES_URL}lab/", {"tests": tests}, format="json")
        assert reply.status_code == 200, reply.content
        after = Slot.objects.filter(mesh_test__mesh__name="lab")
        assert before.isdisjoint(after.values_list("id", flat=True))
        assert {slot.spec["duration_s"] for slot in after} == {10}

    def test_deleting_a_mesh_drops_its_future_slots_and_keeps_history(self) -> None:
        client = self.user_client(self.operator)
        client.post(MESHES_URL, throughput_mesh(), format="json")
        past = Slot.objects.filter(mesh_test__mesh__name="lab").first()
        assert past is not None
        Slot.objects.filter(pk=past.pk).update(
            start_at=timezone.now() - timedelta(hours=1), end_at=timezone.now() - timedelta(minutes=59), state="ok"
        )
        planned_before = Slot.objects.filter(mesh_test__mesh__name="lab", state="planned").count()
        assert planned_before > 0
        assert client.delete(f"{MESHES_URL}lab/").status_code == 204
        # The run that happened stays as history; nothing planned is left, orphaned or not.
        assert list(Slot.objects.filter(mesh_test__isnull=True).values_list("pk", "state")) == [(past.pk, "ok")]
        assert not Slot.objects.filter(state="planned", mesh_test__isnull=True).exists()

    def test_mesh_list_query_count_does_not_grow_with_meshes(self) -> None:
        client = self.user_client(self.owner)
        tput, ping = throughput_mesh()["tests"]
        for name in ("a", "b", "c"):
            # Hourly runs: three meshes of the same two agents fit their exclusive time.
            data = throughput_mesh(name=name, tests=[tput | {"interval_s": 3600, "slip_s": 1800}, ping])
            assert client.post(MESHES_URL, data, format="json").status_code == 201
        with self.assertNumQueries(6):  # session, user, meshes, members, their agents, tests
            reply = client.get(MESHES_URL)
        assert len(reply.json()) == 4
