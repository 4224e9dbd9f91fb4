"""What the path page draws on its shared time axis besides the rollups: every throughput run
with the ceilings that applied to it (TCP, paced, UDP; 1 or N streams), the hosts' tuning and
iperf3 version changes, each flow sweep's ECMP modes, the findings, and when Fathom's own
throughput tests loaded either host (own_load.py: the pings of those moments are left out of
the analysis, and the page greys them), over one range.

A fixed number of queries whatever the range; each list is capped (the newest kept) and says so.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, DateTimeField, DurationField, F, Func, Q, Value, Window

from analysis.models import Finding, RunAnalysis, SweepModes
from analysis.policer import from_ramp, ramp_steps
from analysis.services.inputs import as_dict
from inventory.models import Agent, HostFactsSnapshot
from measurements.choices import RunStatus, TestType
from measurements.models import Run

# Newest runs per direction, sweeps spread over the range per direction; findings and tuning
# snapshots per path. A year at four runs a day per direction is 1,460 runs: the cap binds
# only on denser schedules.
RUN_CAP = 1500
SWEEP_CAP = 1500
FINDING_CAP = 200
SNAPSHOT_CAP = 500
# Throughput tests on either host, merged into spans: a mesh of 50 agents testing each pair
# every 6 h loads one host about 400 times a day.
OWN_LOAD_CAP = 1500
# The facts whose change moves a ceiling or a result (the same keys the findings' annotations read).
TUNING_KEYS = ("kernel", "iperf3_version")
INTERFACE_KEYS = ("mtu", "speed_mbps")
TERMS = ("link", "receive_window", "send_buffer", "loss")


def _reversed_run() -> Q:
    return Q(params__reverse=True) | Q(summary__reverse=True)


def _data_flows(sender: uuid.UUID, receiver: uuid.UUID) -> Q:
    """Runs whose data flowed sender -> receiver: iperf3 -R makes the server send."""
    return (Q(source_id=sender, destination_id=receiver) & ~_reversed_run()) | (
        Q(source_id=receiver, destination_id=sender) & _reversed_run()
    )


def _positive_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass(frozen=True)
class Capped:
    rows: list[Any]
    capped: bool


def _newest(rows: Iterable[Any], cap: int) -> Capped:
    """Rows fetched newest first, cap + 1 of them: the newest `cap`, oldest first, and whether more were there."""
    listed = list(rows)
    return Capped(list(reversed(listed[:cap])), len(listed) > cap)


def _runs(sender: uuid.UUID, receiver: uuid.UUID, start: datetime, end: datetime, family: int) -> Capped:
    rows = (
        Run.objects.filter(
            _data_flows(sender, receiver),
            family=family,
            test_type=TestType.THROUGHPUT,
            status=RunStatus.OK,
            started_at__gte=start,
            started_at__lte=end,
        )
        .order_by("-started_at")
        .values_list(
            "id",
            "started_at",
            "source_id",
            "params",
            "summary__protocol",
            "summary__streams",
            "summary__iperf3_version",
            "summary__receiver_bits_per_s",
            "summary__sender_bits_per_s",
            "summary__lost_percent",
            "summary__ramp",
        )[: RUN_CAP + 1]
    )
    return _newest(rows, RUN_CAP)


def _analyses(
    a: uuid.UUID, b: uuid.UUID, since: datetime, end: datetime, family: int
) -> dict[uuid.UUID, tuple[Any, ...]]:
    """The stored analyses of the path's runs from `since` (the oldest run shown), both ways."""
    rows = RunAnalysis.objects.filter(
        Q(source_id=a, destination_id=b) | Q(source_id=b, destination_id=a),
        family=family,
        started_at__gte=since,
        started_at__lte=end,
    ).values_list(
        "run_id",
        "rate_bps",
        "ceiling_bps",
        "limit",
        "diagnosis",
        "ceilings__under_load__ceiling_bps",
        *(f"ceilings__at_min_rtt__terms__{term}__rate_bps" for term in TERMS),
    )
    return {row[0]: row[1:] for row in rows}


