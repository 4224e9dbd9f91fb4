from __future__ import annotations

import json
import tempfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from fathom.testing import FathomTestCase
from meshes.models import Mesh, MeshTest


class ApplyMeshCommandTests(FathomTestCase):
    def write(self, tmp: Path, document: object) -> str:
        path = tmp / "meshes.json"
        path.write_text(json.dumps(document))
        return str(path)

    def test_updates_the_default_mesh_and_creates_another(self) -> None:
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            out = StringIO()
            document = [
                {"name": "default", "tests": [{"name": "ping", "test_type": "ping", "interval_s": 10}]},
                {"name": "pair", "members": [{"agent": "athens"}, {"agent": "frankfurt"}], "tests": []},
            ]
            call_command("apply_mesh", self.write(tmp, document), stdout=out)
            assert out.getvalue().splitlines() == ["updated mesh default", "created mesh pair"]
            assert list(MeshTest.objects.filter(mesh__name="default").values_list("name", "interval_s")) == [
                ("ping", 10)
            ]
            bad = [{"name": "default", "tests": []}, {"name": "broken", "members": [{"agent": "nowhere"}]}]
            with pytest.raises(CommandError, match="nowhere"):
                call_command("apply_mesh", self.write(tmp, bad))
            # All or nothing: the valid first entry was not applied either.
            assert MeshTest.objects.filter(mesh__name="default").count() == 1
            assert not Mesh.objects.filter(name="broken").exists()
            (tmp / "meshes.json").write_text("{not json")
            with pytest.raises(CommandError, match="not JSON"):
                call_command("apply_mesh", str(tmp / "meshes.json"))
