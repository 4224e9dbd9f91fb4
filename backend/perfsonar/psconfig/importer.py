"""A pSConfig template as Fathom meshes: which agents and perfSONAR nodes its addresses are,
one mesh per group, one test per task, and every element that did not map, with why.

Pure: the template and the known agents in, an ImportPlan out; apply.py writes it. The
template is refused as a whole (TemplateError, nothing planned) when pSConfig itself would
refuse it: it breaks the published schema, uses a template variable pSConfig does not know,
or a group names an address the template does not define. Everything else maps or is
reported: a task whose test Fathom has no kind for, a spec key with no Fathom option, an
address class, a label, an archive.

Fathom's own exports carry `_meta.fathom` hints (the mesh's name, description and kind, each
test's exact spec, tests perfSONAR has no equivalent of), so an exported mesh imports as the
same mesh; a template without them maps by the rules alone.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from inventory.choices import AgentKind
from inventory.services import AGENT_NAME_RE
from measurements.choices import TestType
from meshes.choices import MemberSide, MeshKind
from meshes.documents import HOSTNAME, MAX_INTERVAL_S, MIN_INTERVAL_S, MeshTestSerializer
from meshes.services.writes import flat_messages
from meshes.specs import DEFAULT_TESTS, SpecError, normalize_spec
from perfsonar.durations import parse_duration
from perfsonar.mapping import kinds
from perfsonar.psconfig import spec_map
from perfsonar.psconfig.template import (
    TemplateError,
    check_template,
    sole_variable,
    unknown_variables,
    variables_in,
)
from perfsonar.reconcile import ARCHIVE_PATH

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9:._\-]+$")  # pSConfig's NameType
SLUG_MAX = 63
MATCHED, REGISTER, UNKNOWN = "matched", "register", "unknown"
# The tool Fathom runs for each kind: a task that asks only for others is reported.
FATHOM_TOOL: dict[str, str] = {TestType.THROUGHPUT: "iperf3", TestType.PING: "ping", TestType.TRACE: "traceroute"}
# Display hints of perfSONAR's Grafana; Fathom shows the test's own name instead.
UNDERSTOOD_REFERENCE_KEYS = frozenset({"fathom", "display-task-name", "display-task-group"})
SECTIONS = ("addresses", "groups", "tests", "schedules", "tasks", "archives", "hosts")
NOT_MAPPED_SECTIONS = {
    "address-classes": "address classes select hosts by rules Fathom does not evaluate",
    "subtasks": "subtasks are not mapped: Fathom runs each test on its own schedule",
    "contexts": "contexts (network namespaces and the like) are not mapped: Fathom tests from each host's own stack",
}
ADDRESS_KEYS_NOT_MAPPED = {
    "labels": "labelled addresses are not used: Fathom tests the host at its address",
    "remote-addresses": "per-peer addresses are not used: Fathom tests the host at its address",
    "lead-bind-address": "Fathom does not bind a lead address",
    "contexts": "contexts are not mapped: Fathom tests from the host's own stack",
    "tags": "tags are not kept",
}


@dataclass(frozen=True)
class KnownAgent:
    """An agent or perfSONAR node Fathom has (active, not revoked)."""

    name: str
    address: str
    kind: str


@dataclass(frozen=True)
class Unmapped:
    element: str  # "tasks.x", "tests.y.spec.ip-version", "groups.g.excludes", ...
    reason: str


@dataclass(frozen=True)
class NodePlan:
    element: str  # "addresses.<name>"
    name: str  # the Fathom agent's name, or the name a registered node gets
    address: str
    action: str  # matched | register | unknown
    kind: str = ""  # the matched agent's kind; perfsonar when registered
    api_url: str = ""  # register: the node's pScheduler API


@dataclass(frozen=True)
class TestPlan:
    name: str
    test_type: str
    spec: dict[str, Any]
    interval_s: int
    slip_s: int
    enabled: bool
    elements: tuple[str, ...]  # the task, test and schedule it is made of

    def body(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "test_type": self.test_type,
            "spec": self.spec,
            "interval_s": self.interval_s,
            "slip_s": self.slip_s,
            "enabled": self.enabled,
        }


@dataclass(frozen=True)
class MeshPlan:
    name: str
    element: str  # "groups.<name>"
    kind: str
    description: str
    unidirectional: bool
    enabled: bool
    all_agents: bool
    members: tuple[tuple[str, str], ...]  # (agent name, side)
    targets: tuple[str, ...]
    tests: tuple[TestPlan, ...]

    def body(self, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The mesh as MeshSerializer writes it, without members named in `leave_out`."""
        return {
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "all_agents": self.all_agents,
            "unidirectional": self.unidirectional,
            "targets": list(self.targets),
            "enabled": self.enabled,
            "members": [{"agent": name, "side": side} for name, side in self.members if name not in leave_out],
            "tests": [test.body() for test in self.tests],
        }


