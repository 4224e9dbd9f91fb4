"""What the meshes want perfSONAR nodes to run: one pScheduler task per path a node leads.

- ping and trace from a node: one repeating rtt or trace task per path, on the node;
- latency from a node: towards a Fathom agent, a repeating single-participant latency task
  run by twping (TWAMP), one run a report interval, against the agent's TWAMP-Control server
  and reflector (the agent admits the node as a planned peer); towards another node,
  pScheduler's own latencybg (powstream), which runs without pause and reports each
  interval's packets;
- latency from a Fathom agent to a node: the agent's TWAMP-light sender finds no reflector on
  a node (twampd answers only sessions set up over TWAMP-Control), so the node measures that
  direction too: a twping task towards the agent with `reverse`, which reports the reflected
  half of each packet's trip, agent to node;
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
import math
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
from perfsonar.psconfig.spec_map import spec_to_pscheduler


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


# twping's control session takes 3-3.5 s beyond its packets (twping_defaults.py's fudge
# factor): a run's packets leave that much of the report interval free, so the next run of
# the repeating task starts on time.
TWPING_SETUP_S = 4.0


def latency_test(
    destination: Agent, options: dict[str, Any], *, reported_back: bool = False, address: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The pScheduler test and tools of a node's latency test towards `destination` (at
    `address`, its address in the path's family; its primary by default); with reported_back
    (towards an agent only), the twping run reports the way back, agent to node."""
    spec = {key: value for key, value in spec_to_pscheduler(TestType.LATENCY, options).items() if key != "packet-count"}
    spec["dest"] = address or destination.address
    if is_node(destination):
        if reported_back:
            raise ValueError("between two nodes each leads its own direction: nothing is reported back")
        # powstream reports every packet-count packets: that is the report interval. Its one
        # run lasts `duration` (100 years by default): the task's life, renewed as the others.
        count = round(options["report_interval_s"] / options["packet_interval_s"])
        duration = format_duration(float(settings.PERFSONAR_TASK_TTL_S))
        return {"type": "latencybg", "spec": {**spec, "packet-count": count, "duration": duration}}, ["powstream"]
    usable_s = options["report_interval_s"] - options["packet_timeout_s"] - TWPING_SETUP_S
    spec.update(
        {
            # A hair over the quotient: 24 / 0.05 is 479.99... in binary.
            "packet-count": max(1, math.floor(usable_s / options["packet_interval_s"] + 1e-9)),
            # The node alone takes part (pScheduler's latency test leads from its source): its
            # twping is the client, the agent's TWAMP-Control server on this port the far end.
            "ctrl-port": int(options["port"]),
        }
    )
    if reported_back:
        # The spec's reverse (schema 2): twping reports each packet's reflected half.
        spec.update({"reverse": True, "schema": max(2, int(spec.get("schema", 1)))})
    return {"type": "latency", "spec": spec}, ["twping"]


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
        spec.update({"source": source.address, "dest": destination.address_in(slot.family)})
        if fathom_reverse:
            spec["reverse"] = True
    else:
        # Led by the node; its iperf3 client meets the agent's one-off server. When the agent
        # sends, pScheduler reverses the node's client.
        agent = destination if is_node(source) else source
        spec.update(
            {
                "schema": 2,
                "dest": agent.address_in(slot.family),
                "single-ended": True,
                "single-ended-port": int(settings.PERFSONAR_IPERF3_PORT),
            }
        )
        if (agent.pk == source.pk) != fathom_reverse:
            spec["reverse"] = True
    return {"type": "throughput", "spec": spec}


def _background(path: Path) -> DesiredTask | None:
    """The repeating task a node runs for a background path: one it leads, or a latency path
    from a Fathom agent towards it, which the node measures by twping towards the agent
    reporting the way back (the result is the agent's, as if the agent had measured it)."""
    source, destination, test = path.source, path.destination, path.test
    reported_back = not is_node(source)
    if reported_back and (test.test_type != TestType.LATENCY or destination is None or not is_node(destination)):
        return None
    if test.test_type not in (TestType.PING, TestType.TRACE, TestType.LATENCY):
        return None
    lead = destination if reported_back and destination is not None else source
    options = normalize_spec(test.test_type, test.spec)
    tools: list[str] = []
    repeat_s = test.interval_s
    if test.test_type == TestType.LATENCY:
        if destination is None:
            return None  # a device's reflector answers TWAMP-light only: twping needs TWAMP-Control
        far = source if reported_back else destination
        address = source.address_in(path.family) if reported_back else path.target
        ps_test, tools = latency_test(far, options, reported_back=reported_back, address=address)
        # A latencybg runs without pause (the task's run lasts until the task does).
        repeat_s = 0 if ps_test["type"] == "latencybg" else int(options["report_interval_s"])
    elif test.test_type == TestType.PING:
        ps_test = rtt_test(path.target, options)
    else:
        ps_test = trace_test(path.target, options)
    far_end = str(destination.pk) if destination is not None else path.target
    key = f"bg:{test.pk}:{source.pk}:{far_end}:{_digest([ps_test, repeat_s, test.slip_s])}"
    return DesiredTask(
        key=key,
        node=lead.perfsonar_node,
        mesh_test=test,
        slot=None,
        test_type=test.test_type,
        source=source,
        destination=destination,
        target=path.target,
        test_id=path.test_id,
        test=ps_test,
        tools=tools,
        repeat_s=repeat_s,
        # A latency run fills its interval: slipping it would overlap the next one.
        slip_s=0 if test.test_type == TestType.LATENCY else min(test.slip_s, test.interval_s),
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
        target=destination.address_in(slot.family),
        test_id=mesh_test_id(test.mesh.name, test.name, str(destination.pk), slot.family),
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
        led_by_node = path.source.pk in nodes or (path.destination is not None and path.destination.pk in nodes)
        if led_by_node and (task := _background(path)) is not None:
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
