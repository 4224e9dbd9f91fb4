"""Creates or updates meshes from a JSON file, the way the API does (same validation, the
same refusal of a change that overbooks an agent, an audit row each), and re-plans their
slots. For scripted set-ups: the demo, system tests, configuration management.

    python manage.py apply_mesh meshes.json      # one mesh object or a list of them
    python manage.py apply_mesh - < meshes.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from rest_framework.exceptions import ValidationError

from audit.services import Actor
from meshes.documents import MeshSerializer
from meshes.models import Mesh
from meshes.services.writes import save_mesh


class Command(BaseCommand):
    help = "Create or update meshes (matched by name) from a JSON file; all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="JSON file with a mesh or a list of meshes, or - for standard input")

    def handle(self, *args: Any, **options: Any) -> None:
        source = sys.stdin if options["file"] == "-" else open(options["file"], encoding="utf-8")  # noqa: SIM115
        with source:
            try:
                document = json.load(source)
            except json.JSONDecodeError as error:
                raise CommandError(f"{options['file']} is not JSON: {error}") from error
        meshes = document if isinstance(document, list) else [document]
        actor = Actor.command()
        with transaction.atomic():
            for index, data in enumerate(meshes):
                name = data.get("name") if isinstance(data, dict) else None
                instance = Mesh.objects.filter(name=name).first() if name else None
                serializer = MeshSerializer(instance, data=data, partial=instance is not None)
                if not serializer.is_valid():
                    raise CommandError(f"mesh {index} ({name or 'unnamed'}): {json.dumps(serializer.errors)}")
                try:
                    mesh = save_mesh(serializer, actor)
                except ValidationError as error:
                    raise CommandError(f"mesh {index} ({name or 'unnamed'}): {json.dumps(error.detail)}") from error
                self.stdout.write(f"{'updated' if instance else 'created'} mesh {mesh.name}")
