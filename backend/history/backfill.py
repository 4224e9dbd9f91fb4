"""Marking every bucket that has raw data in a range, for rollups of data stored before the
history app existed (or after a restore): `manage.py history_backfill`, then the refresh."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from history.buckets import RESOLUTIONS
from history.marks import mark_from_raw
from history.refresh import recompute_horizon


def mark_range(start: datetime, end: datetime, now: datetime | None = None) -> dict[str, int]:
    """Marks every bucket of every resolution with raw data in [start, end) that the refresh
    would recompute; returns the marks made per resolution."""
    now = now or timezone.now()
    made: dict[str, int] = {}
    for resolution in RESOLUTIONS:
        # A bucket is recomputed whole: start at the first bucket the refresh would take.
        first = max(start, recompute_horizon(resolution, now) + resolution.width - timedelta(microseconds=1))
        made[resolution.name] = mark_from_raw(resolution, resolution.floor(first), end, now)
    return made