@dataclass
class ImportPlan:
    meshes: list[MeshPlan]
    nodes: list[NodePlan]
    unmapped: list[Unmapped]
    # Every element that maps ("addresses.a", "groups.g", "tasks.t", ...).
    mapped: set[str]


def slug(name: str, fallback: str = "psconfig") -> str:
    """A mesh or test name (letters, digits, - and _) from a pSConfig name."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:SLUG_MAX].strip("-")
    return cleaned or fallback


def _valid_slug(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= SLUG_MAX and re.fullmatch(r"[-a-zA-Z0-9_]+", value) is not None


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        suffix = f"-{number}"
        candidate, number = name[: SLUG_MAX - len(suffix)] + suffix, number + 1
    taken.add(candidate)
    return candidate


def _fathom_meta(element: dict[str, Any]) -> dict[str, Any]:
    meta = element.get("_meta")
    hints = meta.get("fathom") if isinstance(meta, dict) else None
    return hints if isinstance(hints, dict) else {}


def _host_or_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return HOSTNAME.match(value) is not None
    return True


def _canonical(address: str) -> str:
    try:
        return str(ipaddress.ip_address(address)).lower()
    except ValueError:
        return address.lower().rstrip(".")


def _api_url(spec: dict[str, Any]) -> str:
    host = str(spec.get("pscheduler-address") or spec["address"])
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass
    return f"https://{host}/pscheduler"


def _seconds_text(seconds: int) -> str:
    return f"{seconds} s"


@dataclass
class _Task:
    """A task that maps, before its group's membership is known."""

    name: str
    group: str
    test: TestPlan
    targets: list[str]  # literal far ends (list groups)
    # list groups: the task's far end is the address itself, so the group's addresses
    # without an agent are the targets.
    dest_is_element: bool = False


