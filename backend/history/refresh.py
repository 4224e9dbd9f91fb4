"""The incremental refresh (a Celery task every minute): recompute the stale buckets that have
settled, finest resolution first.

Ingest marks the minute buckets its samples and runs fall in (late data included: a result
arriving today for last week marks last week's minutes). The refresh recomputes each settled
stale minute from raw data. When an hour or a day settles, the refresh closes it: marks it
for every path with raw data in it and recomputes it, from raw data too (aggregates.py:
never percentiles of percentiles). A minute recomputed after its hour or day was closed (late
data) marks that hour and day again. Each resolution runs in one transaction that deletes the
marks it claims, so a failed refresh leaves them for the next; a mark made while it runs is a
new row, recomputed next time. In steady state each raw sample is read three times over its
life, once per resolution, and the only per-minute writes are the minute rows themselves; the
unsettled tail of a range is computed by the query instead.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from history import aggregates
from history.buckets import DAY, HOUR, MINUTE, RESOLUTIONS, Resolution, kept_since, windows
from history.last_hour import store_last_hour
from history.marks import Mark, mark, mark_from_raw
from history.models import ClosedBuckets, Kind
from history.tables import retention_days, table

CLAIM_SQL = """
DELETE FROM history_stalebucket WHERE id IN (
    SELECT id FROM history_stalebucket WHERE resolution = %(resolution)s AND bucket < %(settled)s
    ORDER BY bucket LIMIT %(limit)s
)
RETURNING kind, source_id, destination_id, family, bucket
"""
# Marks claimed per transaction: five minutes of a 100-agent mesh. A backlog (the refresh was
# down) is worked off oldest first in transactions of this size, never in one.
CLAIM_BATCH = 50_000


def recompute_horizon(resolution: Resolution, now: datetime) -> datetime:
    """Buckets starting before this are not recomputed: their raw data may be partly dropped
    already, or the resolution no longer keeps them."""
    horizon = now - timedelta(days=settings.RAW_RETENTION_DAYS)
    kept = kept_since(retention_days()[resolution.name], now)
    return max(horizon, kept) if kept is not None else horizon


def refresh(now: datetime | None = None) -> dict[str, int]:
    """Recomputes every settled stale bucket; returns the buckets claimed per resolution."""
    now = now or timezone.now()
    return {resolution.name: refresh_resolution(resolution, now) for resolution in RESOLUTIONS}


def refresh_resolution(resolution: Resolution, now: datetime) -> int:
    """Recomputes the settled stale buckets of one resolution; returns how many were claimed."""
    claimed = 0
    while True:
        batch = _refresh_batch(resolution, now)
        claimed += batch
        if batch < CLAIM_BATCH:
            return claimed


def _refresh_batch(resolution: Resolution, now: datetime) -> int:
    horizon = recompute_horizon(resolution, now)
    with transaction.atomic(), connection.cursor() as cursor:
        # One refresher per resolution at a time; a second one (a slow run overlapping the next
        # beat) leaves it to the first rather than wait on its marks.
        cursor.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [f"history:{resolution.name}"])
        row = cursor.fetchone()
        if not row or not row[0]:
            return 0
        if resolution is not MINUTE:
            close(resolution, now)
        settled = resolution.settled_before(now)
        cursor.execute(CLAIM_SQL, {"resolution": resolution.name, "settled": settled, "limit": CLAIM_BATCH})
        claimed = [Mark(*row) for row in cursor.fetchall()]
        for kind in Kind.values:
            recompute(kind, resolution, [item for item in claimed if item.kind == kind and item.bucket >= horizon])
        if resolution is MINUTE:
            store_last_hour({(m.source_id, m.destination_id, m.family) for m in claimed if m.kind == Kind.RTT}, now)
            for coarser in (HOUR, DAY):
                closed = ClosedBuckets.objects.filter(resolution=coarser.name).first()
                late = [m for m in claimed if closed is None or coarser.floor(m.bucket) < closed.before]
                coarse = (Mark(m.kind, m.source_id, m.destination_id, m.family, coarser.floor(m.bucket)) for m in late)
                mark(coarser, coarse, now)
    return len(claimed)


def close(resolution: Resolution, now: datetime) -> None:
    """Marks every path's buckets that settled since the last close; the first close only
    starts the count (older buckets are the backfill's: manage.py history_backfill)."""
    settled = resolution.settled_before(now)
    closed, created = ClosedBuckets.objects.select_for_update().get_or_create(
        resolution=resolution.name, defaults={"before": settled}
    )
    if not created and closed.before < settled:
        mark_from_raw(resolution, closed.before, settled, now)
        closed.before = settled
        closed.save(update_fields=["before"])


def recompute(kind: str, resolution: Resolution, marks: list[Mark]) -> int:
    """Recomputes and stores the marked buckets of one kind, a run of neighbouring buckets at a time."""
    written = 0
    by_bucket: dict[datetime, list[Mark]] = {}
    for item in marks:
        by_bucket.setdefault(item.bucket, []).append(item)
    for run in windows(list(by_bucket), resolution):
        run_marks = [item for bucket in run for item in by_bucket[bucket]]
        keys = aggregates.BucketKeys(
            [item.source_id for item in run_marks],
            [item.destination_id for item in run_marks],
            [item.family for item in run_marks],
            [item.bucket for item in run_marks],
            run[0],
            run[-1] + resolution.width,
        )
        written += aggregates.store(kind, table(kind, resolution), resolution, keys)
    return written
