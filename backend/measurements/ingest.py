"""Ingest of result batches from agents: validate everything, then store all or nothing.

The batch contract is contract/result-batch.v1.schema.json, which the Go agent's tests
validate the same example files against. After the schema come the checks a schema cannot
express (time order, consistent counts, known and unrevoked peers, every time within what
retention keeps and the clock allows), then what the apps above may refuse (meshes: paths
not in the agent's plan). A batch with any error stores nothing, and each error names the
result it refuses; a valid batch is written in one transaction, and ids already stored are
reported as duplicates (an agent retrying after a lost answer), never written twice.

A result names the agent's peer (`peer_id`), as the agent sees it; stored, a path's two ends
are its source (the submitting agent) and its destination (that peer), as everywhere else.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any, cast

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match

from core import contract, metrics
from inventory.addresses import address_family
from inventory.models import Agent
from measurements.copy_rows import copy_rows
from measurements.kinds import REGISTRY
from measurements.kinds.base import BatchError, KindIngest, RunKeys, timestamp
from measurements.models import PathLatestRun, Run, TargetLatestRun
from measurements.signals import results_received, results_stored
from measurements.targets import normalize_target

SCHEMA_NAME = "result-batch.v1.schema.json"
MAX_REPORTED_ERRORS = 50
# An agent clock this far ahead is wrong; storing its results would corrupt time ranges and
# make hypertable chunks for times that retention drops only years later.
MAX_CLOCK_AHEAD = timedelta(minutes=10)


class InvalidBatch(Exception):
    """The batch breaks the contract; nothing was stored."""

    def __init__(self, errors: list[BatchError]) -> None:
        super().__init__(f"{len(errors)} error(s) in result batch")
        self.errors = errors[:MAX_REPORTED_ERRORS]


@dataclass(frozen=True)
class ItemStatus:
    id: str
    status: str  # "created" or "duplicate"


# Ingest's clock: tests replace it to judge the contract examples against the day they were
# recorded (fathom.testing), not the wall clock.
clock: Callable[[], datetime] = timezone.now


@cache
def batch_validator() -> Draft202012Validator:
    return contract.validator(SCHEMA_NAME)


def schema_errors(payload: Any) -> list[BatchError]:
    # jsonschema-rs says whether the batch is valid a hundred times faster than jsonschema
    # (46,208 throughput intervals: 0.08 s against 11 s); jsonschema explains a refusal.
    if contract.fast_validator(SCHEMA_NAME).is_valid(payload):
        return []
    errors = sorted(batch_validator().iter_errors(payload), key=lambda error: list(error.absolute_path))
    return [
        BatchError("/".join(str(part) for part in error.absolute_path) or "(batch)", _message(error))
        for error in errors[:MAX_REPORTED_ERRORS]
    ]


def _message(error: ValidationError) -> str:
    """For "a number or null" and the like, the reason the value missed the alternative of
    its own type ("... is greater than the maximum of ..."), not "valid under none of them"."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        # An alternative of another type says only "is not of type 'null'".
        of_its_type = [sub for sub in error.context if sub.validator != "type"]
        return str(best_match(of_its_type or error.context).message)
    return str(error.message)


