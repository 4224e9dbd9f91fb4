"""pSConfig address classes evaluated at import as pSConfig builds its groups: against pSConfig's
own address-class tests (perl-shared t/client-psconfig-addressclasses.t, whose template is
fixtures/psconfig/perl-shared-addressclasses.json) and its example-5-classes.json, and each
filter on its own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from perfsonar.psconfig.address_classes import NETMASK_NOTE, ClassEvaluation
from perfsonar.psconfig.import_model import ImportPlan, KnownAgent
from perfsonar.psconfig.importer import plan_import
from perfsonar.psconfig.template import TemplateError, load_file

FIXTURES = Path(__file__).parent / "fixtures" / "psconfig"

# The addresses of the pairs t/client-psconfig-addressclasses.t expects each task's group to
# give (its %expected_pairs: every ordered pair of these, less a host with itself), by the
# template's address names.
ESNET = {"lbl-pt1.es.net", "sacr-pt1.es.net", "chic-pt1-v6.es.net"}
TESTBED = {"host-a.perfsonar.net", "host-b.perfsonar.net", "host-c.perfsonar.net"} | ESNET
NOT_ESNET = {"host-a.perfsonar.net", "host-b.perfsonar.net", "host-c.perfsonar.net", "host-d.perfsonar.net"} | {
    "antg-staging-v4",
    "antg-staging-v6",
}
PSCONFIG_EXPECTS = {
    "example-group-tag-esnet": ESNET,
    "example-group-tag-testbed": TESTBED | {"requester.perfsonar.net"},  # the requesting agent
    "example-group-and-tag": ESNET,
    "example-group-or-tag": TESTBED,
    "example-group-not-addrclass": NOT_ESNET,
    "example-group-host": {"lbl-pt1.es.net", "sacr-pt1.es.net"},
    "example-group-exclude-tag-esnet": NOT_ESNET,
    "example-group-host-noagent": {"host-a.perfsonar.net", "host-b.perfsonar.net"},  # A: host-a, B: the class
    "example-group-host-jq": {"host-a.perfsonar.net", "sacr-pt1.es.net"},
    "example-group-jq": {"lbl-pt1.es.net", "sacr-pt1.es.net"},
}
# What Fathom cannot do as pSConfig does, each said in the report: no requesting agent at an
# import, and no jq.
FATHOM_LEAVES_OUT = {
    "example-group-tag-testbed": {"requester.perfsonar.net"},
    "example-group-host-jq": {"sacr-pt1.es.net"},
    "example-group-jq": {"lbl-pt1.es.net", "sacr-pt1.es.net"},
}


def perl_shared_template() -> dict[str, Any]:
    """The test's template, its tasks' pre-4.1 `$group::N` variables written as today's
    `{% address[N] %}` (pSConfig's schema leaves test specs free, so it accepts either)."""
    text = (FIXTURES / "perl-shared-addressclasses.json").read_text()
    template: dict[str, Any] = json.loads(
        text.replace("$group::0", "{% address[0] %}").replace("$group::1", "{% address[1] %}")
    )
    return template


def agents_for(template: dict[str, Any]) -> list[KnownAgent]:
    return [KnownAgent(name, spec["address"], "perfsonar") for name, spec in template["addresses"].items()]


def members_by_group(plan: ImportPlan) -> dict[str, set[str]]:
    return {mesh.element.removeprefix("groups."): {name for name, _ in mesh.members} for mesh in plan.meshes}


def reasons(plan: ImportPlan) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for entry in plan.unmapped:
        found.setdefault(entry.element, []).append(entry.reason)
    return found


def test_groups_of_classes_have_the_members_pscheduler_builds_them_of() -> None:
    template = perl_shared_template()
    plan = plan_import(template, agents_for(template))
    members = members_by_group(plan)
    for group, expected in PSCONFIG_EXPECTS.items():
        fathom = expected - FATHOM_LEAVES_OUT.get(group, set())
        assert members.get(group, set()) == fathom, group
    # A group whose class selects nothing (jq) becomes no mesh, and says why.
    assert "example-group-jq" not in members
    why = reasons(plan)
    assert any("jq filter, which Fathom does not evaluate" in reason for reason in why["address-classes.jq"])
    assert "selects no address" in why["groups.example-group-jq.addresses[0]"][0]
    assert any("requesting agent" in reason for reason in why["address-classes.tag-testbed-ra"])


def test_the_report_shows_what_each_class_selected() -> None:
    template = perl_shared_template()
    classes = {
        evaluation.name: evaluation for evaluation in plan_import(template, agents_for(template)).address_classes
    }
    assert list(classes) == list(template["address-classes"])
    assert classes["tag-esnet"] == ClassEvaluation(
        "tag-esnet", ("lbl-pt1.es.net", "sacr-pt1.es.net", "chic-pt1-v6.es.net")
    )
    assert classes["host-noagent"].selected == ("host-b.perfsonar.net",)
    assert classes["host-jq"].selected == () and "jq filter" in classes["host-jq"].notes[0]
    assert classes["tag-testbed-ra"].selected == () and "requesting agent" in classes["tag-testbed-ra"].notes[0]
    # Only literal IPs have an IP version here: the host names are no Fathom agent's IP.
    assert classes["ipversion"].selected == ("antg-staging-v6",)
    assert classes["ipversion-v4"].selected == ("antg-staging-v4",)
    assert "host names of no Fathom agent with an IP address" in classes["ipversion"].notes[0]
    assert "left out, as Fathom cannot decide" in classes["ipversion"].notes[1]
    assert classes["netmask"].notes[0] == NETMASK_NOTE


def test_a_host_name_is_taken_at_the_address_of_the_agent_it_is() -> None:
    template = perl_shared_template()
    ips = {"lbl-pt1.es.net": "198.129.254.30", "sacr-pt1.es.net": "198.129.254.38"}
    agents = [
        KnownAgent(name, ips.get(name, spec["address"]), "perfsonar") for name, spec in template["addresses"].items()
    ]
    classes = {evaluation.name: evaluation for evaluation in plan_import(template, agents).address_classes}
    assert classes["netmask"].selected == ("lbl-pt1.es.net", "sacr-pt1.es.net")
    assert classes["ipversion-v4"].selected == ("lbl-pt1.es.net", "sacr-pt1.es.net", "antg-staging-v4")


def test_example_5_becomes_a_throughput_mesh_and_a_latency_mesh() -> None:
    plan = plan_import(load_file(FIXTURES / "psconfig-example-5-classes.json"), [], register_unknown=True)
    meshes = {mesh.element: mesh for mesh in plan.meshes}
    throughput = meshes["groups.example-group-throughput"]
    latency = meshes["groups.example-group-latency"]
    assert [name for name, _ in throughput.members] == [f"host-{host}-thr.perfsonar.net" for host in "abc"]
    assert [name for name, _ in latency.members] == [f"host-{host}-lat.perfsonar.net" for host in "abc"]
    assert [test.test_type for test in throughput.tests] == ["throughput"]
    # Its latencybg task is Fathom's latency test, reporting every 60 s as powstream does.
    assert {test.name: (test.test_type, test.interval_s) for test in latency.tests} == {
        "example-task-latencybg": ("latency", 60),
        "example-task-trace": ("trace", 600),
    }
    assert [evaluation.name for evaluation in plan.address_classes] == ["throughput", "latency"]
    assert not [entry for entry in plan.unmapped if entry.element.startswith(("address-classes", "groups"))]


# --- each filter on its own ------------------------------------------------------------------


def template_with(classes: dict[str, Any], **addresses: dict[str, Any]) -> dict[str, Any]:
    """Four hosts (a, b with tags, c a host name, v6) and one mesh of the class "x"."""
    template: dict[str, Any] = {
        "addresses": {
            "a": {"address": "192.0.2.1", "tags": ["Core"], "host": "box-a"},
            "b": {"address": "192.0.2.130", "host": "box-b"},
            "c": {"address": "c.example.net"},
            "v6": {"address": "2001:db8::5"},
            **addresses,
        },
        "hosts": {"box-a": {"tags": ["lab"]}, "box-b": {"tags": ["LAB"], "no-agent": True}},
        "address-classes": classes,
        "groups": {"g": {"type": "mesh", "addresses": [{"class": "x"}]}},
        "tests": {"ping": {"type": "rtt", "spec": {"source": "{% address[0] %}", "dest": "{% address[1] %}"}}},
        "tasks": {"t": {"group": "g", "test": "ping"}},
    }
    return template


def selected(
    match: dict[str, Any] | None = None, exclude: dict[str, Any] | None = None, **others: Any
) -> tuple[str, ...]:
    spec: dict[str, Any] = {"data-source": {"type": "current-config"}}
    if match is not None:
        spec["match-filter"] = match
    if exclude is not None:
        spec["exclude-filter"] = exclude
    plan = plan_import(template_with({"x": spec, **others}), [])
    return next(evaluation.selected for evaluation in plan.address_classes if evaluation.name == "x")


def tag(name: str) -> dict[str, Any]:
    return {"type": "tag", "tag": name}


@pytest.mark.parametrize(
    ("match", "exclude", "expected"),
    [
        (None, None, ("a", "b", "c", "v6")),
        (tag("core"), None, ("a",)),  # the address's own tags, any case
        (tag("lab"), None, ("a", "b")),  # or its host's
        (None, tag("lab"), ("c", "v6")),
        ({"type": "host", "tag": "lab"}, None, ("a",)),  # host filters pick agents unless told no-agent
        ({"type": "host", "no-agent": True}, None, ("b",)),
        ({"type": "host"}, None, ("a",)),  # c and v6 have no host
        ({"type": "ip-version", "ip-version": 6}, None, ("v6",)),
        ({"type": "netmask", "netmask": "192.0.2.128/25"}, None, ("b",)),
        ({"type": "netmask", "netmask": "2001:db8::/32"}, None, ("v6",)),
        ({"type": "and", "filters": [tag("lab"), {"type": "host", "no-agent": True}]}, None, ("b",)),
        ({"type": "or", "filters": [tag("core"), {"type": "ip-version", "ip-version": 6}]}, None, ("a", "v6")),
        ({"type": "and", "filters": []}, None, ("a", "b", "c", "v6")),
        ({"type": "or", "filters": []}, None, ()),
        ({"type": "not", "filter": tag("lab")}, None, ("c", "v6")),
        ({"type": "address-class", "class": "labs"}, None, ("a", "b")),
        ({"type": "not", "filter": {"type": "address-class", "class": "labs"}}, None, ("c", "v6")),
        ({"type": "address-class", "class": "nowhere"}, None, ()),
    ],
)
def test_filters(match: dict[str, Any] | None, exclude: dict[str, Any] | None, expected: tuple[str, ...]) -> None:
    labs = {"data-source": {"type": "current-config"}, "match-filter": tag("lab")}
    assert selected(match, exclude, labs=labs) == expected


def test_an_address_no_filter_can_decide_is_left_out_even_under_not() -> None:
    """c is a host name: pSConfig would resolve it; Fathom leaves it out whichever way."""
    v4 = {"type": "ip-version", "ip-version": 4}
    assert selected(v4) == ("a", "b")
    assert selected({"type": "not", "filter": v4}) == ("v6",)
    assert selected({"type": "or", "filters": [v4, tag("nothing")]}) == ("a", "b")
    assert selected({"type": "or", "filters": [v4, {"type": "ip-version", "ip-version": 6}]}) == ("a", "b", "v6")
    assert selected(None, v4) == ("v6",)


def test_what_fathom_cannot_evaluate_selects_nothing_and_says_so() -> None:
    jq_inside = {"type": "or", "filters": [tag("lab"), {"type": "jq", "jq": {"script": ".tags"}}]}
    looped = {"data-source": {"type": "current-config"}, "match-filter": {"type": "address-class", "class": "x"}}
    for spec, why in (
        ({"data-source": {"type": "current-config"}, "match-filter": jq_inside}, "x.match-filter.filters[1] is a jq"),
        ({"data-source": {"type": "current-config"}, "exclude-filter": {"type": "host", "jq": {"script": "."}}}, "jq"),
        ({"data-source": {"type": "requesting-agent"}}, "requesting agent"),
        (looped, "refers back to class x"),
    ):
        plan = plan_import(template_with({"x": spec}), [])
        [evaluation] = plan.address_classes
        assert evaluation.selected == () and why in evaluation.notes[0], evaluation
        assert why in reasons(plan)["address-classes.x"][0]


def test_disabled_addresses_and_selectors_are_left_out_as_by_name() -> None:
    template = template_with({"x": {"data-source": {"type": "current-config"}}})
    template["addresses"]["b"]["disabled"] = True
    template["groups"]["g"]["addresses"].append({"class": "x", "disabled": True})
    agents = [KnownAgent(name, spec["address"], "fathom") for name, spec in template["addresses"].items()]
    plan = plan_import(template, agents)
    assert [name for name, _ in plan.meshes[0].members] == ["a", "c", "v6"]
    assert "disabled in this group" in reasons(plan)["groups.g.addresses[1]"][0]


def test_a_group_naming_an_undefined_class_is_refused_as_psconfig_would() -> None:
    template = template_with({})
    with pytest.raises(TemplateError, match=r"groups.g.addresses\[0\]: names address class x"):
        plan_import(copy.deepcopy(template), [])


def test_a_class_no_group_uses_is_reported() -> None:
    template = template_with(
        {"x": {"data-source": {"type": "current-config"}}, "spare": {"data-source": {"type": "current-config"}}}
    )
    plan = plan_import(template, [KnownAgent("a", "192.0.2.1", "fathom"), KnownAgent("b", "192.0.2.130", "fathom")])
    assert "no group that became a Fathom mesh" in reasons(plan)["address-classes.spare"][0]
    assert "address-classes.x" in plan.mapped
