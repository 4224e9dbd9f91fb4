"""import_psconfig and export_psconfig: the report printed, non-zero exits on bad templates."""

from __future__ import annotations

import json
import tempfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from fathom.testing import FathomTestCase
from meshes.models import Mesh
from perfsonar.psconfig.template import check_template

FIXTURES = Path(__file__).parent / "fixtures" / "psconfig"


class CommandTests(FathomTestCase):
    def run_command(self, *args: str) -> str:
        out = StringIO()
        call_command(*args, stdout=out)
        return out.getvalue()

    def test_a_dry_run_prints_the_report_and_writes_nothing(self) -> None:
        output = self.run_command(
            "import_psconfig", str(FIXTURES / "psconfig-example-1-simple.json"), "--dry-run", "--register-unknown"
        )
        assert output.startswith("dry run: nothing was written")
        assert "mesh example-group-mesh (mesh, from group example-group-mesh): create" in output
        assert "test example-task-throughput: throughput every 14400 s, slip 14400 s" in output
        assert "host host-a.perfsonar.net (host-a.perfsonar.net): register host-a.perfsonar.net" in output
        assert "test example-task-latencybg: latency every 60 s, slip 0 s" in output
        assert "  tests.example-test-latencybg.spec.packet-padding: not given: OWAMP then sends" in output
        assert not Mesh.objects.filter(name="example-group-mesh").exists()

    def test_json_output_is_the_api_report(self) -> None:
        output = self.run_command("import_psconfig", str(FIXTURES / "psconfig-example-4-snmp.json"), "--json")
        report = json.loads(output)
        assert set(report) == {"dry_run", "meshes", "nodes", "unmapped", "address_classes"}
        assert report["meshes"] == [] and report["address_classes"] == []

    def test_an_invalid_template_exits_non_zero_and_writes_nothing(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            for text, why in (("{", "is not JSON"), ('{"addresses": {}}', "'groups' is a required property")):
                path = Path(folder) / "bad.json"
                path.write_text(text)
                with self.subTest(why=why), pytest.raises(CommandError, match=why) as caught:
                    call_command("import_psconfig", str(path))
                assert "nothing was written" in str(caught.value)
        with pytest.raises(CommandError, match="cannot read"):
            call_command("import_psconfig", str(FIXTURES / "absent.json"))
        assert Mesh.objects.count() == 1  # the default mesh only

    def test_export_prints_a_valid_template(self) -> None:
        template = json.loads(self.run_command("export_psconfig", "default"))
        assert check_template(template)["groups"]["default"]["_meta"]["fathom"]["all_agents"] is True
        with pytest.raises(CommandError, match="no mesh named 'absent'"):
            call_command("export_psconfig", "absent")
