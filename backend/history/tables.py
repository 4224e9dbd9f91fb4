"""Which table holds which kind at which resolution, and each resolution's retention."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from history.buckets import DAY, HOUR, MINUTE, Resolution
from history.models import Kind, RttDay, RttHour, RttMinute, ThroughputDay, ThroughputHour, ThroughputMinute

MODELS: dict[tuple[str, str], type[models.Model]] = {
    (Kind.RTT, MINUTE.name): RttMinute,
    (Kind.RTT, HOUR.name): RttHour,
    (Kind.RTT, DAY.name): RttDay,
    (Kind.THROUGHPUT, MINUTE.name): ThroughputMinute,
    (Kind.THROUGHPUT, HOUR.name): ThroughputHour,
    (Kind.THROUGHPUT, DAY.name): ThroughputDay,
}


def table(kind: str, resolution: Resolution) -> str:
    return MODELS[(kind, resolution.name)]._meta.db_table


def retention_days() -> dict[str, int]:
    """Days each resolution keeps (0: forever), from the settings."""
    return {
        MINUTE.name: settings.ROLLUP_MINUTE_RETENTION_DAYS,
        HOUR.name: settings.ROLLUP_HOURLY_RETENTION_DAYS,
        DAY.name: settings.ROLLUP_DAILY_RETENTION_DAYS,
    }