@dataclass
class _Planner:
    template: dict[str, Any]
    agents: list[KnownAgent]
    register_unknown: bool
    unmapped: list[Unmapped] = field(default_factory=list)
    mapped: set[str] = field(default_factory=set)
    _reported: set[tuple[str, str]] = field(default_factory=set)

    def report(self, element: str, reason: str) -> None:
        if (element, reason) not in self._reported:
            self._reported.add((element, reason))
            self.unmapped.append(Unmapped(element, reason))

    def section(self, name: str) -> dict[str, Any]:
        value = self.template.get(name, {})
        return value if isinstance(value, dict) else {}

    # -- the whole template ---------------------------------------------------------------

    def plan(self) -> ImportPlan:
        self.report_sections()
        self.report_archives()
        tasks = [task for name, spec in self.section("tasks").items() if (task := self.task(name, spec)) is not None]
        meshes, nodes = self.meshes(tasks)
        self.report_unused()
        return ImportPlan(meshes, nodes, self.unmapped, self.mapped)

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
                self.report(f"hosts.{name}.tags", "tags are not kept")
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
        for section in ("addresses", "groups", "tests", "schedules"):
            for name in self.section(section):
                element = f"{section}.{name}"
                if element not in self.mapped and element not in reported:
                    reason = {
                        "addresses": "in no group that became a Fathom mesh",
                        "groups": "no task uses this group",
                        "tests": "used by no task that maps to a Fathom test",
                        "schedules": "used by no task that maps to a Fathom test",
                    }[section]
                    if section == "tests" and self.section("tests")[name]["type"] not in kinds.KIND_OF_TEST:
                        reason = self.no_kind_reason(self.section("tests")[name]["type"])
                    self.report(element, reason)

    # -- addresses --------------------------------------------------------------------------

    def address_disabled(self, name: str) -> bool:
        spec = self.section("addresses")[name]
        host = self.section("hosts").get(spec.get("host", ""), {})
        return bool(spec.get("disabled") or host.get("disabled"))

    def resolve(self, name: str) -> KnownAgent | None:
        """The agent an address is: by its address, then by its name."""
        address = _canonical(str(self.section("addresses")[name]["address"]))
        for agent in self.agents:
            if _canonical(agent.address) == address:
                return agent
        for agent in self.agents:
            if agent.name in (name.lower(), address):
                return agent
        return None

    # -- tasks -----------------------------------------------------------------------------

    def task(self, name: str, task: dict[str, Any]) -> _Task | None:
        element = f"tasks.{name}"
        group = self.section("groups").get(task["group"])
        test = self.section("tests").get(task["test"])
        schedule_name = task.get("schedule")
        for section, wanted, found in (
            ("group", task["group"], group),
            ("test", task["test"], test),
            ("schedule", schedule_name, schedule_name is None or schedule_name in self.section("schedules")),
        ):
            if not found:
                self.report(element, f"names {section} {wanted}, which the template does not define")
                return None
        assert group is not None and test is not None
        kind = kinds.KIND_OF_TEST.get(test["type"])
        if kind is None:
            self.report(f"tests.{task['test']}", self.no_kind_reason(test["type"]))
            self.report(element, f"its test {task['test']} does not map to a Fathom test")
            return None
        if not isinstance(test["spec"], dict):
            self.report(f"tests.{task['test']}", "its spec is not an object")
            self.report(element, f"its test {task['test']} does not map to a Fathom test")
            return None
        group_type = group["type"]
        if group_type == "list" and kind == TestType.THROUGHPUT:
            self.report(element, "a list group gives one address per task, and throughput needs a host at each end")
            return None
        ends = self.endpoints(task, test["spec"], group, f"tests.{task['test']}.spec")
        if isinstance(ends, str):
            self.report(element, ends)
            return None
        targets, dest_is_element = ends
        spec = self.spec(kind, task["test"], test)
        if spec is None:
            self.report(element, f"Fathom cannot run its test {task['test']} (see tests.{task['test']})")
            return None
        interval_s, slip_s = self.schedule(element, schedule_name, kind)
        self.report_task_keys(element, task, kind)
        enabled = not task.get("disabled", False)
        exported_enabled = _fathom_meta(task).get("enabled")
        if not enabled and _fathom_meta(group).get("enabled") is False and isinstance(exported_enabled, bool):
            enabled = exported_enabled  # disabled in the export only because its mesh is
        body: dict[str, Any] = {
            "name": self.test_name(name, task),
            "test_type": kind,
            "spec": spec,
            "interval_s": interval_s,
            "slip_s": slip_s,
            "enabled": enabled,
        }
        checked = MeshTestSerializer(data=body)
        if not checked.is_valid():
            self.report(element, "Fathom refuses this test: " + "; ".join(flat_messages(checked.errors)))
            return None
        elements = (element, f"tests.{task['test']}") + ((f"schedules.{schedule_name}",) if schedule_name else ())
        return _Task(name, task["group"], TestPlan(**body, elements=elements), targets, dest_is_element)

    @staticmethod
    def no_kind_reason(test_type: str) -> str:
        return kinds.no_kind_reason(test_type)

    def test_name(self, task_name: str, task: dict[str, Any]) -> str:
        reference = task.get("reference")
        hints = reference.get("fathom") if isinstance(reference, dict) else None
        named = hints.get("test") if isinstance(hints, dict) else None
        return named if isinstance(named, str) and _valid_slug(named) else slug(task_name, "test")

    def endpoints(
        self, task: dict[str, Any], spec: dict[str, Any], group: dict[str, Any], where: str
    ) -> str | tuple[list[str], bool]:
        """Why the test's ends are not the pair's ends (a reason), or the literal targets of a
        list group's task and whether its far end is the listed address itself."""
        lead = int(task.get("scheduled-by", 0))
        source, dest = spec.get("source"), spec.get("dest")
        if dest is None:
            return "its test names no dest"
        source_var, dest_var = sole_variable(source), sole_variable(dest)
        if source is None:  # pScheduler's default: the host that schedules the task
            source_end = lead if lead in (0, 1) else None
        else:
            source_end = source_var.pair_end if source_var else None
        dest_end = dest_var.pair_end if dest_var else None
        if source_end is None:
            return f"its test's source is {source!r}, not an end of the pair (Fathom tests between a group's hosts)"
        self.report_nodes(spec, where, {"source": source_end, "dest": dest_end})
        if group["type"] == "list":
            if source_end != 0:
                return "a list group has one address per task: its source must be {% address[0] %}"
            if dest_var is not None:
                if dest_end != 0:
                    return f"a list group has one address per task: dest {dest!r} names no address"
                return [], True
            if not isinstance(dest, str) or not _host_or_ip(dest):
                return f"its test's dest {dest!r} is neither a template variable nor a host name or IP address"
            return [dest], False
        if dest_end is None:
            return f"its test's dest is {dest!r}, not an end of the pair (Fathom tests between a group's hosts)"
        if source_end == dest_end:
            return "its test's source and dest are the same end of the pair"
        one_way = group.get("unidirectional", False) or _fathom_meta(group).get("kind") == MeshKind.LIST
        if source_end == 1 and group["type"] == "disjoint" and one_way:
            return "its test measures from the B side to the A side; Fathom's one-way disjoint meshes test A to B"
        return [], False

    def report_nodes(self, spec: dict[str, Any], where: str, ends: dict[str, int | None]) -> None:
        """source-node and dest-node are where pScheduler reaches each end: understood when
        they name that end (Fathom knows each node's API), reported otherwise."""
        for end_key, end in ends.items():
            key = f"{end_key}-node"
            value = spec.get(key)
            variable = sole_variable(value)
            if value is not None and (variable is None or variable.pair_end is None or variable.pair_end != end):
                reason = f"{value!r} is not the {end_key} end's pScheduler: Fathom reaches each node itself"
                self.report(f"{where}.{key}", reason)

    def spec(self, kind: str, test_name: str, test: dict[str, Any]) -> dict[str, Any] | None:
        element = f"tests.{test_name}"
        pscheduler_spec = dict(test["spec"])
        for key in list(pscheduler_spec):
            if key in spec_map.ENDPOINT_KEYS:
                continue
            found = [variable.text for _, variable in variables_in(pscheduler_spec[key], key)]
            if found:
                self.report(
                    f"{element}.spec.{key}",
                    f"holds template variable {{% {found[0]} %}}, which Fathom does not evaluate: its default is used",
                )
                del pscheduler_spec[key]
        imported = spec_map.spec_from_pscheduler(kind, pscheduler_spec)
        for key, reason in imported.unmapped.items():
            self.report(f"{element}.spec.{key}", reason)
        if imported.errors:
            self.report(element, "; ".join(f"{name}: {message}" for name, message in imported.errors.items()))
            return None
        return self.with_exact_spec(kind, element, imported.spec, _fathom_meta(test))

    def with_exact_spec(self, kind: str, element: str, spec: dict[str, Any], hints: dict[str, Any]) -> dict[str, Any]:
        """Fathom's own export keeps each test's exact spec in `_meta.fathom`: taken as it is
        when it still says what the pScheduler spec says, else only its Fathom-only options."""
        exact = hints.get("spec")
        if hints.get("test_type") != kind or not isinstance(exact, dict):
            return spec
        try:
            if spec_map.spec_to_pscheduler(kind, exact) == spec_map.spec_to_pscheduler(kind, spec):
                return dict(exact)
        except SpecError as error:
            self.report(f"{element}._meta.fathom.spec", f"not a valid {kind} spec ({error}); not used")
            return spec
        merged = dict(spec)
        merged.update({key: value for key, value in exact.items() if key in spec_map.fathom_only_options(kind)})
        try:
            normalize_spec(kind, merged)
        except SpecError:
            return spec
        return merged

    def schedule(self, element: str, name: str | None, kind: str) -> tuple[int, int]:
        default = next(test for test in DEFAULT_TESTS if test.test_type == kind)
        if name is None:
            self.report(
                f"{element}.schedule",
                f"the task has no schedule: Fathom's default for a {kind} test is used "
                f"(every {_seconds_text(default.interval_s)}, slip {_seconds_text(default.slip_s)})",
            )
            return default.interval_s, default.slip_s
        where = f"schedules.{name}"
        schedule = self.section("schedules")[name]
        for key in ("start", "until", "max-runs"):
            if key in schedule:
                self.report(f"{where}.{key}", "Fathom runs a mesh's tests for as long as the mesh is enabled")
        if "repeat" not in schedule:
            self.report(
                f"{where}.repeat",
                f"no repeat (pScheduler runs the task once); Fathom repeats tests: "
                f"its default for a {kind} test is used (every {_seconds_text(default.interval_s)})",
            )
            interval_s = default.interval_s
        else:
            interval_s = self.seconds(f"{where}.repeat", schedule["repeat"], MIN_INTERVAL_S, MAX_INTERVAL_S)
        slip_s = self.seconds(f"{where}.slip", schedule.get("slip", "PT0S"), 0, interval_s)
        if slip_s and not schedule.get("sliprand", False):
            self.report(f"{where}.sliprand", "Fathom always starts a run at a random point within the slip")
        return interval_s, slip_s

    def seconds(self, where: str, text: str, lowest: int, highest: int) -> int:
        try:
            exact = parse_duration(text)
        except ValueError as error:  # the schema's pattern already holds; kept for safety
            self.report(where, f"{error}; {lowest} s used")
            return lowest
        seconds = round(exact)
        if seconds != exact:
            self.report(where, f"{text} is rounded to {seconds} s: Fathom schedules in whole seconds")
        if seconds < lowest or seconds > highest:
            bounded = min(max(seconds, lowest), highest)
            self.report(where, f"{text} is outside Fathom's {lowest} s to {highest} s: {bounded} s used")
            return bounded
        return seconds

    def report_task_keys(self, element: str, task: dict[str, Any], kind: str) -> None:
        tools = task.get("tools")
        if tools and FATHOM_TOOL[kind] not in tools:
            self.report(
                f"{element}.tools", f"Fathom runs {kind} tests with {FATHOM_TOOL[kind]}, not {', '.join(tools)}"
            )
        if "priority" in task:
            self.report(f"{element}.priority", "Fathom's planner gives every test the same priority")
        if task.get("subtasks"):
            self.report(f"{element}.subtasks", NOT_MAPPED_SECTIONS["subtasks"])
        if int(task.get("scheduled-by", 0)) != 0:
            self.report(f"{element}.scheduled-by", "Fathom decides which end of a pair leads its tests")
        reference = task.get("reference")
        if reference is not None and (not isinstance(reference, dict) or set(reference) - UNDERSTOOD_REFERENCE_KEYS):
            self.report(f"{element}.reference", "not kept: a Fathom test has no place for a task's reference")
        missing = [name for name in task.get("archives", []) if name not in self.section("archives")]
        if missing:
            self.report(f"{element}.archives", f"names archives the template does not define: {', '.join(missing)}")

    # -- groups as meshes -------------------------------------------------------------------

    def meshes(self, tasks: list[_Task]) -> tuple[list[MeshPlan], list[NodePlan]]:
        by_group: dict[str, list[_Task]] = {}
        for task in tasks:
            by_group.setdefault(task.group, []).append(task)
        nodes: dict[str, NodePlan] = {}
        meshes: list[MeshPlan] = []
        mesh_names: set[str] = set()
        for group_name, group in self.section("groups").items():
            element = f"groups.{group_name}"
            group_tasks = by_group.get(group_name, [])
            extra = self.fathom_only_tests(element, group)
            if not group_tasks and not extra:
                if any(task.get("group") == group_name for task in self.section("tasks").values()):
                    self.report(element, "no task of this group maps to a Fathom test, so no mesh is made")
                continue
            mesh = self.mesh(group_name, group, group_tasks, extra, nodes, mesh_names)
            if mesh is not None:
                meshes.append(mesh)
        return meshes, list(nodes.values())

    def fathom_only_tests(self, element: str, group: dict[str, Any]) -> list[TestPlan]:
        """Tests perfSONAR has no equivalent of (flow sweeps), which a Fathom export carries in
        the group's `_meta`."""
        found = []
        listed = _fathom_meta(group).get("tests", [])
        for index, body in enumerate(listed if isinstance(listed, list) else []):
            where = f"{element}._meta.fathom.tests[{index}]"
            if isinstance(body, dict) and body.get("test_type") in kinds.TEST_OF_KIND:
                self.report(where, "a test pScheduler runs travels as a task, not here: ignored")
                continue
            checked = MeshTestSerializer(data=body)
            if not checked.is_valid():
                self.report(where, "not a valid Fathom test: " + "; ".join(flat_messages(checked.errors)))
                continue
            data = checked.validated_data
            found.append(
                TestPlan(
                    data["name"],
                    data["test_type"],
                    data["spec"],
                    data["interval_s"],
                    data["slip_s"],
                    data.get("enabled", True),
                    (where,),
                )
            )
        return found

    def selections(self, group_name: str, group: dict[str, Any], key: str) -> list[str]:
        """The enabled address names a group lists under `key`, each once."""
        chosen: list[str] = []
        where = f"groups.{group_name}.{key}"
        if group.get("default-address-label"):
            self.report(f"groups.{group_name}.default-address-label", ADDRESS_KEYS_NOT_MAPPED["labels"])
        for index, selector in enumerate(group.get(key, [])):
            if "class" in selector:
                self.report(
                    f"{where}[{index}]", f"address class {selector['class']}: {NOT_MAPPED_SECTIONS['address-classes']}"
                )
                continue
            name = selector["name"]
            if selector.get("disabled"):
                self.report(f"{where}[{index}]", f"{name} is disabled in this group: left out")
                continue
            if selector.get("label"):
                self.report(
                    f"{where}[{index}].label",
                    f"{name}'s label {selector['label']}: {ADDRESS_KEYS_NOT_MAPPED['labels']}",
                )
            if not self.address_disabled(name) and name not in chosen:
                chosen.append(name)
        return chosen

    def report_same_host(self, group_name: str, group: dict[str, Any], names: list[str]) -> None:
        if group.get("excludes-self", "host") != "host":
            return
        seen: dict[str, str] = {}
        for name in names:
            host = self.section("addresses")[name].get("host")
            if host and host in seen:
                self.report(
                    f"groups.{group_name}.excludes-self",
                    f"{seen[host]} and {name} are both on host {host}: pSConfig leaves out their pairs, "
                    "a Fathom mesh tests them",
                )
            elif host:
                seen[host] = name

    def mesh(
        self,
        group_name: str,
        group: dict[str, Any],
        tasks: list[_Task],
        extra: list[TestPlan],
        nodes: dict[str, NodePlan],
        mesh_names: set[str],
    ) -> MeshPlan | None:
        element = f"groups.{group_name}"
        hints = _fathom_meta(group)
        if group.get("excludes"):
            self.report(f"{element}.excludes", "not mapped: a Fathom mesh tests every pair of its members")
        if group.get("excludes-self") == "disabled":
            self.report(f"{element}.excludes-self", "not mapped: Fathom never tests a host to itself")
        kind, members, targets = self.membership(group_name, group, tasks, nodes)
        if not members:
            self.report(element, "none of its addresses is a Fathom agent or perfSONAR node, so no mesh is made")
            for task in tasks:
                self.report(f"tasks.{task.name}", f"its group {group_name} became no Fathom mesh")
            return None
        all_agents = False
        if hints.get("all_agents") is True:
            if {name for name, _ in members} == {agent.name for agent in self.agents}:
                all_agents, members = True, []
            else:
                self.report(
                    f"{element}._meta.fathom.all_agents",
                    "its addresses are not all of Fathom's agents: imported as listed",
                )
        tests = self.named_tests([task.test for task in tasks] + extra)
        name = hints["mesh"] if _valid_slug(hints.get("mesh")) else slug(group_name)
        description = hints.get("description")
        if not isinstance(description, str):
            description = f"Imported from pSConfig group {group_name}"[:500]
        self.mapped.add(element)
        for test in tests:
            self.mapped.update(test.elements)
        return MeshPlan(
            name=_unique(name, mesh_names),
            element=element,
            kind=kind,
            description=description,
            unidirectional=kind == MeshKind.DISJOINT and bool(group.get("unidirectional", False)),
            enabled=hints.get("enabled", True) is not False,
            all_agents=all_agents,
            members=tuple(members),
            targets=tuple(targets),
            tests=tuple(tests),
        )

    def membership(
        self, group_name: str, group: dict[str, Any], tasks: list[_Task], nodes: dict[str, NodePlan]
    ) -> tuple[MeshKind, list[tuple[str, str]], list[str]]:
        """The mesh kind, its (agent name, side) members and its targets."""
        element = f"groups.{group_name}"
        if group["type"] == "disjoint" and _fathom_meta(group).get("kind") == MeshKind.LIST:
            # Fathom's own list mesh, exported as its members (A) to its targets (B).
            members = self.members(element, self.selections(group_name, group, "a-addresses"), MemberSide.A, nodes)
            far_ends = self.selections(group_name, group, "b-addresses")
            self.mapped.update(f"addresses.{name}" for name in far_ends)
            return MeshKind.LIST, members, [self.address_of(name) for name in far_ends]
        if group["type"] == "disjoint":
            return MeshKind.DISJOINT, self.disjoint_members(group_name, group, nodes), []
        if group["type"] == "list":
            return MeshKind.LIST, *self.list_members(group_name, group, tasks, nodes)
        names = self.selections(group_name, group, "addresses")
        self.report_same_host(group_name, group, names)
        return MeshKind.MESH, self.members(element, names, MemberSide.A, nodes), []

    def address_of(self, name: str) -> str:
        return str(self.section("addresses")[name]["address"])

    def disjoint_members(
        self, group_name: str, group: dict[str, Any], nodes: dict[str, NodePlan]
    ) -> list[tuple[str, str]]:
        element = f"groups.{group_name}"
        a_side = self.selections(group_name, group, "a-addresses")
        b_side = self.selections(group_name, group, "b-addresses")
        self.report_same_host(group_name, group, a_side + b_side)
        members = self.members(element, a_side, MemberSide.A, nodes)
        on_a = {agent for agent, _ in members}
        for agent, side in self.members(element, b_side, MemberSide.B, nodes):
            if agent in on_a:
                reason = f"{agent} is on both sides; a Fathom member has one side: kept on A"
                self.report(f"{element}.b-addresses", reason)
            else:
                members.append((agent, side))
        return members

    def list_members(
        self, group_name: str, group: dict[str, Any], tasks: list[_Task], nodes: dict[str, NodePlan]
    ) -> tuple[list[tuple[str, str]], list[str]]:
        element = f"groups.{group_name}"
        listed = self.selections(group_name, group, "addresses")
        targets: list[str] = []
        if any(task.dest_is_element for task in tasks):
            # The far end is the listed address itself: those with an agent measure, the
            # others are what they measure to (never registered).
            with_agent = [name for name in listed if self.resolve(name) is not None]
            members = self.members(element, with_agent, MemberSide.A, nodes)
            for name in listed:
                if name not in with_agent:
                    targets.append(self.address_of(name))
                    self.mapped.add(f"addresses.{name}")
        else:
            members = self.members(element, listed, MemberSide.A, nodes)
        for task in tasks:
            targets.extend(target for target in task.targets if target not in targets)
        if len({tuple(task.targets) for task in tasks}) > 1:
            reason = "its tasks test to different hosts; a Fathom list mesh tests every member to every target"
            self.report(element, reason)
        return members, targets

    @staticmethod
    def named_tests(tests: list[TestPlan]) -> list[TestPlan]:
        taken: set[str] = set()
        named = []
        for test in tests:
            unique = _unique(test.name, taken)
            named.append(
                test if unique == test.name else TestPlan(**{**test.body(), "name": unique}, elements=test.elements)
            )
        return named

    def members(self, element: str, names: list[str], side: str, nodes: dict[str, NodePlan]) -> list[tuple[str, str]]:
        """(agent name, side) of each address that is or becomes an agent, each agent once."""
        found: list[tuple[str, str]] = []
        for name in names:
            node = nodes.get(name) or self.node(name, nodes)
            nodes[name] = node
            if node.action == UNKNOWN:
                continue
            self.mapped.add(node.element)
            if any(agent == node.name for agent, _ in found):
                self.report(
                    f"{element}",
                    f"{name} is the same Fathom agent ({node.name}) as another of its addresses: listed once",
                )
                continue
            found.append((node.name, side))
        return found

    def node(self, name: str, nodes: dict[str, NodePlan]) -> NodePlan:
        element = f"addresses.{name}"
        spec = self.section("addresses")[name]
        address = str(spec["address"])
        agent = self.resolve(name)
        if agent is not None:
            return NodePlan(element, agent.name, address, MATCHED, agent.kind)
        if not self.register_unknown:
            self.report(
                element,
                f"{address}: no Fathom agent or perfSONAR node has this address or name "
                "(import with register_unknown to register it as a perfSONAR node)",
            )
            return NodePlan(element, name, address, UNKNOWN)
        agent_name = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.")[:SLUG_MAX]
        taken = {agent.name for agent in self.agents} | {
            node.name for node in nodes.values() if node.action == REGISTER
        }
        reason = None
        if not _host_or_ip(address):
            reason = f"{address!r} is neither a host name nor an IP address"
        elif not AGENT_NAME_RE.match(agent_name):
            reason = f"{name!r} gives no valid agent name"
        elif agent_name in taken:
            reason = f"the name {agent_name} is taken by another agent or node"
        if reason is not None:
            self.report(element, f"cannot register it as a perfSONAR node: {reason}")
            return NodePlan(element, agent_name, address, UNKNOWN)
        return NodePlan(element, agent_name, address, REGISTER, AgentKind.PERFSONAR, _api_url(spec))


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
    for group_name, group in template.get("groups", {}).items():
        for key in ("addresses", "a-addresses", "b-addresses"):
            for index, selector in enumerate(group.get(key, [])):
                if "name" in selector and selector["name"] not in addresses:
                    errors.append(
                        f"groups.{group_name}.{key}[{index}]: names address {selector['name']}, "
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