def run_point(row: tuple[Any, ...], analysis: tuple[Any, ...] | None) -> dict[str, Any]:
    """One run as the chart draws it: TCP rates and ceilings from its analysis when there is one."""
    run_id, started_at, client, params, protocol, streams, version, received, sent, lost_percent, ramp = row
    options = as_dict(params)
    udp = options.get("udp") is True or (isinstance(protocol, str) and protocol.upper() == "UDP")
    # -b on TCP or fq-rate paces the sender; UDP always runs at its offered rate.
    paced = bool(_positive_number(options.get("bitrate_bps")) or _positive_number(options.get("fq_rate_bps")))
    stream_count = streams if isinstance(streams, int) and streams > 0 else options.get("parallel")
    point: dict[str, Any] = {
        "t": started_at,
        "run_id": run_id,
        "protocol": "udp" if udp else "tcp",
        "paced": paced,
        "streams": stream_count if isinstance(stream_count, int) and stream_count > 0 else None,
        "rate_bps": _number(received),
        "offered_bps": _number(sent) if udp else None,
        "lost_fraction": lost / 100 if udp and (lost := _number(lost_percent)) is not None else None,
        "iperf3_version": version if isinstance(version, str) else "",
        "client": client,
        "diagnosis": None,
        "limit": None,
        "ceiling_bps": None,
        "ceiling_under_load_bps": None,
        "terms": None,
        "ramp": None,
        "ramp_lower_bound": None,
    }
    steps = ramp_steps({"ramp": ramp})
    estimate = from_ramp(steps, "") if steps else None
    if estimate is not None:  # a policer's ramp: its marker sits at the rate it measured
        point.update(
            rate_bps=estimate.rate_bps,
            ramp=[asdict(step) for step in steps],
            ramp_lower_bound=estimate.lower_bound,
        )
    if analysis is not None:
        rate, ceiling, limit, diagnosis, under_load, *terms = analysis
        point.update(
            rate_bps=rate if rate is not None else point["rate_bps"],
            diagnosis=diagnosis,
            limit=limit,
            ceiling_bps=ceiling,
            ceiling_under_load_bps=_number(under_load),
            terms=dict(zip(TERMS, (_number(term) for term in terms), strict=True)),
        )
    return point