@dataclass(frozen=True)
class TimeWindow:
    """The times a result may carry: nothing older than raw retention keeps (it would be
    dropped at once, after making a chunk for it), nothing later than the clock allows."""

    oldest: datetime
    newest: datetime

    @classmethod
    def at(cls, now: datetime) -> TimeWindow:
        return cls(now - timedelta(days=settings.RAW_RETENTION_DAYS), now + MAX_CLOCK_AHEAD)

    def error(self, where: str, moment: datetime) -> BatchError | None:
        if moment < self.oldest:
            days = settings.RAW_RETENTION_DAYS
            return BatchError(where, f"{moment.isoformat()} is older than the raw retention ({days} days)")
        if moment > self.newest:
            ahead_min = int(MAX_CLOCK_AHEAD.total_seconds() // 60)
            return BatchError(
                where,
                f"{moment.isoformat()} is more than {ahead_min} min ahead of the server: is the agent's clock right?",
            )
        return None


def semantic_errors(
    results: list[dict[str, Any]], revoked_by_peer: dict[uuid.UUID, bool], window: TimeWindow
) -> list[BatchError]:
    """`revoked_by_peer`: whether each known peer agent is revoked."""
    errors: list[BatchError] = []
    seen: set[str] = set()
    for index, result in enumerate(results):
        where = f"results/{index}"
        if result["id"] in seen:
            errors.append(BatchError(f"{where}/id", f"id {result['id']} appears twice in this batch"))
        seen.add(result["id"])
        started_at, ended_at = timestamp(result["started_at"]), timestamp(result["ended_at"])
        if ended_at < started_at:
            errors.append(BatchError(f"{where}/ended_at", "ended_at is before started_at"))
        errors.extend(_time_errors(where, result, started_at, ended_at, window))
        peer_id = result.get("peer_id")
        if peer_id is not None:
            revoked = revoked_by_peer.get(uuid.UUID(peer_id))
            if revoked is None:
                errors.append(BatchError(f"{where}/peer_id", f"unknown peer agent {peer_id}"))
            elif revoked:
                errors.append(BatchError(f"{where}/peer_id", f"peer agent {peer_id} is revoked"))
        for kind in REGISTRY.values():
            if (section := result.get(kind.section)) is None:
                continue
            if kind.section != result["test_type"]:
                # Its rows would be stored under a run of another kind.
                message = f"a result of test_type {result['test_type']!r} carries no {kind.section} section"
                errors.append(BatchError(f"{where}/{kind.section}", message))
            else:
                errors.extend(kind.errors(f"{where}/{kind.section}", section))
    return errors


def _time_errors(
    where: str, result: dict[str, Any], started_at: datetime, ended_at: datetime, window: TimeWindow
) -> list[BatchError]:
    """The first time of a result outside the window: the run's, then its samples' (some
    reckoned from its start, so only once the start is known to be in the window)."""
    for field, moment in (("started_at", started_at), ("ended_at", ended_at)):
        if (error := window.error(f"{where}/{field}", moment)) is not None:
            return [error]
    for kind in REGISTRY.values():
        if (section := result.get(kind.section)) is not None:
            for sample_where, moment in kind.times(f"{where}/{kind.section}", started_at, section):
                if (error := window.error(sample_where, moment)) is not None:
                    return [error]
    return []


def ingest_batch(agent: Agent, payload: Any, now: datetime | None = None, vouched: bool = False) -> list[ItemStatus]:
    """Validates and stores a batch from `agent`; raises InvalidBatch and stores nothing on error.

    `vouched`: the caller has already tied every result to a path it was asked to measure
    (a perfSONAR node's run of a task Fathom created), so the agents' plan check is skipped."""
    errors = schema_errors(payload)
    if errors:
        metrics.count(metrics.BATCHES_REFUSED, reason="schema")
        raise InvalidBatch(errors)
    results: list[dict[str, Any]] = payload["results"]
    peer_ids = {uuid.UUID(result["peer_id"]) for result in results if result.get("peer_id")}
    revoked_by_peer = {
        pk: revoked_at is not None
        for pk, revoked_at in Agent.objects.filter(pk__in=peer_ids).values_list("pk", "revoked_at")
    }
    errors = semantic_errors(results, revoked_by_peer, TimeWindow.at(now or clock()))
    if errors:
        metrics.count(metrics.BATCHES_REFUSED, reason="content")
        raise InvalidBatch(errors)
    if not vouched:
        for _receiver, refused in results_received.send(sender=Run, agent=agent, results=results):
            errors.extend(cast(list[BatchError], refused))  # the stubs type a receiver's answer as a string
    if errors:
        metrics.count(metrics.BATCHES_REFUSED, reason="plan")
        raise InvalidBatch(sorted(errors, key=lambda error: _result_index(error.path)))
    return _store(agent, results)


def _result_index(path: str) -> int:
    parts = path.split("/")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1


def _store(agent: Agent, results: list[dict[str, Any]]) -> list[ItemStatus]:
    ids = [uuid.UUID(result["id"]) for result in results]
    received_at = timezone.now()
    with transaction.atomic():
        # Serialises concurrent batches of one agent, so a retry racing its original cannot
        # slip past the duplicate check below.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"ingest:{agent.pk}"])
        _hold_peers(results)
        stored = set(Run.objects.filter(id__in=ids).values_list("id", flat=True))
        new = [result for result in results if uuid.UUID(result["id"]) not in stored]
        Run.objects.bulk_create(_run_row(agent, result, received_at) for result in new)
        for kind in REGISTRY.values():
            copy_rows(kind.model, _sample_rows(kind, agent, new))
        _update_latest_runs(agent, new)
        _update_target_latest_runs(agent, new)
        # In the same transaction: what listens (the slot ledger) commits or fails with the batch.
        results_stored.send(sender=Run, agent=agent, results=new)
        transaction.on_commit(lambda: _count_stored(new, received_at))
    return [ItemStatus(str(run_id), "duplicate" if run_id in stored else "created") for run_id in ids]


def _count_stored(results: list[dict[str, Any]], received_at: datetime) -> None:
    for kind, number in Counter(str(result["test_type"]) for result in results).items():
        metrics.count(metrics.RESULTS_INGESTED, number, kind=kind)
    delays = ((received_at - timestamp(result["ended_at"])).total_seconds() for result in results)
    metrics.observe(metrics.INGEST_DELAY, (max(delay, 0.0) for delay in delays))


def _hold_peers(results: list[dict[str, Any]]) -> None:
    """Keeps the batch's peer agents from being deleted until it commits (FOR KEY SHARE, which
    only a delete or a key change waits for), and refuses the batch if one went since it was
    checked: an agent deleted mid-upload made the insert fail on its foreign key (a 500)."""
    peers = sorted({result["peer_id"] for result in results if result.get("peer_id")})
    if not peers:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Agent._meta.db_table} WHERE id = ANY(%s) FOR KEY SHARE",  # noqa: S608 (a model's table)
            [[uuid.UUID(peer) for peer in peers]],
        )
        present = {str(row[0]) for row in cursor.fetchall()}
    gone = [
        BatchError(f"results/{index}/peer_id", f"unknown peer agent {result['peer_id']} (deleted just now)")
        for index, result in enumerate(results)
        if result.get("peer_id") and str(uuid.UUID(result["peer_id"])) not in present
    ]
    if gone:
        raise InvalidBatch(gone)


