"""Ingest of result batches from agents: validate everything, then store all or nothing.

The batch contract is contract/result-batch.v1.schema.json, which the Go agent's tests
validate the same example files against. After the schema come the checks a schema cannot
express (time order, consistent counts, known peers). A batch with any error stores
nothing; a valid batch is written in one transaction, and ids already stored are reported
as duplicates (an agent retrying after a lost answer), never written twice.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from jsonschema import Draft202012Validator, FormatChecker

from inventory.models import Agent
from measurements.models import PathLatestRun, PingSample, Run

CONTRACT_DIR = Path(__file__).resolve().parent / "contract"
SCHEMA_FILE = CONTRACT_DIR / "result-batch.v1.schema.json"
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
    schema = json.loads(SCHEMA_FILE.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


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
        _update_latest_runs(agent, new)
    return [ItemStatus(str(run_id), "duplicate" if run_id in stored else "created") for run_id in ids]


def _run_row(agent: Agent, result: dict[str, Any], received_at: datetime) -> Run:
    ping = result.get("ping")
    params: dict[str, Any] = {}
    summary: dict[str, Any] = {}
    if ping is not None:
        params = {key: ping[key] for key in ("count", "interval_s", "size_bytes", "ttl") if key in ping}
        summary = _ping_summary(ping)
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