def version_changes(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where a client's iperf3 version differs from its previous run's (runs oldest first)."""
    last: dict[uuid.UUID, str] = {}
    changes = []
    for point in sorted(points, key=lambda p: p["t"]):
        version, client = point["iperf3_version"], point["client"]
        if not version:
            continue
        if client in last and last[client] != version:
            changes.append({"t": point["t"], "agent": client, "old": last[client], "new": version})
        last[client] = version
    return changes


def facts_diff(old: object, new: object) -> dict[str, list[Any]]:
    """The tuning keys that differ between two host-facts reports, as {key: [old, new]}:
    each sysctl by its name, the kernel, iperf3, and each interface's MTU and speed."""
    before, after = as_dict(old), as_dict(new)
    changes: dict[str, list[Any]] = {}
    old_sysctls, new_sysctls = as_dict(before.get("sysctls")), as_dict(after.get("sysctls"))
    for key in sorted(set(old_sysctls) | set(new_sysctls)):
        if old_sysctls.get(key) != new_sysctls.get(key):
            changes[key] = [old_sysctls.get(key), new_sysctls.get(key)]
    for key in TUNING_KEYS:
        if before.get(key) != after.get(key):
            changes[key] = [before.get(key), after.get(key)]
    old_interfaces, new_interfaces = _interfaces(before), _interfaces(after)
    for identity in sorted(set(old_interfaces) | set(new_interfaces)):
        was_item, now_item = old_interfaces.get(identity, {}), new_interfaces.get(identity, {})
        name = now_item.get("name") or was_item.get("name") or identity
        for key in INTERFACE_KEYS:
            was, now = was_item.get(key), now_item.get(key)
            if was != now:
                changes[f"interfaces.{name}.{key}"] = [was, now]
    return changes


def _interfaces(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Interfaces by what identifies them across a reboot: their addresses other than
    link-local (a recreated interface gets a new name and fe80 address, and is the same
    link), or their name when they have none."""
    listed = facts.get("interfaces")
    items = [item for item in (listed if isinstance(listed, list) else []) if isinstance(item, dict)]
    by_identity: dict[str, dict[str, Any]] = {}
    for item in items:
        addresses = item.get("addresses")
        stable = sorted(
            address
            for address in (addresses if isinstance(addresses, list) else [])
            if isinstance(address, str) and not address.lower().startswith("fe80:")
        )
        name = item.get("name")
        identity = ",".join(stable) if stable else name if isinstance(name, str) else None
        if identity is not None:
            by_identity[identity] = item
    return by_identity


def _tuning_changes(agents: list[uuid.UUID], start: datetime, end: datetime) -> Capped:
    """Each change of either host's reported facts in the range, with what changed."""
    # The report before the range is what the first change in it is diffed against.
    before = list(
        HostFactsSnapshot.objects.filter(agent_id__in=agents, collected_at__lt=start)
        .order_by("agent_id", "-collected_at")
        .distinct("agent_id")
        .values_list("agent_id", "collected_at", "facts")
    )
    inside = _newest(
        HostFactsSnapshot.objects.filter(agent_id__in=agents, collected_at__gte=start, collected_at__lte=end)
        .order_by("-collected_at")
        .values_list("agent_id", "collected_at", "facts")[: SNAPSHOT_CAP + 1],
        SNAPSHOT_CAP,
    )
    changes = []
    rows = sorted([*before, *inside.rows], key=lambda row: (row[0], row[1]))
    for agent, snapshots in itertools.groupby(rows, key=lambda row: row[0]):
        for previous, current in itertools.pairwise(snapshots):
            diff = facts_diff(previous[2], current[2])
            if diff:
                changes.append({"t": current[1], "agent": agent, "changes": diff})
    changes.sort(key=lambda change: change["t"])
    return Capped(changes, inside.capped)


class TimeBucket(Func):
    function = "time_bucket"
    output_field = DateTimeField()


def _sweeps(sender: uuid.UUID, receiver: uuid.UUID, start: datetime, end: datetime, family: int) -> Capped:
    """At most SWEEP_CAP sweeps spread over the range: the newest of each 1/SWEEP_CAP of it
    (sweeps run every few minutes: the newest 1,500 alone would cover a year's last days).
    The buckets start at `start`, not at time_bucket's default origin (midnight), which would
    cut the range into SWEEP_CAP + 1 pieces; the extra microsecond keeps `end` inside the last."""
    width = max(timedelta(seconds=1), (end - start) / SWEEP_CAP + timedelta(microseconds=1))
    bucket = TimeBucket(
        Value(width, output_field=DurationField()), "started_at", Value(start, output_field=DateTimeField())
    )
    rows = (
        SweepModes.objects.filter(
            source_id=sender, destination_id=receiver, family=family, started_at__gte=start, started_at__lte=end
        )
        .annotate(bucket=bucket)
        .annotate(in_bucket=Window(Count("id"), partition_by=[F("bucket")]))
        .order_by("bucket", "-started_at")
        .distinct("bucket")
        .values_list("started_at", "verdict", "analysis__modes", "in_bucket", "bucket")
    )
    points = []
    thinned = False
    for started_at, verdict, modes, in_bucket, _bucket in rows:
        thinned = thinned or in_bucket > 1
        listed = [mode for mode in modes if isinstance(mode, dict)] if isinstance(modes, list) else []
        points.append(
            {
                "t": started_at,
                "verdict": verdict,
                "modes": [
                    {
                        "rtt_ms": _number(mode.get("rtt_ms")),
                        "share": _number(mode.get("share")),
                        "flow_count": mode.get("flow_count") if isinstance(mode.get("flow_count"), int) else 0,
                    }
                    for mode in listed
                ],
            }
        )
    return Capped(points, thinned)


def _findings(a: uuid.UUID, b: uuid.UUID, start: datetime, end: datetime, family: int) -> Capped:
    rows = (
        Finding.objects.filter(
            Q(source_id=a, destination_id=b) | Q(source_id=b, destination_id=a),
            Q(cleared_at__isnull=True) | Q(cleared_at__gte=start),
            family=family,
            started_at__lte=end,
        )
        .order_by("-started_at")
        .values(
            "id", "source_id", "metric", "kind", "state", "started_at", "detected_at", "cleared_at", "rules",
            "direction", "baseline", "current", "magnitude", "unit", "annotation", "evidence",
        )[: FINDING_CAP + 1]
    )  # fmt: skip
    capped = _newest(rows, FINDING_CAP)
    for row in capped.rows:
        row["path_direction"] = "forward" if row.pop("source_id") == a else "reverse"
    return capped


def _own_load(a: uuid.UUID, b: uuid.UUID, names: dict[uuid.UUID, str], start: datetime, end: datetime) -> Capped:
    """The spans when a throughput test (any status, UDP ramps included) ran with either host
    at either end, overlapping ones merged: [{start, end, tests}], tests naming each test's
    client -> server. These are the runs own_load.BUSY_CTE counts; it also counts the slots of
    tests not reported yet, which a chart need not show (their runs land within a minute).
    A host is loaded in every family: an IPv4 test loads the IPv6 path's hosts too."""
    rows = (
        Run.objects.filter(
            Q(source_id__in=(a, b)) | Q(destination_id__in=(a, b)),
            test_type=TestType.THROUGHPUT,
            started_at__lt=end,
            ended_at__gt=start,
        )
        .order_by("-started_at")
        .values_list("started_at", "ended_at", "source_id", "destination_id")[: OWN_LOAD_CAP + 1]
    )
    capped = _newest(rows, OWN_LOAD_CAP)
    others = {agent for row in capped.rows for agent in row[2:]} - set(names) - {None}
    known = {**names, **dict(Agent.objects.filter(pk__in=others).values_list("id", "name"))}
    spans: list[dict[str, Any]] = []
    for started_at, ended_at, source_id, destination_id in capped.rows:
        test = f"{known.get(source_id, '?')}->{known.get(destination_id, 'a target')}"
        if spans and started_at <= spans[-1]["end"]:
            spans[-1]["end"] = max(spans[-1]["end"], ended_at)
            if test not in spans[-1]["tests"]:
                spans[-1]["tests"].append(test)
        else:
            spans.append({"start": started_at, "end": ended_at, "tests": [test]})
    return Capped(spans, capped.capped)


def _direction(
    sender: uuid.UUID, receiver: uuid.UUID, start: datetime, end: datetime, family: int
) -> tuple[Capped, Capped]:
    return _runs(sender, receiver, start, end, family), _sweeps(sender, receiver, start, end, family)


def path_timeline(source: Agent, destination: Agent, start: datetime, end: datetime, family: int = 4) -> dict[str, Any]:
    """Both directions of the path (in one family) over [start, end], as the timeline API
    returns them."""
    a, b = source.pk, destination.pk
    names = {a: source.name, b: destination.name}
    forward_runs, forward_sweeps = _direction(a, b, start, end, family)
    reverse_runs, reverse_sweeps = _direction(b, a, start, end, family)
    shown = [row[1] for row in forward_runs.rows[:1] + reverse_runs.rows[:1]]
    analyses = _analyses(a, b, min(shown), end, family) if shown else {}
    forward = [run_point(row, analyses.get(row[0])) for row in forward_runs.rows]
    reverse = [run_point(row, analyses.get(row[0])) for row in reverse_runs.rows]
    tuning = _tuning_changes([a, b], start, end)
    findings = _findings(a, b, start, end, family)
    own_load = _own_load(a, b, names, start, end)

    def agent(agent_id: uuid.UUID) -> dict[str, Any]:
        return {"id": agent_id, "name": names.get(agent_id, str(agent_id))}

    def direction(points: list[dict[str, Any]], capped: bool, sweeps: Capped) -> dict[str, Any]:
        return {
            "runs": [{**point, "client": agent(point["client"])} for point in points],
            "runs_capped": capped,
            "sweeps": sweeps.rows,
            "sweeps_capped": sweeps.capped,
        }

    def by_agent(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**change, "agent": agent(change["agent"])} for change in changes]

    return {
        "source": agent(a),
        "destination": agent(b),
        "family": family,
        "from": start,
        "to": end,
        "run_cap": RUN_CAP,
        "forward": direction(forward, forward_runs.capped, forward_sweeps),
        "reverse": direction(reverse, reverse_runs.capped, reverse_sweeps),
        "iperf3_changes": by_agent(version_changes(forward + reverse)),
        "tuning_changes": by_agent(tuning.rows),
        "tuning_capped": tuning.capped,
        "findings": findings.rows,
        "findings_capped": findings.capped,
        "own_load": own_load.rows,
        "own_load_capped": own_load.capped,
    }
