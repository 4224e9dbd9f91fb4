"""Ingest of result batches from agents: validate everything, then store all or nothing.

The batch contract is contract/result-batch.v1.schema.json, which the Go agent's tests
validate the same example files against. After the schema come the checks a schema cannot
express (time order, consistent counts, known peers). A batch with any error stores
nothing; a valid batch is written in one transaction, and ids already stored are reported
as duplicates (an agent retrying after a lost answer), never written twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from jsonschema import Draft202012Validator

from core import contract
from inventory.models import Agent
from measurements.models import FlowSample, PathLatestRun, PingSample, Run, ThroughputInterval, TracePath
from meshes.services import record_slot_outcomes

SCHEMA_NAME = "result-batch.v1.schema.json"
MAX_REPORTED_ERRORS = 50
# An agent clock this far ahead is wrong; storing its results would corrupt time ranges.
MAX_CLOCK_AHEAD = timedelta(minutes=10)


@dataclass(frozen=True)
class BatchError:
    path: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class InvalidBatch(Exception):
    """The batch breaks the contract; nothing was stored."""

    def __init__(self, errors: list[BatchError]) -> None:
        super().__init__(f"{len(errors)} error(s) in result batch")
        self.errors = errors[:MAX_REPORTED_ERRORS]


@dataclass(frozen=True)
class ItemStatus:
    id: str
    status: str  # "created" or "duplicate"


@cache
def batch_validator() -> Draft202012Validator:
    return contract.validator(SCHEMA_NAME)


def schema_errors(payload: Any) -> list[BatchError]:
    errors = sorted(batch_validator().iter_errors(payload), key=lambda error: list(error.absolute_path))
    return [
        BatchError("/".join(str(part) for part in error.absolute_path) or "(batch)", error.message)
        for error in errors[:MAX_REPORTED_ERRORS]
    ]


def _timestamp(value: str) -> datetime:
    parsed = parse_datetime(value)
    if parsed is None:  # the schema's pattern already guarantees a parseable value
        raise ValueError(value)
    return parsed


def semantic_errors(results: list[dict[str, Any]], known_peers: set[uuid.UUID], now: datetime) -> list[BatchError]:
    errors: list[BatchError] = []
    seen: set[str] = set()
    for index, result in enumerate(results):
        where = f"results/{index}"
        if result["id"] in seen:
            errors.append(BatchError(f"{where}/id", f"id {result['id']} appears twice in this batch"))
        seen.add(result["id"])
        started_at, ended_at = _timestamp(result["started_at"]), _timestamp(result["ended_at"])
        if ended_at < started_at:
            errors.append(BatchError(f"{where}/ended_at", "ended_at is before started_at"))
        if started_at > now + MAX_CLOCK_AHEAD:
            errors.append(BatchError(f"{where}/started_at", "started_at is in the future: is the agent's clock right?"))
        peer_id = result.get("peer_id")
        if peer_id is not None and uuid.UUID(peer_id) not in known_peers:
            errors.append(BatchError(f"{where}/peer_id", f"unknown peer agent {peer_id}"))
        ping = result.get("ping")
        if ping is not None:
            errors.extend(_ping_errors(f"{where}/ping", ping))
        if result.get("throughput") is not None:
            errors.extend(_throughput_errors(f"{where}/throughput", result["throughput"]))
        if result.get("flowsweep") is not None:
            errors.extend(_flowsweep_errors(f"{where}/flowsweep", result["flowsweep"]))
        if result.get("trace") is not None:
            errors.extend(_trace_errors(f"{where}/trace", result["trace"]))
    return errors


def _throughput_errors(where: str, throughput: dict[str, Any]) -> list[BatchError]:
    errors = []
    for index, interval in enumerate(throughput["intervals"]):
        if interval["end_s"] < interval["start_s"]:
            errors.append(BatchError(f"{where}/intervals/{index}/end_s", "end_s is before start_s"))
    if len(throughput["stream_summaries"]) > throughput["streams"]:
        errors.append(BatchError(f"{where}/stream_summaries", "more stream summaries than streams"))
    return errors


def _flowsweep_errors(where: str, sweep: dict[str, Any]) -> list[BatchError]:
    """Every sample must name a flow and round of this sweep, each at most once."""
    errors = []
    seen: set[tuple[int, int]] = set()
    for index, sample in enumerate(sweep["samples"]):
        key = (sample["flow"], sample["seq"])
        if sample["flow"] >= sweep["flows"]:
            errors.append(BatchError(f"{where}/samples/{index}/flow", f"flow {sample['flow']} of {sweep['flows']}"))
        elif sample["seq"] >= sweep["samples_per_flow"]:
            errors.append(
                BatchError(f"{where}/samples/{index}/seq", f"seq {sample['seq']} of {sweep['samples_per_flow']}")
            )
        elif key in seen:
            errors.append(BatchError(f"{where}/samples/{index}", f"flow {key[0]} seq {key[1]} appears twice"))
        seen.add(key)
    return errors


def _trace_errors(where: str, trace: dict[str, Any]) -> list[BatchError]:
    errors = []
    flows: set[int] = set()
    for index, flow in enumerate(trace["flows"]):
        if flow["flow"] in flows:
            errors.append(BatchError(f"{where}/flows/{index}/flow", f"flow {flow['flow']} appears twice"))
        flows.add(flow["flow"])
        ttls = [hop["ttl"] for hop in flow["hops"]]
        if ttls != sorted(set(ttls)):
            errors.append(BatchError(f"{where}/flows/{index}/hops", "hop TTLs must be increasing and distinct"))
        if ttls and ttls[-1] > trace["max_hops"]:
            errors.append(BatchError(f"{where}/flows/{index}/hops", f"a hop beyond max_hops {trace['max_hops']}"))
    return errors


def _ping_errors(where: str, ping: dict[str, Any]) -> list[BatchError]:
    """Counts must agree with the samples, or loss computed from samples would lie."""
    errors = []
    samples = ping["samples"]
    originals = [sample for sample in samples if not sample["duplicate"]]
    replies = [sample for sample in originals if sample["rtt_ms"] is not None]
    if ping["received"] > ping["transmitted"]:
        errors.append(BatchError(f"{where}/received", "received exceeds transmitted"))
    if len(originals) != ping["transmitted"]:
        errors.append(
            BatchError(
                f"{where}/samples", f"{len(originals)} non-duplicate samples for {ping['transmitted']} transmitted"
            )
        )
    if len(replies) != ping["received"]:
        errors.append(
            BatchError(f"{where}/samples", f"{len(replies)} answered samples for {ping['received']} received")
        )
    if len(samples) - len(originals) != ping["duplicates"]:
        errors.append(BatchError(f"{where}/duplicates", "duplicates does not match the duplicate samples"))
    return errors


def ingest_batch(agent: Agent, payload: Any, now: datetime | None = None) -> list[ItemStatus]:
    """Validates and stores a batch from `agent`; raises InvalidBatch and stores nothing on error."""
    errors = schema_errors(payload)
    if errors:
        raise InvalidBatch(errors)
    results: list[dict[str, Any]] = payload["results"]
    peer_ids = {uuid.UUID(result["peer_id"]) for result in results if result.get("peer_id")}
    known_peers = set(Agent.objects.filter(pk__in=peer_ids).values_list("pk", flat=True))
    errors = semantic_errors(results, known_peers, now or timezone.now())
    if errors:
        raise InvalidBatch(errors)
    return _store(agent, results)


def _store(agent: Agent, results: list[dict[str, Any]]) -> list[ItemStatus]:
    ids = [uuid.UUID(result["id"]) for result in results]
    received_at = timezone.now()
    with transaction.atomic():
        # Serialises concurrent batches of one agent, so a retry racing its original cannot
        # slip past the duplicate check below.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"ingest:{agent.pk}"])
        stored = set(Run.objects.filter(id__in=ids).values_list("id", flat=True))
        new = [result for result in results if uuid.UUID(result["id"]) not in stored]
        Run.objects.bulk_create(_run_row(agent, result, received_at) for result in new)
        PingSample.objects.bulk_create(_ping_rows(agent, new), batch_size=5000)
        ThroughputInterval.objects.bulk_create(_throughput_rows(agent, new), batch_size=5000)
        FlowSample.objects.bulk_create(_flow_rows(agent, new), batch_size=5000)
        TracePath.objects.bulk_create(_trace_rows(agent, new), batch_size=1000)
        _update_latest_runs(agent, new)
        record_slot_outcomes(agent, new)
    return [ItemStatus(str(run_id), "duplicate" if run_id in stored else "created") for run_id in ids]


def _params_and_summary(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the run asked for and what it found, in the shape path queries and analysis read."""
    if (ping := result.get("ping")) is not None:
        return {key: ping[key] for key in ("count", "interval_s", "size_bytes", "ttl") if key in ping}, _ping_summary(
            ping
        )
    if (throughput := result.get("throughput")) is not None:
        # The end summary's figures at the top, beside what the kernel and iperf3 granted.
        details = {key: value for key, value in throughput.items() if key not in ("options", "intervals", "summary")}
        return throughput["options"], {**throughput["summary"], **details}
    if (sweep := result.get("flowsweep")) is not None:
        return {key: value for key, value in sweep.items() if key != "samples"}, _flowsweep_summary(sweep)
    if (trace := result.get("trace")) is not None:
        return {key: value for key, value in trace.items() if key != "flows"}, _trace_summary(trace)
    return {}, {}


