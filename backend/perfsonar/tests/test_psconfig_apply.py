"""Writing pSConfig imports: meshes through the meshes' own validation, plan check and audit;
importing again updates instead of duplicating; a dry run and a bad template write nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from audit.choices import AuditObject
from audit.models import AuditEntry
from audit.services import Actor
from fathom.testing import FathomTestCase
from inventory.choices import AgentKind
from inventory.models import Agent
from meshes.models import Mesh, MeshMember, MeshTest, Slot
from perfsonar.models import Node
from perfsonar.nodes import register_node
from perfsonar.psconfig.apply import import_template
from perfsonar.psconfig.template import TemplateError, load_file

FIXTURES = Path(__file__).parent / "fixtures" / "psconfig"
ACTOR = Actor.command("importer")


def backbone(**schedule: Any) -> dict[str, Any]:
    """athens, frankfurt (Fathom agents) and ps-one (a node), by address."""
    return {
        "addresses": {
            "athens.example.net": {"address": "198.18.1.1"},
            "frankfurt.example.net": {"address": "198.18.2.1"},
            "ps-one": {"address": "198.18.3.1"},
        },
        "groups": {
            "backbone": {
                "type": "mesh",
                "addresses": [{"name": "athens.example.net"}, {"name": "frankfurt.example.net"}, {"name": "ps-one"}],
            }
        },
        "tests": {
            "rtt": {"type": "rtt", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}", "count": 20}},
            "tput": {
                "type": "throughput",
                "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}", "duration": "PT15S"},
            },
        },
        "schedules": {
            "often": {"repeat": "PT5M", "slip": "PT1M", "sliprand": True} | schedule,
            "rarely": {"repeat": "PT6H", "slip": "PT6H", "sliprand": True},
        },
        "tasks": {
            "ping": {"group": "backbone", "test": "rtt", "schedule": "often"},
            "throughput": {"group": "backbone", "test": "tput", "schedule": "rarely"},
        },
    }


def counts() -> dict[str, int]:
    return {
        "meshes": Mesh.objects.count(),
        "members": MeshMember.objects.count(),
        "tests": MeshTest.objects.count(),
        "agents": Agent.objects.count(),
        "nodes": Node.objects.count(),
        "audit": AuditEntry.objects.count(),
        "slots": Slot.objects.count(),
    }


class ImportTests(FathomTestCase):
    ps_one: ClassVar[Node]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.ps_one = register_node("ps-one", "https://198.18.3.1/pscheduler", "198.18.3.1")

    def test_an_import_creates_the_mesh_through_the_audited_path(self) -> None:
        report = import_template(backbone(), ACTOR)
        [mesh_report] = report.meshes
        assert (mesh_report["name"], mesh_report["action"], mesh_report["kind"]) == ("backbone", "create", "mesh")
        assert {node["action"] for node in report.nodes} == {"matched"}
        mesh = Mesh.objects.get(name="backbone")
        assert sorted(mesh.members.values_list("agent__name", flat=True)) == ["athens", "frankfurt", "ps-one"]
        tests = {test.name: test for test in mesh.tests.all()}
        assert (tests["ping"].test_type, tests["ping"].spec, tests["ping"].interval_s, tests["ping"].slip_s) == (
            "ping",
            {"count": 20},
            300,
            60,
        )
        assert (tests["throughput"].spec, tests["throughput"].interval_s) == ({"duration_s": 15}, 6 * 3600)
        entry = AuditEntry.objects.get(object_type=AuditObject.MESH, object_key=str(mesh.pk))
        assert (entry.action, entry.actor_name, entry.via) == ("create", "importer", "command")
        assert Slot.objects.filter(mesh_test=tests["throughput"]).exists()  # planned at once

    def test_importing_again_updates_instead_of_duplicating(self) -> None:
        import_template(backbone(), ACTOR)
        audit = AuditEntry.objects.count()
        again = import_template(backbone(), ACTOR)
        assert again.meshes[0]["action"] == "unchanged"
        assert AuditEntry.objects.count() == audit
        changed = import_template(backbone(repeat="PT10M"), ACTOR)
        assert changed.meshes[0]["action"] == "update"
        assert Mesh.objects.filter(name="backbone").count() == 1
        assert MeshTest.objects.get(mesh__name="backbone", name="ping").interval_s == 600
        assert AuditEntry.objects.filter(object_type=AuditObject.MESH, action="update").count() == 1

    def test_a_dry_run_reports_the_import_and_writes_nothing(self) -> None:
        before = counts()
        report = import_template(backbone(), ACTOR, dry_run=True)
        assert report.dry_run and report.meshes[0]["action"] == "create"
        assert counts() == before

    def test_a_dry_run_of_a_sample_registers_nobody(self) -> None:
        before = counts()
        template = load_file(FIXTURES / "psconfig-example-2-testbed.json")
        report = import_template(template, ACTOR, dry_run=True, register_unknown=True)
        assert {mesh["action"] for mesh in report.meshes} == {"create"}
        # Seven throughput and trace groups, and the testbed's latencybg hosts as a latency mesh.
        assert len(report.meshes) == 8 and {node["action"] for node in report.nodes} == {"register"}
        assert {test["test_type"] for mesh in report.meshes for test in mesh["tests"]} >= {"latency"}
        assert counts() == before

    def test_unknown_hosts_are_registered_as_nodes_when_asked(self) -> None:
        template = backbone()
        template["addresses"]["ps-new"] = {"address": "198.18.4.1", "pscheduler-address": "198.18.4.1:8443"}
        template["groups"]["backbone"]["addresses"].append({"name": "ps-new"})
        with self.captureOnCommitCallbacks() as callbacks:
            report = import_template(template, ACTOR, register_unknown=True)
        assert [node["name"] for node in report.nodes if node["action"] == "register"] == ["ps-new"]
        node = Node.objects.get(agent__name="ps-new")
        assert (node.agent.kind, node.agent.address, node.api_url) == (
            AgentKind.PERFSONAR,
            "198.18.4.1",
            "https://198.18.4.1:8443/pscheduler",
        )
        assert "ps-new" in report.meshes[0]["members"]
        assert callbacks  # the new node is checked once the import commits

    def test_without_register_unknown_an_unknown_host_is_left_out_and_reported(self) -> None:
        template = backbone()
        template["addresses"]["ps-new"] = {"address": "198.18.4.1"}
        template["groups"]["backbone"]["addresses"].append({"name": "ps-new"})
        report = import_template(template, ACTOR)
        assert "ps-new" not in report.meshes[0]["members"]
        assert any(entry["element"] == "addresses.ps-new" for entry in report.unmapped)
        assert not Agent.objects.filter(name="ps-new").exists()

    def test_a_host_that_cannot_be_registered_is_reported_and_the_rest_imported(self) -> None:
        template = backbone()
        template["addresses"]["ps-private"] = {"address": "10.0.0.1"}
        template["groups"]["backbone"]["addresses"].append({"name": "ps-private"})
        report = import_template(template, ACTOR, register_unknown=True)
        why = {entry["element"]: entry["reason"] for entry in report.unmapped}
        assert why["addresses.ps-private"].startswith("cannot register it as a perfSONAR node:")
        assert report.meshes[0]["members"] == ["athens", "frankfurt", "ps-one"]
        assert not Agent.objects.filter(name="ps-private").exists()

    def test_a_mesh_fathom_refuses_is_reported_and_the_others_are_written(self) -> None:
        template = backbone()
        # Every 40 s a 20 s throughput run each way between three hosts: overbooked.
        template["groups"]["busy"] = template["groups"]["backbone"]
        template["tests"]["tput"]["spec"]["duration"] = "PT20S"
        template["schedules"]["rarely"] = {"repeat": "PT40S"}
        template["tasks"] = {
            "throughput": {"group": "busy", "test": "tput", "schedule": "rarely"},
            "ping": {"group": "backbone", "test": "rtt", "schedule": "often"},
        }
        report = import_template(template, ACTOR)
        why = {entry["element"]: entry["reason"] for entry in report.unmapped}
        assert why["groups.busy"].startswith("Fathom refused the mesh: tests:")
        assert [mesh["name"] for mesh in report.meshes] == ["backbone"]
        assert not Mesh.objects.filter(name="busy").exists()

    def test_a_bad_template_writes_nothing(self) -> None:
        before = counts()
        template = backbone()
        template["tests"]["rtt"]["spec"]["dest"] = "{% peer %}"
        with pytest.raises(TemplateError, match="not a pSConfig template variable"):
            import_template(template, ACTOR, register_unknown=True)
        template = backbone() | {"colour": "blue"}
        with pytest.raises(TemplateError, match="published schema"):
            import_template(template, ACTOR)
        assert counts() == before