def _params_and_summary(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the run asked for and what it found, in the shape path queries and analysis read."""
    for kind in REGISTRY.values():
        if (section := result.get(kind.section)) is not None:
            return kind.params_and_summary(section)
    return {}, {}


def _sample_rows(kind: KindIngest, agent: Agent, results: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for result in results:
        if (section := result.get(kind.section)) is None:
            continue
        destination_id = uuid.UUID(result["peer_id"]) if result.get("peer_id") else None
        keys = RunKeys(
            uuid.UUID(result["id"]),
            agent.pk,
            destination_id,
            address_family(result["target"]),
            timestamp(result["started_at"]),
            timestamp(result["ended_at"]),
        )
        yield from kind.rows(keys, section)


def _run_row(agent: Agent, result: dict[str, Any], received_at: datetime) -> Run:
    params, summary = _params_and_summary(result)
    return Run(
        id=uuid.UUID(result["id"]),
        started_at=timestamp(result["started_at"]),
        ended_at=timestamp(result["ended_at"]),
        source_id=agent.pk,
        destination_id=uuid.UUID(result["peer_id"]) if result.get("peer_id") else None,
        family=address_family(result["target"]),
        # An external target in one spelling, so its runs are found whatever case a mesh used.
        target=result["target"] if result.get("peer_id") else normalize_target(result["target"]),
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


def _update_latest_runs(agent: Agent, results: list[dict[str, Any]]) -> None:
    latest: dict[tuple[str, int, str], dict[str, Any]] = {}
    for result in results:
        if not result.get("peer_id"):
            continue
        key = (result["peer_id"], address_family(result["target"]), result["test_type"])
        if key not in latest or timestamp(result["started_at"]) > timestamp(latest[key]["started_at"]):
            latest[key] = result
    for (peer_id, family, test_type), result in latest.items():
        started_at = timestamp(result["started_at"])
        updated = PathLatestRun.objects.filter(
            Q(started_at__lt=started_at),
            source=agent,
            destination_id=uuid.UUID(peer_id),
            family=family,
            test_type=test_type,
        ).update(run_id=result["id"], started_at=started_at, status=result["status"])
        if not updated:
            PathLatestRun.objects.get_or_create(
                source=agent,
                destination_id=uuid.UUID(peer_id),
                family=family,
                test_type=test_type,
                defaults={"run_id": result["id"], "started_at": started_at, "status": result["status"]},
            )


def _update_target_latest_runs(agent: Agent, results: list[dict[str, Any]]) -> None:
    """TargetLatestRun for the results without a peer agent (a list mesh's external targets)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        if result.get("peer_id"):
            continue
        key = (normalize_target(result["target"]), result["test_type"])
        if key not in latest or timestamp(result["started_at"]) > timestamp(latest[key]["started_at"]):
            latest[key] = result
    for (target, test_type), result in latest.items():
        started_at = timestamp(result["started_at"])
        updated = TargetLatestRun.objects.filter(
            Q(started_at__lt=started_at), source=agent, target=target, test_type=test_type
        ).update(run_id=result["id"], started_at=started_at, status=result["status"])
        if not updated:
            TargetLatestRun.objects.get_or_create(
                source=agent,
                target=target,
                test_type=test_type,
                defaults={"run_id": result["id"], "started_at": started_at, "status": result["status"]},
            )
