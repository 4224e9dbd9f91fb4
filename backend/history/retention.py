"""Each resolution's retention (FATHOM_ROLLUP_*_RETENTION_DAYS, 0: forever), by drop_chunks on
its own hypertables, as raw retention does (measurements/retention.py)."""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.utils import timezone

from history.buckets import RESOLUTIONS, kept_since
from history.models import Kind, StaleBucket
from history.tables import retention_days, table


def drop_expired_rollups(now: datetime | None = None) -> dict[str, int]:
    """Drops whole chunks older than each resolution keeps; returns chunks dropped per table."""
    now = now or timezone.now()
    days = retention_days()
    dropped: dict[str, int] = {}
    with connection.cursor() as cursor:
        for resolution in RESOLUTIONS:
            cutoff = kept_since(days[resolution.name], now)
            if cutoff is None:
                continue
            for kind in Kind.values:
                name = table(kind, resolution)
                cursor.execute("SELECT count(*) FROM drop_chunks(%s::regclass, older_than => %s)", [name, cutoff])
                row = cursor.fetchone()
                dropped[name] = int(row[0]) if row else 0
            # Marks of buckets no longer kept would only be claimed and skipped.
            StaleBucket.objects.filter(resolution=resolution.name, bucket__lt=cutoff).delete()
    return dropped
