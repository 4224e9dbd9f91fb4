"""Rollup tables, one per kind and resolution, and the queue of stale buckets.

The rollup tables are TimescaleDB hypertables on `bucket` (migration 0002), so each
resolution's retention is drop_chunks on its own table. Every row is a whole bucket of one
path, recomputed from raw data (history/refresh.py says how), so recomputing it gives the
same row.
"""

from __future__ import annotations

from django.db import models

from inventory.models import address_family_field


class Kind(models.TextChoices):
    RTT = "rtt", "RTT and loss (ping samples)"
    THROUGHPUT = "throughput", "Throughput runs"


class RttRollup(models.Model):
    """RTT percentiles and loss of one path (pings from source to destination) in one bucket."""

    pk = models.CompositePrimaryKey("source_id", "destination_id", "family", "bucket")
    source_id = models.UUIDField()
    destination_id = models.UUIDField()
    family = address_family_field()
    bucket = models.DateTimeField()
    # Pings sent (duplicates not counted) while none of Fathom's own throughput tests loaded
    # either host; own_load counts the others, which every other figure here leaves out.
    sent = models.IntegerField()
    lost = models.IntegerField()
    count = models.IntegerField()  # replies, the samples the percentiles are of
    own_load = models.IntegerField(default=0, db_default=0)
    min_ms = models.FloatField(null=True)
    p10_ms = models.FloatField(null=True)
    p50_ms = models.FloatField(null=True)
    p90_ms = models.FloatField(null=True)
    max_ms = models.FloatField(null=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id} at {self.bucket}: p50 {self.p50_ms} ms"


class ThroughputRollup(models.Model):
    """Throughput runs of one path in one bucket, in the data's direction: a reverse (-R) run
    counts for the path from its destination to its source, as analysis stores it."""

    pk = models.CompositePrimaryKey("source_id", "destination_id", "family", "bucket")
    source_id = models.UUIDField()  # the sender
    destination_id = models.UUIDField()  # the receiver
    family = address_family_field()
    bucket = models.DateTimeField()
    runs_ok = models.IntegerField()
    runs_failed = models.IntegerField()  # failed and missed: runs that did not measure
    min_bps = models.FloatField(null=True)  # of the ok runs' received rate (iperf3's end summary)
    median_bps = models.FloatField(null=True)
    max_bps = models.FloatField(null=True)
    retransmits = models.BigIntegerField(null=True)  # summed over the ok runs; null for UDP only

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id} at {self.bucket}: {self.runs_ok} ok"


class RttMinute(RttRollup):
    pass


class RttHour(RttRollup):
    pass


class RttDay(RttRollup):
    pass


class ThroughputMinute(ThroughputRollup):
    pass


class ThroughputHour(ThroughputRollup):
    pass


class ThroughputDay(ThroughputRollup):
    pass


class RttLastHour(models.Model):
    """Loss and RTT of each path's last hour of pings, up to its newest settled minute, kept by
    the minute refresh (history/last_hour.py) so the grid and the Paths list read one row per
    path instead of sixty minute rows."""

    pk = models.CompositePrimaryKey("source_id", "destination_id", "family")
    source_id = models.UUIDField()
    destination_id = models.UUIDField()
    family = address_family_field()
    sent = models.IntegerField()
    lost = models.IntegerField()
    min_ms = models.FloatField(null=True)  # the hour's smallest RTT
    p50_ms = models.FloatField(null=True)  # the median of the hour's 1-minute medians
    p90_ms = models.FloatField(null=True)  # the median of the hour's 1-minute 90th percentiles
    through = models.DateTimeField()  # the end of the hour summarised

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id} until {self.through}: p50 {self.p50_ms} ms"


class ClosedBuckets(models.Model):
    """Per coarse resolution, the buckets before `before` have been closed: computed once for
    every path with raw data after they settled. Minutes of a bucket not yet closed need no
    mark of their own; later (late) data marks the closed bucket it falls in."""

    resolution = models.CharField(max_length=8, primary_key=True)
    before = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.resolution} closed before {self.before}"


class StaleBucket(models.Model):
    """A bucket whose raw data changed since its rollup was computed. Ingest marks minute
    buckets; the refresh marks every path's hour and day when they close, and the closed hour
    and day of a minute that changed later; it deletes a mark in the transaction that
    recomputes its bucket."""

    kind = models.CharField(max_length=16, choices=Kind.choices)
    resolution = models.CharField(max_length=8)  # history.buckets.RESOLUTIONS
    source_id = models.UUIDField()
    destination_id = models.UUIDField()
    family = address_family_field()
    bucket = models.DateTimeField()
    marked_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resolution", "kind", "source_id", "destination_id", "family", "bucket"],
                name="stale_bucket_unique",
            ),
        ]
        indexes = [models.Index(fields=["resolution", "bucket"], name="stale_bucket_due")]

    def __str__(self) -> str:
        return f"{self.kind} {self.resolution} {self.bucket} of {self.source_id} -> {self.destination_id}"
