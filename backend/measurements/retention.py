"""Retention of raw measurements with drop_chunks, which the Apache-2 TimescaleDB build has
(its retention *policies* are community-licensed). One mechanism on both builds."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

HYPERTABLES = (
    "measurements_run",
    "measurements_pingsample",
    "measurements_throughputinterval",
    "measurements_flowsample",
    "measurements_tracepath",
    "measurements_latencyinterval",
)


def raw_retention_cutoff(now: datetime | None = None, days: int | None = None) -> datetime:
    """Where the raw retention (`days`, FATHOM_RAW_RETENTION_DAYS by default) begins: what is
    older is dropped, and so is every record that only served it."""
    days = days if days is not None else settings.RAW_RETENTION_DAYS
    if days < 1:
        raise ValueError("retention must be at least one day")
    return (now or timezone.now()) - timedelta(days=days)


def drop_expired_measurements(now: datetime | None = None, retention_days: int | None = None) -> dict[str, int]:
    """Drops whole chunks older than the retention period; returns chunks dropped per table."""
    cutoff = raw_retention_cutoff(now, retention_days)
    dropped = {}
    with connection.cursor() as cursor:
        for table in HYPERTABLES:
            cursor.execute("SELECT count(*) FROM drop_chunks(%s::regclass, older_than => %s)", [table, cutoff])
            row = cursor.fetchone()
            dropped[table] = int(row[0]) if row else 0
    return dropped
