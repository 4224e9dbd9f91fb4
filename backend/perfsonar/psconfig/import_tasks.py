"""A pSConfig task as a Fathom test: its kind, ends, spec, schedule and the keys that did not map."""

from __future__ import annotations

from typing import Any

from measurements.choices import TestType
from meshes.choices import MeshKind
from meshes.documents import MAX_INTERVAL_S, MIN_INTERVAL_S, MeshTestSerializer
from meshes.names import name_from, valid_name
from meshes.services.writes import flat_messages
from meshes.specs import DEFAULT_TESTS, SpecError, normalize_spec
from perfsonar.durations import parse_duration
from perfsonar.mapping import kinds
from perfsonar.psconfig import spec_map
from perfsonar.psconfig.import_base import PlannerBase
from perfsonar.psconfig.import_model import (
    ACCEPTED_TOOLS,
    FATHOM_TOOL,
    NOT_MAPPED_SECTIONS,
    UNDERSTOOD_REFERENCE_KEYS,
    MappedTask,
    TestPlan,
    fathom_meta,
    host_or_ip,
    seconds_text,
)
from perfsonar.psconfig.template import (
    sole_variable,
    variables_in,
)


class TaskMapper(PlannerBase):
    """Maps tasks to tests (one test per task)."""

    def task(self, name: str, task: dict[str, Any]) -> MappedTask | None:
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
        group_name, pairs_element = task["group"], None
        pairs_of = fathom_meta(group).get("pairs_of")
        if isinstance(pairs_of, str) and pairs_of != group_name and pairs_of in self.section("groups"):
            # Fathom's export: its mesh's group with the pairs powstream cannot measure left out
            # (exporter._owamp_pairs). The test is the mesh's; Fathom measures the rest itself.
            pairs_element = f"groups.{group_name}"
            group_name, group = pairs_of, self.section("groups")[pairs_of]
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
        if spec is not None and kind == TestType.LATENCY:
            spec = self.latency_interval(element, schedule_name, test["type"], spec)
        if spec is None:
            self.report(element, f"Fathom cannot run its test {task['test']} (see tests.{task['test']})")
            return None
        if kind == TestType.LATENCY:
            # A latency test runs back to back: its interval is each result's length.
            interval_s, slip_s = normalize_spec(kind, spec)["report_interval_s"], 0
        else:
            interval_s, slip_s = self.schedule(element, schedule_name, kind)
        self.report_task_keys(element, task, kind)
        enabled = not task.get("disabled", False)
        exported_enabled = fathom_meta(task).get("enabled")
        if not enabled and fathom_meta(group).get("enabled") is False and isinstance(exported_enabled, bool):
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
        elements += (pairs_element,) if pairs_element else ()
        return MappedTask(name, group_name, TestPlan(**body, elements=elements), targets, dest_is_element)

    @staticmethod
    def no_kind_reason(test_type: str) -> str:
        return kinds.no_kind_reason(test_type)

    def test_name(self, task_name: str, task: dict[str, Any]) -> str:
        reference = task.get("reference")
        hints = reference.get("fathom") if isinstance(reference, dict) else None
        named = hints.get("test") if isinstance(hints, dict) else None
        return named if isinstance(named, str) and valid_name(named) else name_from(task_name, "test")

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
            if not isinstance(dest, str) or not host_or_ip(dest):
                return f"its test's dest {dest!r} is neither a template variable nor a host name or IP address"
            return [dest], False
        if dest_end is None:
            return f"its test's dest is {dest!r}, not an end of the pair (Fathom tests between a group's hosts)"
        if source_end == dest_end:
            return "its test's source and dest are the same end of the pair"
        one_way = group.get("unidirectional", False) or fathom_meta(group).get("kind") == MeshKind.LIST
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
        options = {option.pscheduler_key for option in spec_map.MAPPED[kind]}
        for key in list(pscheduler_spec):
            if key in spec_map.ENDPOINT_KEYS:
                continue
            found = [variable.text for _, variable in variables_in(pscheduler_spec[key], key)]
            if found:
                # A key Fathom has no option for says why (latencybg's "flip": "{% flip %}").
                reason = (
                    f"holds template variable {{% {found[0]} %}}, which Fathom does not evaluate: its default is used"
                    if key in options
                    else spec_map.unmapped_reason(kind, key, pscheduler_spec[key])
                )
                self.report(f"{element}.spec.{key}", reason)
                del pscheduler_spec[key]
        imported = spec_map.spec_from_pscheduler(kind, pscheduler_spec, test["type"])
        for key, reason in imported.unmapped.items():
            self.report(f"{element}.spec.{key}", reason)
        if imported.errors:
            self.report(element, "; ".join(f"{name}: {message}" for name, message in imported.errors.items()))
            return None
        return self.with_exact_spec(kind, element, imported.spec, fathom_meta(test))

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

    def latency_interval(
        self, element: str, name: str | None, test_type: str, spec: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The spec with its report interval: latencybg's comes from its packet count (in the
        spec already), and its task's schedule is not used; a latency (owping) task runs once
        per repeat of its schedule, which becomes the report interval (60 s without one)."""
        low, high = (int(bound) for bound in spec_map.LATENCY_BOUNDS["report_interval_s"])
        schedule = self.section("schedules").get(name, {}) if name else {}
        if test_type == "latencybg":
            if name:
                self.report(
                    f"{element}.schedule",
                    "latencybg runs without pause and reports every packet-count packets, as Fathom's latency "
                    "test reports every report_interval_s: the task's schedule is not used",
                )
            return spec
        if "repeat" in schedule:
            repeat_s = self.seconds(f"schedules.{name}.repeat", schedule["repeat"], low, high)
            spec = {**spec, "report_interval_s": repeat_s}
        else:
            default = normalize_spec(TestType.LATENCY, {})["report_interval_s"]
            where = f"schedules.{name}.repeat" if name else f"{element}.schedule"
            self.report(where, f"no repeat: Fathom's latency test runs back to back, a result every {default} s")
        unused = [key for key in ("start", "until", "max-runs", "slip") if key in schedule]
        if unused:
            reason = f"schedule {name}'s {', '.join(unused)} not used: Fathom's latency test runs back to back"
            self.report(f"{element}.schedule", reason)
        try:
            normalize_spec(TestType.LATENCY, spec)
        except SpecError as error:
            self.report(element, "; ".join(f"{field}: {message}" for field, message in error.errors.items()))
            return None
        return spec

    def schedule(self, element: str, name: str | None, kind: str) -> tuple[int, int]:
        default = next(test for test in DEFAULT_TESTS if test.test_type == kind)
        if name is None:
            self.report(
                f"{element}.schedule",
                f"the task has no schedule: Fathom's default for a {kind} test is used "
                f"(every {seconds_text(default.interval_s)}, slip {seconds_text(default.slip_s)})",
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
                f"its default for a {kind} test is used (every {seconds_text(default.interval_s)})",
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
        if tools and not set(tools) & ACCEPTED_TOOLS.get(kind, {FATHOM_TOOL[kind]}):
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
