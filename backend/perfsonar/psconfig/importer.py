"""A pSConfig template as Fathom meshes: which agents and perfSONAR nodes its addresses are,
one mesh per group, one test per task, what each address class selects, and every element
that did not map, with why.

Pure: the template and the known agents in, an ImportPlan out; apply.py writes it. The
template is refused as a whole (TemplateError, nothing planned) when pSConfig itself would
refuse it: it breaks the published schema, uses a template variable pSConfig does not know,
or a group names an address the template does not define. Everything else maps or is
reported: a task whose test Fathom has no kind for, a spec key with no Fathom option, an
address class, a label, an archive.

Fathom's own exports carry `_meta.fathom` hints (the mesh's name, description and kind, each
test's exact spec, tests perfSONAR has no equivalent of), so an exported mesh imports as the
same mesh; a template without them maps by the rules alone.

The mapping stands in layers, each a class over the one below: import_base (the template,
the known agents, the report; which agent an address is), import_tasks (a task as a test),
import_groups (a group as a mesh and its members), and here the whole template and the
sections that never map. import_model holds what they plan and share.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from perfsonar.mapping import kinds
from perfsonar.psconfig.import_groups import GroupMapper
from perfsonar.psconfig.import_model import (
    ADDRESS_KEYS_NOT_MAPPED,
    NAME_PATTERN,
    NOT_MAPPED_SECTIONS,
    SECTIONS,
    ImportPlan,
    KnownAgent,
)
from perfsonar.psconfig.template import (
    TemplateError,
    check_template,
    unknown_variables,
)
from perfsonar.reconcile import ARCHIVE_PATH


class _Planner(GroupMapper):
    """The whole template: its tasks and groups mapped, every other section reported."""

    def plan(self) -> ImportPlan:
        self.report_sections()
        self.report_archives()
        tasks = [task for name, spec in self.section("tasks").items() if (task := self.task(name, spec)) is not None]
        meshes, nodes = self.meshes(tasks)
        classes = [self.address_class(name) for name in self.section("address-classes")]
        for evaluation in classes:
            for note in evaluation.notes:
                self.report(f"address-classes.{evaluation.name}", note)
        self.report_unused()
        return ImportPlan(meshes, nodes, self.unmapped, self.mapped, classes)

    def report_sections(self) -> None:
        for url in self.template.get("includes", []):
            self.report("includes", f"{url}: included templates are not fetched; import each on its own")
        for section, reason in NOT_MAPPED_SECTIONS.items():
            for name in self.section(section):
                self.report(f"{section}.{name}", reason)
        for name, host in self.section("hosts").items():
            if host.get("archives"):
                self.report(f"hosts.{name}.archives", "Fathom keeps the results of the tests it runs itself")
            if host.get("tags"):
                self.report(f"hosts.{name}.tags", ADDRESS_KEYS_NOT_MAPPED["tags"])
        for name, spec in self.section("addresses").items():
            for key, reason in ADDRESS_KEYS_NOT_MAPPED.items():
                if spec.get(key):
                    self.report(f"addresses.{name}.{key}", reason)
            if self.address_disabled(name):
                self.report(f"addresses.{name}", "disabled in the template: left out of every group")

    def report_archives(self) -> None:
        for name, archive in self.section("archives").items():
            data = archive.get("data")
            url = data.get("_url") if isinstance(data, dict) else None
            if archive.get("archiver") == "http" and isinstance(url, str) and url.endswith(ARCHIVE_PATH):
                self.mapped.add(f"archives.{name}")  # Fathom's own receiver: results come home anyway
            else:
                self.report(
                    f"archives.{name}",
                    f"{archive.get('archiver')} archive not used: Fathom keeps the results of the tests it runs",
                )

    def report_unused(self) -> None:
        reported = {entry.element for entry in self.unmapped}
        for section in ("addresses", "groups", "tests", "schedules", "address-classes"):
            for name in self.section(section):
                element = f"{section}.{name}"
                if element not in self.mapped and element not in reported:
                    reason = {
                        "addresses": "in no group that became a Fathom mesh",
                        "groups": "no task uses this group",
                        "tests": "used by no task that maps to a Fathom test",
                        "schedules": "used by no task that maps to a Fathom test",
                        "address-classes": "selects the addresses of no group that became a Fathom mesh",
                    }[section]
                    if section == "tests" and self.section("tests")[name]["type"] not in kinds.KIND_OF_TEST:
                        reason = self.no_kind_reason(self.section("tests")[name]["type"])
                    self.report(element, reason)


def structural_errors(template: dict[str, Any]) -> list[str]:
    """What would stop pSConfig itself: names outside its pattern (the schema's
    patternProperties skip them), unknown variables, groups naming undefined addresses."""
    errors = [
        f"{section}: {name!r} is not a pSConfig name (letters, digits and : . _ -)"
        for section in (*SECTIONS, *NOT_MAPPED_SECTIONS)
        for name in template.get(section, {})
        if not NAME_PATTERN.match(name)
    ]
    errors += unknown_variables(template)
    addresses = template.get("addresses", {})
    classes = template.get("address-classes", {})
    for group_name, group in template.get("groups", {}).items():
        for key in ("addresses", "a-addresses", "b-addresses"):
            for index, selector in enumerate(group.get(key, [])):
                for ref, defined, what in (("name", addresses, "address"), ("class", classes, "address class")):
                    if ref in selector and selector[ref] not in defined:
                        errors.append(
                            f"groups.{group_name}.{key}[{index}]: names {what} {selector[ref]}, "
                            "which the template does not define"
                        )
    return errors


def plan_import(template: Any, agents: Iterable[KnownAgent], register_unknown: bool = False) -> ImportPlan:
    """The meshes, nodes and unmapped elements of a template; TemplateError when it is not
    a template pSConfig would accept."""
    checked = check_template(template)
    errors = structural_errors(checked)
    if errors:
        raise TemplateError("the template cannot be imported", errors)
    return _Planner(checked, list(agents), register_unknown).plan()
