"""Writes a mesh as a pSConfig template (valid by pSConfig's published schema), for a
perfSONAR node to read or another Fathom to import.

    python manage.py export_psconfig backbone > backbone.json
    python manage.py export_psconfig backbone --output backbone.json
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from meshes.models import Mesh
from perfsonar.psconfig.exporter import export_mesh


class Command(BaseCommand):
    help = "Write a Fathom mesh as a pSConfig template."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("mesh", help="the mesh's name")
        parser.add_argument("--output", help="a file to write instead of standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        mesh = Mesh.objects.filter(name=options["mesh"]).first()
        if mesh is None:
            raise CommandError(f"no mesh named {options['mesh']!r}")
        text = json.dumps(export_mesh(mesh), indent=2) + "\n"
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