def _flowsweep_summary(sweep: dict[str, Any]) -> dict[str, Any]:
    rtts = [sample["rtt_ms"] for sample in sweep["samples"] if sample["rtt_ms"] is not None]
    per_flow: dict[int, float] = {}
    for sample in sweep["samples"]:
        if sample["rtt_ms"] is not None:
            per_flow[sample["flow"]] = min(per_flow.get(sample["flow"], sample["rtt_ms"]), sample["rtt_ms"])
    return {
        "sent": len(sweep["samples"]),
        "answered": len(rtts),
        "rtt_min_ms": min(rtts) if rtts else None,
        "rtt_max_ms": max(rtts) if rtts else None,
        "flow_min_rtt_ms": {str(flow): rtt for flow, rtt in sorted(per_flow.items())},
    }


def _trace_summary(trace: dict[str, Any]) -> dict[str, Any]:
    fingerprints = sorted({flow["fingerprint"] for flow in trace["flows"]})
    return {
        "flows": len(trace["flows"]),
        "reached": sum(1 for flow in trace["flows"] if flow["reached"]),
        "distinct_paths": len(fingerprints),
        "fingerprints": fingerprints,
    }


def _run_row(agent: Agent, result: dict[str, Any], received_at: datetime) -> Run:
    params, summary = _params_and_summary(result)
    return Run(
        id=uuid.UUID(result["id"]),
        started_at=_timestamp(result["started_at"]),
        ended_at=_timestamp(result["ended_at"]),
        agent_id=agent.pk,
        peer_id=uuid.UUID(result["peer_id"]) if result.get("peer_id") else None,
        target=result["target"],
        test_type=result["test_type"],
        test_id=result["test_id"],
        plan_version=result.get("plan_version", ""),
        status=result["status"],
        error=result["error"],
        received_at=received_at,
        slot_id=uuid.UUID(result["slot_id"]) if result.get("slot_id") else None,
        params=params,
        summary=summary,
    )


