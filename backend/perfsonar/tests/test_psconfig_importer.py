"""pSConfig templates as import plans: perfSONAR's own samples map or report every element,
and each rule (addresses, groups, tests, schedules, tasks) holds on its own."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from perfsonar.psconfig.address_classes import ClassEvaluation
from perfsonar.psconfig.import_model import ImportPlan, KnownAgent
from perfsonar.psconfig.importer import plan_import
from perfsonar.psconfig.template import load_file

FIXTURES = Path(__file__).parent / "fixtures" / "psconfig"
SAMPLES = (
    "psconfig-example-1-simple.json",
    "psconfig-example-2-testbed.json",
    "psconfig-example-4-snmp.json",
    "psconfig-skeleton.json",
    "psconfig-intro-colors.json",
)
COVERED_SECTIONS = ("addresses", "groups", "tests", "schedules", "tasks", "archives")
ATHENS = KnownAgent("athens", "198.51.100.1", "fathom")
PS_NODE = KnownAgent("ps-b", "198.51.100.2", "perfsonar")


def reasons(plan: ImportPlan) -> dict[str, str]:
    return {entry.element: entry.reason for entry in plan.unmapped}


def pair_template(**overrides: Any) -> dict[str, Any]:
    """Two hosts, a mesh, one rtt test every 5 minutes."""
    template: dict[str, Any] = {
        "addresses": {
            "a": {"address": "198.51.100.1"},
            "b": {"address": "198.51.100.2"},
            "c": {"address": "c.example.net"},
        },
        "groups": {"g": {"type": "mesh", "addresses": [{"name": "a"}, {"name": "b"}]}},
        "tests": {"ping": {"type": "rtt", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}"}}},
        "schedules": {"5m": {"repeat": "PT5M", "slip": "PT1M", "sliprand": True}},
        "tasks": {"ping-mesh": {"group": "g", "test": "ping", "schedule": "5m"}},
    }
    for section, value in overrides.items():
        template[section.replace("_", "-")] = value
    return template


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("register_unknown", [False, True], ids=["known-only", "register-unknown"])
def test_every_sample_element_maps_or_is_reported(sample: str, register_unknown: bool) -> None:
    template = load_file(FIXTURES / sample)
    plan = plan_import(template, [ATHENS], register_unknown)
    reported = set(reasons(plan))
    missing = [
        f"{section}.{name}"
        for section in COVERED_SECTIONS
        for name in template.get(section, {})
        if f"{section}.{name}" not in plan.mapped | reported
    ]
    assert missing == []
    assert all(entry.reason for entry in plan.unmapped)


def test_simple_example_becomes_one_mesh_of_registered_nodes() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-1-simple.json"), [], register_unknown=True)
    [mesh] = plan.meshes
    assert (mesh.name, mesh.kind, mesh.unidirectional) == ("example-group-mesh", "mesh", False)
    assert [name for name, _ in mesh.members] == [
        "host-a.perfsonar.net",
        "host-b.perfsonar.net",
        "host-c.perfsonar.net",
    ]
    assert {node.action for node in plan.nodes} == {"register"}
    assert plan.nodes[0].api_url == "https://host-a.perfsonar.net/pscheduler"
    tests = {test.name: test for test in mesh.tests}
    assert set(tests) == {"example-task-throughput", "example-task-trace", "example-task-latencybg"}
    throughput = tests["example-task-throughput"]
    assert (throughput.test_type, throughput.spec, throughput.interval_s, throughput.slip_s) == (
        "throughput",
        {"duration_s": 30},
        4 * 3600,
        4 * 3600,
    )
    assert tests["example-task-trace"].interval_s == 600
    # latencybg is Fathom's latency: powstream's 600 packets every 0.1 s report every 60 s.
    latency = tests["example-task-latencybg"]
    assert (latency.test_type, latency.spec, latency.interval_s, latency.slip_s) == ("latency", {}, 60, 0)
    why = reasons(plan)
    assert "14-byte packets" in why["tests.example-test-latencybg.spec.packet-padding"]
    assert "archive not used" in why["archives.example-archive-central"]


def test_unknown_addresses_are_reported_and_no_empty_mesh_is_made() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-1-simple.json"), [ATHENS])
    assert plan.meshes == []
    why = reasons(plan)
    assert "register_unknown" in why["addresses.host-a.perfsonar.net"]
    assert "no mesh is made" in why["groups.example-group-mesh"]
    assert {node.action for node in plan.nodes} == {"unknown"}


def test_testbed_reports_what_fathom_does_not_do() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-2-testbed.json"), [], register_unknown=True)
    why = reasons(plan)
    assert "IP version" in why["tests.throughput_iperf3_tcp_test_v4.spec.ip-version"]
    assert "iperf3, not nuttcp" in why["tasks.throughput-udp-nuttcp-v4.tools"]
    assert "disabled" in why["addresses.ma-dev2.bldc.grnoc.iu.edu"]
    assert "label" in why["groups.v6_hosts_throughput.addresses[1].label"]
    assert "labelled addresses" in why["addresses.antg-staging.es.net.labels"]
    meshes = {mesh.name: mesh for mesh in plan.meshes}
    members = {name for name, _ in meshes["testbed_throughput_hosts"].members}
    assert "ma-dev2.bldc.grnoc.iu.edu" not in members and len(members) == 14
    # Disabled tasks are kept as disabled tests, so the mesh can be switched on later.
    assert {test.enabled for test in meshes["v6_hosts_throughput"].tests} == {False}
    udp = meshes["testbed_throughput_hosts_minusi2"].tests[0]
    assert udp.spec == {"duration_s": 10, "udp": True, "bitrate_bps": 50_000_000, "window_bytes": 1_024_000}
    assert meshes["pscheduler_hosts"].tests[0].spec == {"count": 10, "interval_s": 1, "size_bytes": 1000}


def test_skeleton_placeholders_are_not_registered() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-skeleton.json"), [], register_unknown=True)
    why = reasons(plan)
    assert "neither a host name nor an IP address" in why["addresses.FILL_IN_ADDRESS_NAME_1"]
    assert why["groups.example_group_disjoint"] == "no task uses this group"


def test_colors_task_naming_a_missing_group_is_reported() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-intro-colors.json"), [])
    why = reasons(plan)
    assert why["tasks.colors_task"] == "names group colors_group, which the template does not define"
    assert "'colors' test has no Fathom test kind" in why["tests.colors_test"]


def test_snmp_list_is_reported() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-4-snmp.json"), [], register_unknown=True)
    why = reasons(plan)
    assert "'snmpget' test has no Fathom test kind" in why["tests.test-snmp"]
    assert "no task of this group maps" in why["groups.group-snmp"]
    assert "snmptrap archive not used" in why["archives.archive-snmp"]


def test_addresses_match_agents_by_address_then_name() -> None:
    template = pair_template()
    template["addresses"]["b"] = {"address": "ps-b.example.net"}
    template["addresses"]["ps-b"] = template["addresses"].pop("b")
    template["groups"]["g"]["addresses"][1] = {"name": "ps-b"}
    plan = plan_import(template, [ATHENS, PS_NODE])
    assert [(node.name, node.action) for node in plan.nodes] == [("athens", "matched"), ("ps-b", "matched")]
    assert plan.meshes[0].members == (("athens", "a"), ("ps-b", "a"))


def test_disjoint_groups_keep_sides_and_direction() -> None:
    template = pair_template(
        groups={
            "d": {
                "type": "disjoint",
                "a-addresses": [{"name": "a"}],
                "b-addresses": [{"name": "b"}],
                "unidirectional": True,
            }
        }
    )
    template["tasks"]["ping-mesh"]["group"] = "d"
    [mesh] = plan_import(template, [ATHENS, PS_NODE]).meshes
    assert (mesh.kind, mesh.unidirectional, mesh.members) == ("disjoint", True, (("athens", "a"), ("ps-b", "b")))
    # A test from B to A cannot be a one-way disjoint mesh's test (A to B).
    template["tests"]["ping"]["spec"] = {"source": "{% address[1] %}", "dest": "{% address[0] %}"}
    plan = plan_import(template, [ATHENS, PS_NODE])
    assert plan.meshes == [] and "B side to the A side" in reasons(plan)["tasks.ping-mesh"]


def test_a_reversed_test_is_the_same_in_a_mesh() -> None:
    template = pair_template()
    template["tests"]["ping"]["spec"] = {"source": "{% address[1] %}", "dest": "{% address[0] %}"}
    assert len(plan_import(template, [ATHENS, PS_NODE]).meshes[0].tests) == 1


def test_list_group_members_test_to_a_literal_dest() -> None:
    template = pair_template(groups={"l": {"type": "list", "addresses": [{"name": "a"}, {"name": "b"}]}})
    template["tests"]["ping"]["spec"] = {"source": "{% address[0] %}", "dest": "www.example.org"}
    template["tasks"]["ping-mesh"]["group"] = "l"
    [mesh] = plan_import(template, [ATHENS, PS_NODE]).meshes
    assert (mesh.kind, mesh.targets, [name for name, _ in mesh.members]) == (
        "list",
        ("www.example.org",),
        ["athens", "ps-b"],
    )


def test_list_group_hosts_without_an_agent_become_targets() -> None:
    template = pair_template(groups={"l": {"type": "list", "addresses": [{"name": "a"}, {"name": "c"}]}})
    template["tests"]["ping"]["spec"] = {"dest": "{% address[0] %}"}
    template["tasks"]["ping-mesh"]["group"] = "l"
    plan = plan_import(template, [ATHENS], register_unknown=True)
    [mesh] = plan.meshes
    assert (mesh.members, mesh.targets) == ((("athens", "a"),), ("c.example.net",))
    assert "addresses.c" in plan.mapped and [node.name for node in plan.nodes] == ["athens"]


def test_throughput_in_a_list_group_is_reported() -> None:
    template = pair_template(groups={"l": {"type": "list", "addresses": [{"name": "a"}]}})
    template["tests"]["ping"] = {"type": "throughput", "spec": {"dest": "www.example.org"}}
    template["tasks"]["ping-mesh"]["group"] = "l"
    assert "throughput needs a host at each end" in reasons(plan_import(template, [ATHENS]))["tasks.ping-mesh"]


def test_schedules_become_intervals_within_fathoms_bounds() -> None:
    template = pair_template(schedules={"fast": {"repeat": "PT1S", "slip": "PT1M", "start": "@PT1M", "max-runs": 3}})
    template["tasks"]["ping-mesh"]["schedule"] = "fast"
    plan = plan_import(template, [ATHENS, PS_NODE])
    test = plan.meshes[0].tests[0]
    assert (test.interval_s, test.slip_s) == (10, 10)
    why = reasons(plan)
    assert "10 s used" in why["schedules.fast.repeat"]
    assert "10 s used" in why["schedules.fast.slip"]
    assert "random point" in why["schedules.fast.sliprand"]
    assert "for as long as the mesh" in why["schedules.fast.start"] and "schedules.fast.max-runs" in why


def test_a_task_without_schedule_gets_fathoms_default_and_says_so() -> None:
    template = pair_template()
    del template["tasks"]["ping-mesh"]["schedule"]
    plan = plan_import(template, [ATHENS, PS_NODE])
    assert (plan.meshes[0].tests[0].interval_s, plan.meshes[0].tests[0].slip_s) == (300, 0)
    assert "default for a ping test" in reasons(plan)["tasks.ping-mesh.schedule"]


def test_a_throughput_test_longer_than_its_interval_is_refused_by_fathoms_rules() -> None:
    template = pair_template(schedules={"5m": {"repeat": "PT30S"}})
    template["tests"]["ping"] = {"type": "throughput", "spec": {"dest": "{% address[1] %}", "duration": "PT60S"}}
    assert "holds both agents" in reasons(plan_import(template, [ATHENS, PS_NODE]))["tasks.ping-mesh"]


def test_what_fathom_cannot_map_faithfully_is_reported() -> None:
    template = pair_template(
        includes=["https://example.net/other.json"],
        address_classes={"all": {"data-source": {"type": "current-config"}}},
        contexts={"ns": {"context": "linux-namespace", "data": {"namespace": "x"}}},
        subtasks={"st": {"test": "ping"}},
    )
    template["groups"]["g"]["excludes"] = [{"local-address": {"name": "a"}, "target-addresses": [{"name": "b"}]}]
    template["groups"]["g"]["addresses"].append({"class": "all"})
    template["tests"]["ping"]["spec"]["ttl"] = "{% jq .addresses[0]._meta.ttl %}"
    template["tasks"]["ping-mesh"].update(
        {"priority": 3, "subtasks": ["st"], "reference": {"display-task-name": "x", "ticket": 1}}
    )
    plan = plan_import(template, [ATHENS, PS_NODE])
    why = reasons(plan)
    assert "not fetched" in why["includes"]
    # A class without filters selects every address, as in pSConfig; c has no agent.
    assert plan.address_classes == [ClassEvaluation("all", ("a", "b", "c"))]
    assert "groups.g.addresses[2]" not in why and "no Fathom agent" in why["addresses.c"]
    assert "contexts" in why["contexts.ns"] and "subtasks" in why["subtasks.st"]
    assert "tests every pair" in why["groups.g.excludes"]
    assert "does not evaluate" in why["tests.ping.spec.ttl"]
    assert {"tasks.ping-mesh.priority", "tasks.ping-mesh.subtasks", "tasks.ping-mesh.reference"} <= set(why)


def test_same_host_addresses_are_reported_as_pairs_pscheduler_would_skip() -> None:
    template = pair_template(hosts={"box": {}})
    template["addresses"]["a"]["host"] = "box"
    template["addresses"]["b"]["host"] = "box"
    assert "both on host box" in reasons(plan_import(template, [ATHENS, PS_NODE]))["groups.g.excludes-self"]


def test_test_names_are_slugs_and_unique_within_a_mesh() -> None:
    template = pair_template()
    template["tasks"] = {
        "ping.mesh": {"group": "g", "test": "ping", "schedule": "5m"},
        "ping:mesh": {"group": "g", "test": "ping", "schedule": "5m"},
    }
    names = [test.name for test in plan_import(template, [ATHENS, PS_NODE]).meshes[0].tests]
    assert names == ["ping-mesh", "ping-mesh-2"]


def test_a_pscheduler_host_other_than_the_pair_end_is_reported() -> None:
    template = pair_template()
    template["tests"]["ping"]["spec"]["source-node"] = "ps.example.net"
    template["tests"]["ping"]["spec"]["dest-node"] = "{% pscheduler_address[1] %}"
    plan = plan_import(template, [ATHENS, PS_NODE])
    assert "is not the source end's pScheduler" in reasons(plan)["tests.ping.spec.source-node"]
    assert "tests.ping.spec.dest-node" not in reasons(plan) and len(plan.meshes) == 1


def test_a_fixed_host_as_dest_of_a_mesh_test_is_reported() -> None:
    template = pair_template()
    template["tests"]["ping"]["spec"]["dest"] = "www.example.org"
    assert "not an end of the pair" in reasons(plan_import(template, [ATHENS, PS_NODE]))["tasks.ping-mesh"]


def test_the_plan_does_not_change_the_template() -> None:
    template = load_file(FIXTURES / "psconfig-example-2-testbed.json")
    before = copy.deepcopy(template)
    plan_import(template, [], register_unknown=True)
    assert template == before


def test_latencybg_tasks_import_as_latency_tests_saying_what_does_not_map() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-2-testbed.json"), [], register_unknown=True)
    tests = {test.name: test for mesh in plan.meshes for test in mesh.tests if test.test_type == "latency"}
    assert set(tests) == {"latencybg-v4", "latencybg-v6"} and not tests["latencybg-v6"].enabled
    # 600 packets every 0.1 s, a 10 s timeout; powstream reports once a minute: the interval.
    v4 = tests["latencybg-v4"]
    assert (v4.spec, v4.interval_s, v4.slip_s) == ({"packet_timeout_s": 10, "packet_interval_s": 0.1}, 60, 0)
    why = reasons(plan)
    assert "0 bytes of padding make 14-byte packets" in why["tests.latencybg_test_v4.spec.packet-padding"]
    assert "histogram" in why["tests.latencybg_test_v4.spec.bucket-width"]
    assert "IP version" in why["tests.latencybg_test_v4.spec.ip-version"]
    skeleton = reasons(plan_import(load_file(FIXTURES / "psconfig-skeleton.json"), [], register_unknown=True))
    assert "always sends from its source" in skeleton["tests.example_test_latencybg.spec.flip"]


def test_an_owping_task_reports_every_repeat_of_its_schedule() -> None:
    template = pair_template()
    template["tests"]["owd"] = {
        "type": "latency",
        "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}", "packet-count": 100, "packet-padding": 27},
    }
    template["tasks"]["owd"] = {"group": "g", "test": "owd", "schedule": "5m", "tools": ["owping"]}
    plan = plan_import(template, [ATHENS, PS_NODE])
    [owd] = [test for test in plan.meshes[0].tests if test.name == "owd"]
    assert (owd.test_type, owd.spec, owd.interval_s, owd.slip_s) == (
        "latency",
        {"size_bytes": 41, "report_interval_s": 300},
        300,
        0,
    )
    why = reasons(plan)
    assert "not a set number of packets" in why["tests.owd.spec.packet-count"]
    assert "schedule 5m's slip not used" in why["tasks.owd.schedule"] and "tasks.owd.tools" not in why
