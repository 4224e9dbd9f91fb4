"""Marking buckets stale. Ingest marks the minute buckets a batch's results touch, in its own
transaction (history/signals.py); the refresh marks the hour and day buckets of the minutes
it recomputes. A mark per bucket, whatever number of results touch it (ON CONFLICT DO NOTHING).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from history.buckets import MINUTE, Resolution
from history.models import Kind, StaleBucket
from inventory.addresses import address_family
from measurements.kinds.base import timestamp

MARK_SQL = """
INSERT INTO history_stalebucket (kind, resolution, source_id, destination_id, family, bucket, marked_at)
SELECT kind, %(resolution)s, source_id, destination_id, family, bucket, %(now)s
FROM unnest(%(kinds)s::text[], %(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[],
            %(buckets)s::timestamptz[])
     AS m(kind, source_id, destination_id, family, bucket)
ON CONFLICT (resolution, kind, source_id, destination_id, family, bucket) DO NOTHING
"""


@dataclass(frozen=True, order=True)
class Mark:
    kind: str
    source_id: uuid.UUID
    destination_id: uuid.UUID
    family: int
    bucket: datetime


def mark(resolution: Resolution, marks: Iterable[Mark], now: datetime | None = None) -> int:
    """Marks buckets of one resolution stale; returns how many distinct marks were given."""
    unique = list(set(marks))
    if not unique:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            MARK_SQL,
            {
                "resolution": resolution.name,
                "now": now or timezone.now(),
                "kinds": [item.kind for item in unique],
                "sources": [item.source_id for item in unique],
                "destinations": [item.destination_id for item in unique],
                "families": [item.family for item in unique],
                "buckets": [item.bucket for item in unique],
            },
        )
    return len(unique)


def _is_reverse(result: dict[str, Any]) -> bool:
    section = result.get("throughput") or {}
    options = section.get("options") or {}
    return section.get("reverse") is True or options.get("reverse") is True


def _minute_text(stamp: str) -> str:
    """ "2026-11-22T10:00:59.5+02:00" -> "2026-11-22T10:00:00+02:00" (the schema's timestamp)."""
    return f"{stamp[:16]}:00{'Z' if stamp.endswith('Z') else stamp[-6:]}"


def result_marks(source_id: uuid.UUID, results: Iterable[dict[str, Any]]) -> set[Mark]:
    """The minute buckets that results (as the contract has them) from `source_id` touch: each
    ping sample's minute; a throughput run's starting minute, in the data's direction."""
    found: set[Mark] = set()
    for result in results:
        if not result.get("peer_id"):
            continue  # an external target: no agent at the far end, no path to roll up
        peer_id = uuid.UUID(result["peer_id"])
        family = address_family(result["target"])
        if result["test_type"] == "ping":
            samples = (result.get("ping") or {}).get("samples") or []
            # Parsed once per minute, not per sample (ingest's hot path: 1,000s of samples a
            # result); an RFC 3339 offset is whole minutes, so the text names the minute.
            minutes = {_minute_text(sample["time"]) for sample in samples}
            found |= {Mark(Kind.RTT, source_id, peer_id, family, MINUTE.floor(timestamp(text))) for text in minutes}
        elif result["test_type"] == "throughput":
            sender, receiver = (peer_id, source_id) if _is_reverse(result) else (source_id, peer_id)
            found.add(Mark(Kind.THROUGHPUT, sender, receiver, family, MINUTE.floor(timestamp(result["started_at"]))))
    return found


RTT_FROM_RAW_SQL = """
INSERT INTO history_stalebucket (kind, resolution, source_id, destination_id, family, bucket, marked_at)
SELECT DISTINCT %(kind)s, %(resolution)s, source_id, destination_id, family, time_bucket(%(width)s, time), %(now)s
FROM measurements_pingsample
WHERE destination_id IS NOT NULL AND time >= %(start)s AND time < %(end)s
ON CONFLICT (resolution, kind, source_id, destination_id, family, bucket) DO NOTHING
"""

# In the data's direction, as aggregates.THROUGHPUT_SELECT counts runs.
THROUGHPUT_FROM_RAW_SQL = """
INSERT INTO history_stalebucket (kind, resolution, source_id, destination_id, family, bucket, marked_at)
SELECT DISTINCT %(kind)s, %(resolution)s,
       CASE WHEN reverse THEN destination_id ELSE source_id END,
       CASE WHEN reverse THEN source_id ELSE destination_id END,
       family, time_bucket(%(width)s, started_at), %(now)s
FROM (
    SELECT source_id, destination_id, family, started_at,
           coalesce(summary ->> 'reverse' = 'true' OR params ->> 'reverse' = 'true', false) AS reverse
    FROM measurements_run
    WHERE test_type = 'throughput' AND destination_id IS NOT NULL AND started_at >= %(start)s AND started_at < %(end)s
) runs
ON CONFLICT (resolution, kind, source_id, destination_id, family, bucket) DO NOTHING
"""


def mark_from_raw(resolution: Resolution, start: datetime, end: datetime, now: datetime) -> int:
    """Marks the bucket of every path with raw data in [start, end) (aligned to buckets)."""
    made = 0
    with connection.cursor() as cursor:
        for kind, sql in ((Kind.RTT, RTT_FROM_RAW_SQL), (Kind.THROUGHPUT, THROUGHPUT_FROM_RAW_SQL)):
            params: dict[str, Any] = {"kind": kind.value, "resolution": resolution.name, "width": resolution.width,
                                      "now": now, "start": start, "end": end}  # fmt: skip
            cursor.execute(sql, params)
            made += cursor.rowcount
    return made


def pending(resolution: Resolution) -> int:
    return StaleBucket.objects.filter(resolution=resolution.name).count()
