"""What a node runs for a Fathom latency test: twping towards an agent (TWAMP, the agent's
TWAMP-Control server), powstream's latencybg towards another node (OWAMP, its owampd)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from inventory.choices import AgentKind
from inventory.models import Agent
from meshes.specs import normalize_spec
from perfsonar.wanted import latency_test

AGENT = Agent(name="athens", address="198.18.1.1", kind=AgentKind.FATHOM)
NODE = Agent(name="ps-porto", address="198.18.9.2", kind=AgentKind.PERFSONAR)


def test_towards_an_agent_twping_fits_its_runs_in_the_report_interval() -> None:
    options = normalize_spec("latency", {"report_interval_s": 30, "packet_interval_s": 0.05, "dscp": 46, "port": 8620})
    test, tools = latency_test(AGENT, options)
    assert tools == ["twping"] and test["type"] == "latency"
    spec = test["spec"]
    # 30 s less the 2 s packet timeout and twping's control session: 24 s of packets.
    assert spec["packet-count"] == 480 and spec["packet-interval"] == 0.05
    assert spec["ctrl-port"] == 8620
    assert spec["dest"] == "198.18.1.1" and spec["ip-tos"] == 46


@override_settings(PERFSONAR_TASK_TTL_S=6 * 3600)
def test_towards_a_node_latencybg_reports_each_interval_for_the_tasks_life() -> None:
    test, tools = latency_test(NODE, normalize_spec("latency", {}))
    assert tools == ["powstream"] and test["type"] == "latencybg"
    assert test["spec"]["packet-count"] == 600 and test["spec"]["duration"] == "PT6H"
    assert "ctrl-port" not in test["spec"]


def test_the_way_back_from_an_agent_is_twping_reporting_in_reverse() -> None:
    options = normalize_spec("latency", {"port": 8620})
    test, tools = latency_test(AGENT, options, reported_back=True)
    assert tools == ["twping"] and test["type"] == "latency"
    # pScheduler's latency spec has reverse from its schema 2.
    assert test["spec"]["reverse"] is True and test["spec"]["schema"] == 2
    assert test["spec"]["dest"] == "198.18.1.1" and test["spec"]["ctrl-port"] == 8620
    with pytest.raises(ValueError, match="each leads its own direction"):
        latency_test(NODE, options, reported_back=True)
