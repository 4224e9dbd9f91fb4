"""Meshes as pSConfig templates: every kind validates against pSConfig's published schema,
archives point back at Fathom without a secret, and importing an export gives the same mesh."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from django.conf import settings

from audit.services import Actor
from fathom.testing import FathomTestCase
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.services.writes import save_mesh, snapshot
from perfsonar.nodes import register_node
from perfsonar.psconfig.apply import import_template
from perfsonar.psconfig.exporter import export_mesh
from perfsonar.psconfig.importer import plan_import
from perfsonar.psconfig.template import check_template

ACTOR = Actor.command("exporter")
MESHES: dict[str, dict[str, Any]] = {
    "full": {
        "kind": "mesh",
        "description": "every kind of test",
        "members": [{"agent": name} for name in ("athens", "frankfurt", "ps-one", "ps-two")],
        "tests": [
            {
                "name": "tput",
                "test_type": "throughput",
                "spec": {"duration_s": 15, "parallel": 2, "omit_s": 3},
                "interval_s": 21600,
                "slip_s": 3600,
            },
            {
                "name": "udp",
                "test_type": "throughput",
                "spec": {"udp": True, "bitrate_bps": 10**8, "fq_rate_bps": 2 * 10**8},
                "interval_s": 43200,
            },
            {"name": "ping", "test_type": "ping", "spec": {}, "interval_s": 300},
            {
                "name": "ping-fast",
                "test_type": "ping",
                "spec": {"interval_s": 0.2, "count": 50, "ttl": 64},
                "interval_s": 60,
                "enabled": False,
            },
            {
                "name": "trace",
                "test_type": "trace",
                "spec": {"flows": 4, "max_hops": 40},
                "interval_s": 1800,
                "slip_s": 60,
            },
            {"name": "sweep", "test_type": "flowsweep", "spec": {"flows": 8}, "interval_s": 900},
            {
                "name": "owd",
                "test_type": "latency",
                "spec": {
                    "packet_interval_s": 0.05,
                    "packet_timeout_s": 2.5,
                    "size_bytes": 100,
                    "dscp": 46,
                    "port": 8620,
                    "report_interval_s": 30,
                },
                "interval_s": 30,
            },
        ],
    },
    "oneway": {
        "kind": "disjoint",
        "unidirectional": True,
        "members": [
            {"agent": "athens", "side": "a"},
            {"agent": "ps-one", "side": "b"},
            {"agent": "ps-two", "side": "b"},
        ],
        "tests": [{"name": "ping", "test_type": "ping", "spec": {"count": 5}, "interval_s": 120}],
    },
    "both-ways": {
        "kind": "disjoint",
        "members": [{"agent": "frankfurt", "side": "a"}, {"agent": "ps-two", "side": "b"}],
        "tests": [{"name": "tput", "test_type": "throughput", "spec": {}, "interval_s": 14400, "slip_s": 14400}],
    },
    "to-web": {
        "kind": "list",
        "members": [{"agent": "athens"}, {"agent": "ps-one"}],
        "targets": ["www.example.org", "2001:db8::1"],
        "tests": [
            {"name": "ping", "test_type": "ping", "spec": {}, "interval_s": 300},
            {"name": "trace", "test_type": "trace", "spec": {}, "interval_s": 3600},
        ],
    },
    "switched-off": {
        "kind": "mesh",
        "enabled": False,
        "members": [{"agent": "athens"}, {"agent": "frankfurt"}],
        "tests": [
            {"name": "ping", "test_type": "ping", "spec": {}, "interval_s": 300},
            {"name": "ping-off", "test_type": "ping", "spec": {}, "interval_s": 600, "enabled": False},
        ],
    },
}


class ExportTests(FathomTestCase):
    meshes: ClassVar[dict[str, Mesh]]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        register_node("ps-one", "https://198.18.3.1/pscheduler", "198.18.3.1")
        register_node("ps-two", "https://ps-two.example.net:8443/pscheduler", "198.18.3.2")
        cls.meshes = {"default": Mesh.objects.get(name="default")}
        for name, body in MESHES.items():
            serializer = MeshSerializer(data={"name": name, **body})
            serializer.is_valid(raise_exception=True)
            cls.meshes[name] = save_mesh(serializer, ACTOR)

    def test_every_mesh_kind_exports_a_template_pscheduler_accepts(self) -> None:
        for name, mesh in self.meshes.items():
            with self.subTest(mesh=name):
                template = check_template(export_mesh(mesh))
                assert plan_import(template, []).meshes == []  # parses as a whole, structurally sound

    def test_the_archive_points_at_fathom_and_carries_no_secret(self) -> None:
        template = export_mesh(self.meshes["full"])
        [(name, archive)] = template["archives"].items()
        assert archive["archiver"] == "http"
        assert archive["data"]["_url"] == f"{settings.PUBLIC_URL}/api/v1/perfsonar/archive/"
        assert archive["data"]["op"] == "put"
        assert archive["data"]["_headers"] == {"x-ps-observer": "{% scheduled_by_address %}"}
        assert "fps_" not in json.dumps(template) and "Bearer fps" not in json.dumps(template)
        assert "Authorization" in json.dumps(template["_meta"]["fathom"]["archive_transform"])
        for task_name, task in template["tasks"].items():
            assert task["archives"] == [name]
            assert task["reference"]["fathom"] == {"mesh": "full", "test": task_name}

    def test_tests_become_pscheduler_tests_and_fathom_only_ones_ride_in_meta(self) -> None:
        template = export_mesh(self.meshes["full"])
        assert set(template["tasks"]) == {"tput", "udp", "ping", "ping-fast", "trace", "owd"}
        assert template["tests"]["tput"]["type"] == "throughput"
        assert template["tests"]["tput"]["spec"] == {
            "source": "{% address[0] %}",
            "dest": "{% address[1] %}",
            "source-node": "{% pscheduler_address[0] %}",
            "dest-node": "{% pscheduler_address[1] %}",
            "duration": "PT15S",
            "omit": "PT3S",
            "parallel": 2,
        }
        assert template["tests"]["udp"]["spec"]["schema"] == 7  # fq-rate needs it
        assert template["tests"]["ping-fast"]["type"] == "rtt" and template["tasks"]["ping-fast"]["disabled"]
        assert template["schedules"]["tput"] == {"repeat": "PT6H", "slip": "PT1H", "sliprand": True}
        assert template["schedules"]["ping"] == {"repeat": "PT5M"}
        [sweep] = template["groups"]["full"]["_meta"]["fathom"]["tests"]
        assert sweep["name"] == "sweep" and sweep["test_type"] == "flowsweep"

    def test_a_latency_test_is_a_latencybg_task_without_a_schedule(self) -> None:
        template = export_mesh(self.meshes["full"])
        owd = template["tests"]["owd"]
        assert owd["type"] == "latencybg" and owd["_meta"]["fathom"]["test_type"] == "latency"
        assert owd["spec"] == {
            "source": "{% address[0] %}",
            "dest": "{% address[1] %}",
            "source-node": "{% pscheduler_address[0] %}",
            "packet-interval": 0.05,
            "packet-timeout": 3,  # whole seconds, rounded up
            "packet-padding": 86,  # 100 bytes less OWAMP's 14-byte header
            "ip-tos": 46,  # a DSCP: owping and powstream pass it to -D
        }  # 600 packets every 0.05 s (powstream's count, unwritten) report every 30 s
        # powstream runs without pause, reporting every packet-count packets: no schedule.
        assert "schedule" not in template["tasks"]["owd"] and "owd" not in template["schedules"]
        assert template["tasks"]["owd"]["tools"] == ["powstream"]

    def test_a_latencybg_task_leaves_out_every_pair_without_owampd_at_both_ends(self) -> None:
        template = export_mesh(self.meshes["full"])
        task = template["tasks"]["owd"]
        assert task["group"] == "full-owamp-pairs"
        assert all(template["tasks"][name]["group"] == "full" for name in template["tasks"] if name != "owd")
        pairs = template["groups"]["full-owamp-pairs"]
        assert pairs["_meta"]["fathom"]["pairs_of"] == "full"
        # As pSConfig's mesh group pairs them (base_p2p_group.is_excluded_selectors): each
        # ordered pair of two addresses, less those an exclude names (local first).
        names = [entry["name"] for entry in pairs["addresses"]]
        excluded = {
            (exclude["local-address"]["name"], target["name"])
            for exclude in pairs["excludes"]
            for target in exclude["target-addresses"]
        }
        measured = {(a, b) for a in names for b in names if a != b and (a, b) not in excluded}
        assert measured == {("ps-one", "ps-two"), ("ps-two", "ps-one")}

    def test_a_mesh_of_nodes_alone_measures_latency_in_its_own_group(self) -> None:
        serializer = MeshSerializer(
            data={
                "name": "nodes-only",
                "members": [{"agent": "ps-one"}, {"agent": "ps-two"}],
                "tests": [{"name": "owd", "test_type": "latency", "spec": {}, "interval_s": 60}],
            }
        )
        serializer.is_valid(raise_exception=True)
        template = export_mesh(save_mesh(serializer, ACTOR))
        assert list(template["groups"]) == ["nodes-only"] and template["tasks"]["owd"]["group"] == "nodes-only"

    def test_hosts_say_where_their_pscheduler_is(self) -> None:
        addresses = export_mesh(self.meshes["full"])["addresses"]
        assert addresses["ps-two"] == {
            "address": "198.18.3.2",
            "pscheduler-address": "ps-two.example.net:8443",
            "_meta": {"fathom": {"kind": "perfsonar"}},
        }
        assert "pscheduler-address" not in addresses["ps-one"]
        assert addresses["athens"]["no-agent"] is True  # a Fathom agent runs no pSConfig agent

    def test_a_list_mesh_is_its_members_to_its_targets(self) -> None:
        template = export_mesh(self.meshes["to-web"])
        group = template["groups"]["to-web"]
        assert (group["type"], group["unidirectional"]) == ("disjoint", True)
        assert [entry["name"] for entry in group["b-addresses"]] == ["target:www.example.org", "target:2001:db8::1"]
        assert template["addresses"]["target:2001:db8::1"]["address"] == "2001:db8::1"

    def test_importing_an_export_gives_the_same_mesh(self) -> None:
        for name, mesh in self.meshes.items():
            with self.subTest(mesh=name):
                before = snapshot(mesh)
                template = export_mesh(mesh)
                assert import_template(template, ACTOR).meshes[0]["action"] == "unchanged"
                Mesh.objects.filter(pk=mesh.pk).delete()
                report = import_template(json.loads(json.dumps(template)), ACTOR)
                assert (report.meshes[0]["action"], report.unmapped) == ("create", [])
                assert snapshot(Mesh.objects.get(name=name)) == before

    def test_an_edited_export_imports_the_edit(self) -> None:
        template = export_mesh(self.meshes["full"])
        template["tests"]["tput"]["spec"]["duration"] = "PT25S"
        report = import_template(template, ACTOR)
        assert report.meshes[0]["action"] == "update"
        tput = self.meshes["full"].tests.get(name="tput")
        # The pScheduler edit wins; what only Fathom has (nothing here) and the rest stay.
        assert tput.spec == {"duration_s": 25, "parallel": 2, "omit_s": 3}


@pytest.mark.parametrize("target", ["www.example.org", "198.51.100.9"])
def test_target_names_follow_the_psconfig_name_pattern(target: str) -> None:
    from perfsonar.psconfig.import_model import NAME_PATTERN

    assert NAME_PATTERN.match("target:" + target)