def _ping_summary(ping: dict[str, Any]) -> dict[str, Any]:
    rtts = sorted(s["rtt_ms"] for s in ping["samples"] if not s["duplicate"] and s["rtt_ms"] is not None)
    transmitted = ping["transmitted"]
    return {
        "transmitted": transmitted,
        "received": ping["received"],
        "duplicates": ping["duplicates"],
        "errors": ping["errors"],
        "loss_fraction": (transmitted - ping["received"]) / transmitted if transmitted else None,
        "rtt_min_ms": rtts[0] if rtts else None,
        "rtt_median_ms": rtts[len(rtts) // 2] if rtts else None,
        "rtt_max_ms": rtts[-1] if rtts else None,
    }


def _ping_rows(agent: Agent, results: Iterable[dict[str, Any]]) -> Iterable[PingSample]:
    for result in results:
        ping = result.get("ping")
        if ping is None:
            continue
        run_id = uuid.UUID(result["id"])
        peer_id = uuid.UUID(result["peer_id"]) if result.get("peer_id") else None
        for index, sample in enumerate(ping["samples"]):
            yield PingSample(
                time=_timestamp(sample["time"]),
                run_id=run_id,
                sample_index=index,
                agent_id=agent.pk,
                peer_id=peer_id,
                seq=sample["seq"],
                rtt_ms=sample["rtt_ms"],
                ttl=sample["ttl"],
                duplicate=sample["duplicate"],
                error=sample.get("error", ""),
            )


def _path_ids(result: dict[str, Any]) -> tuple[uuid.UUID, uuid.UUID | None]:
    return uuid.UUID(result["id"]), uuid.UUID(result["peer_id"]) if result.get("peer_id") else None


def _throughput_rows(agent: Agent, results: Iterable[dict[str, Any]]) -> Iterable[ThroughputInterval]:
    for result in results:
        throughput = result.get("throughput")
        if throughput is None:
            continue
        run_id, peer_id = _path_ids(result)
        started_at = _timestamp(result["started_at"])
        # iperf3 restarts its clock after the omitted (slow-start) seconds.
        omit_s = throughput["omit_s"]
        for index, interval in enumerate(throughput["intervals"]):
            offset_s = interval["end_s"] + (0 if interval["omitted"] else omit_s)
            yield ThroughputInterval(
                time=started_at + timedelta(seconds=offset_s),
                run_id=run_id,
                interval_index=index,
                agent_id=agent.pk,
                peer_id=peer_id,
                stream=interval["stream"],
                start_s=interval["start_s"],
                end_s=interval["end_s"],
                omitted=interval["omitted"],
                sender=interval["sender"],
                bytes=interval["bytes"],
                bits_per_s=interval["bits_per_s"],
                retransmits=interval["retransmits"],
                snd_cwnd_bytes=interval["snd_cwnd"],
                snd_wnd_bytes=interval["snd_wnd"],
                rtt_us=interval["rtt_us"],
                rttvar_us=interval["rttvar_us"],
                pmtu=interval["pmtu"],
                packets=interval["packets"],
                jitter_ms=interval["jitter_ms"],
                lost_packets=interval["lost_packets"],
            )


def _flow_rows(agent: Agent, results: Iterable[dict[str, Any]]) -> Iterable[FlowSample]:
    for result in results:
        sweep = result.get("flowsweep")
        if sweep is None:
            continue
        run_id, peer_id = _path_ids(result)
        for index, sample in enumerate(sweep["samples"]):
            yield FlowSample(
                time=_timestamp(sample["time"]),
                run_id=run_id,
                sample_index=index,
                agent_id=agent.pk,
                peer_id=peer_id,
                flow=sample["flow"],
                src_port=sample["src_port"],
                seq=sample["seq"],
                rtt_ms=sample["rtt_ms"],
                error=sample.get("error", ""),
            )


def _trace_rows(agent: Agent, results: Iterable[dict[str, Any]]) -> Iterable[TracePath]:
    for result in results:
        trace = result.get("trace")
        if trace is None:
            continue
        run_id, peer_id = _path_ids(result)
        for flow in trace["flows"]:
            yield TracePath(
                time=_timestamp(result["started_at"]),
                run_id=run_id,
                flow=flow["flow"],
                agent_id=agent.pk,
                peer_id=peer_id,
                src_port=flow["src_port"],
                reached=flow["reached"],
                fingerprint=flow["fingerprint"],
                hop_count=len(flow["hops"]),
                hops=flow["hops"],
            )


def _update_latest_runs(agent: Agent, results: list[dict[str, Any]]) -> None:
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        if not result.get("peer_id"):
            continue
        key = (result["peer_id"], result["test_type"])
        if key not in latest or _timestamp(result["started_at"]) > _timestamp(latest[key]["started_at"]):
            latest[key] = result
    for (peer_id, test_type), result in latest.items():
        started_at = _timestamp(result["started_at"])
        updated = PathLatestRun.objects.filter(
            Q(started_at__lt=started_at), source=agent, destination_id=uuid.UUID(peer_id), test_type=test_type
        ).update(run_id=result["id"], started_at=started_at, status=result["status"])
        if not updated:
            PathLatestRun.objects.get_or_create(
                source=agent,
                destination_id=uuid.UUID(peer_id),
                test_type=test_type,
                defaults={"run_id": result["id"], "started_at": started_at, "status": result["status"]},
            )
