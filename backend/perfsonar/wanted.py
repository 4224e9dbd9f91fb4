"""What the meshes want perfSONAR nodes to run: one pScheduler task per path a node leads.

- ping and trace from a node: one repeating rtt or trace task per path, on the node;
- throughput with a node at either end: the central planner reserves the slot as for any
  pair (a node's exclusive time is modelled like an agent's), and the node gets one one-shot
  task starting exactly at the slot. Between two nodes it is pScheduler's two-ended test;
  with a Fathom agent it is a single-ended test against the one-off iperf3 server the agent
  opens for that slot (reverse when the agent sends), so the agent's exclusive time is the
  slot and nothing else.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q

from inventory.choices import AgentKind
from inventory.models import Agent
from measurements.choices import TestType
from meshes.choices import SlotState
from meshes.models import MeshTest, Slot
from meshes.services.paths import Path, mesh_paths, mesh_test_id
from meshes.specs import normalize_spec
from perfsonar.durations import format_duration
from perfsonar.models import Node


@dataclass(frozen=True)
class DesiredTask:
    key: str
    node: Node
    mesh_test: MeshTest
    slot: Slot | None
    test_type: str
    source: Agent
    destination: Agent | None
    target: str
    test_id: str
    test: dict[str, Any]  # pScheduler's {type, spec}
    tools: list[str]
    repeat_s: int  # 0: one run
    slip_s: int
    starts_at: datetime | None  # one-shot tasks: exactly this
    ends_at: datetime | None


def is_node(agent: Agent | None) -> bool:
    return agent is not None and agent.kind == AgentKind.PERFSONAR


def _seconds(value: float) -> str:
    return format_duration(float(value))


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


# --- what the meshes want --------------------------------------------------------------


def rtt_test(target: str, options: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schema": 1,
        "dest": target,
        "count": int(options["count"]),
        "interval": _seconds(options["interval_s"]),
        "length": int(options["size_bytes"]),
    }
    if options.get("ttl"):
        spec["ttl"] = int(options["ttl"])
    return {"type": "rtt", "spec": spec}


def trace_test(target: str, options: dict[str, Any]) -> dict[str, Any]:
    # pScheduler traces one path per run: Fathom's per-flow enumeration (flows, source ports)
    # has no equivalent, so a node's trace shows the route its default flow takes.
    return {
        "type": "trace",
        "spec": {
            "schema": 1,
            "dest": target,
            "queries": int(options["queries"]),
            "wait": _seconds(options["wait_s"]),
            "hops": int(options["max_hops"]),
            "probe-type": "udp",
            "dest-port": int(options["dst_port"]),
        },
    }


def throughput_test(slot: Slot, source: Agent, destination: Agent) -> dict[str, Any]:
    options = slot.spec
    spec: dict[str, Any] = {"schema": 1, "duration": _seconds(options["duration_s"])}
    if options.get("omit_s"):
        spec["omit"] = _seconds(options["omit_s"])
    if int(options.get("parallel") or 1) > 1:
        spec["parallel"] = int(options["parallel"])
    if options.get("window_bytes"):
        spec["window-size"] = int(options["window_bytes"])
    if options.get("udp"):
        spec["udp"] = True
        spec["bandwidth"] = int(options["bitrate_bps"])
    elif options.get("bitrate_bps"):
        spec["bandwidth"] = int(options["bitrate_bps"])
    if options.get("congestion"):
        spec["congestion"] = options["congestion"]
    if options.get("mss"):
        spec["mss"] = int(options["mss"])
    fathom_reverse = bool(options.get("reverse"))
    if is_node(source) and is_node(destination):
        spec.update({"source": source.address, "dest": destination.address})
        if fathom_reverse:
            spec["reverse"] = True
    else:
        # Led by the node; its iperf3 client meets the agent's one-off server. When the agent
        # sends, pScheduler reverses the node's client.
        agent = destination if is_node(source) else source
        spec.update(
            {
                "schema": 2,
                "dest": agent.address,
                "single-ended": True,
                "single-ended-port": int(settings.PERFSONAR_IPERF3_PORT),
            }
        )
        if (agent.pk == source.pk) != fathom_reverse:
            spec["reverse"] = True
    return {"type": "throughput", "spec": spec}


def _background(path: Path) -> DesiredTask | None:
    source, test = path.source, path.test
    if not is_node(source) or test.test_type not in (TestType.PING, TestType.TRACE):
        return None
    options = normalize_spec(test.test_type, test.spec)
    ps_test = rtt_test(path.target, options) if test.test_type == TestType.PING else trace_test(path.target, options)
    far_end = str(path.destination.pk) if path.destination is not None else path.target
    key = f"bg:{test.pk}:{source.pk}:{far_end}:{_digest([ps_test, test.interval_s, test.slip_s])}"
    return DesiredTask(
        key=key,
        node=source.perfsonar_node,
        mesh_test=test,
        slot=None,
        test_type=test.test_type,
        source=source,
        destination=path.destination,
        target=path.target,
        test_id=mesh_test_id(test.mesh.name, test.name, far_end),
        test=ps_test,
        tools=[],
        repeat_s=test.interval_s,
        slip_s=min(test.slip_s, test.interval_s),
        starts_at=None,
        ends_at=None,
    )


def slot_task(slot: Slot) -> DesiredTask:
    source, destination = slot.source, slot.destination
    lead = source if is_node(source) else destination
    test = slot.mesh_test
    assert test is not None
    return DesiredTask(
        key=f"slot:{slot.pk}",
        node=lead.perfsonar_node,
        mesh_test=test,
        slot=slot,
        test_type=slot.test_type,
        source=source,
        destination=destination,
        target=destination.address,
        test_id=mesh_test_id(test.mesh.name, test.name, str(destination.pk)),
        test=throughput_test(slot, source, destination),
        tools=["iperf3"],
        repeat_s=0,
        slip_s=0,
        starts_at=slot.start_at,
        ends_at=slot.end_at,
    )


def desired_background() -> list[DesiredTask]:
    paths = mesh_paths(exclusive=False)
    nodes = {agent.pk for agent in Agent.objects.filter(kind=AgentKind.PERFSONAR, revoked_at__isnull=True)}
    wanted = []
    for path in paths:
        if path.source.pk in nodes and (task := _background(path)) is not None:
            wanted.append(task)
    return wanted


def slots_for_nodes(now: datetime) -> list[Slot]:
    """Planned throughput slots with a node at one end, starting soon enough to be given to
    the node and late enough for pScheduler to place them."""
    with_node = Q(source__kind=AgentKind.PERFSONAR) | Q(destination__kind=AgentKind.PERFSONAR)
    return list(
        Slot.objects.filter(
            with_node,
            state=SlotState.PLANNED,
            mesh_test__isnull=False,
            start_at__gte=now + timedelta(seconds=settings.PERFSONAR_SLOT_TASK_MIN_LEAD_S),
            start_at__lte=now + timedelta(seconds=settings.PERFSONAR_SLOT_TASK_AHEAD_S),
        ).select_related("source__perfsonar_node", "destination__perfsonar_node", "mesh_test__mesh")
    )
