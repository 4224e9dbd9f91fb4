"""Imports a pSConfig template, from a file or a URL, the way the API does: addresses become
Fathom agents or perfSONAR nodes, each group a mesh, its tasks the mesh's tests; importing
again updates those meshes. Prints the report: each mesh, each host, and every element that
did not map, with why. Exits non-zero, with nothing written, on a template pSConfig itself
would refuse.

    python manage.py import_psconfig mesh.json --dry-run
    python manage.py import_psconfig https://ps.example.net/psconfig/mesh.json --register-unknown
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.services import Actor
from perfsonar.psconfig.apply import ImportReport, import_template
from perfsonar.psconfig.template import TemplateError, load_file, load_url


class Command(BaseCommand):
    help = "Import a pSConfig template (a file or an http(s) URL) as Fathom meshes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="a template file, or an http(s) URL to fetch it from")
        parser.add_argument("--dry-run", action="store_true", help="report what the import would do; write nothing")
        parser.add_argument(
            "--register-unknown",
            action="store_true",
            help="register addresses no agent or node has as perfSONAR nodes",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON (as the API returns it)")

    def handle(self, *args: Any, **options: Any) -> None:
        source: str = options["source"]
        try:
            if source.lower().startswith(("http://", "https://")):
                template = load_url(source)
            else:
                template = load_file(Path(source))
            report = import_template(template, Actor.command(), options["dry_run"], options["register_unknown"])
        except TemplateError as error:
            raise CommandError(
                "\n  ".join(["the template was not imported, nothing was written:", *error.errors])
            ) from error
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
        else:
            self.stdout.write("\n".join(report_lines(report)))


def report_lines(report: ImportReport) -> list[str]:
    lines = ["dry run: nothing was written" if report.dry_run else "imported"]
    for mesh in report.meshes:
        lines.append(f"mesh {mesh['name']} ({mesh['kind']}, from group {mesh['group']}): {mesh['action']}")
        lines.append(f"  members: {', '.join(mesh['members']) or '-'}")
        if mesh["targets"]:
            lines.append(f"  targets: {', '.join(mesh['targets'])}")
        for test in mesh["tests"]:
            state = "" if test["enabled"] else ", disabled"
            lines.append(
                f"  test {test['name']}: {test['test_type']} every {test['interval_s']} s, "
                f"slip {test['slip_s']} s{state}"
            )
    for node in report.nodes:
        lines.append(
            f"host {node['element'].removeprefix('addresses.')} ({node['address']}): {node['action']} {node['name']}"
        )
    for evaluation in report.address_classes:
        lines.append(f"address class {evaluation['name']}: selects {', '.join(evaluation['selected']) or 'nothing'}")
    if report.unmapped:
        lines.append("not mapped:")
        lines += [f"  {entry['element']}: {entry['reason']}" for entry in report.unmapped]
    return lines
