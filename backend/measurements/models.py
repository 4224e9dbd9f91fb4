"""Measurement tables. Run and PingSample are TimescaleDB hypertables (see the migrations):
their primary keys include the time column, as hypertables require, and nothing points
into them with a foreign key. PathLatestRun is a small ordinary table that makes "which
paths exist" cheap without scanning the hypertables.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from inventory.models import Agent
from measurements.choices import RunStatus, TestType


class Run(models.Model):
    """One probe run, as reported by the agent that ran it (the source of the path)."""

    pk = models.CompositePrimaryKey("id", "started_at")
    id = models.UUIDField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    agent_id = models.UUIDField()
    peer_id = models.UUIDField(null=True, blank=True)
    target = models.CharField(max_length=255)
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    test_id = models.CharField(max_length=200)
    plan_version = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices)
    error = models.TextField(blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    params = models.JSONField(default=dict)
    summary = models.JSONField(default=dict)

    class Meta:
        indexes = [
            models.Index(fields=["agent_id", "peer_id", "-started_at"], name="run_path_time"),
            models.Index(fields=["id"], name="run_id"),
        ]

    def __str__(self) -> str:
        return f"{self.test_type} run {self.id} ({self.status})"


class PingSample(models.Model):
    """One ping packet: its reply (rtt_ms) or its loss (rtt_ms null); duplicates marked."""

    pk = models.CompositePrimaryKey("run_id", "sample_index", "time")
    time = models.DateTimeField()
    run_id = models.UUIDField()
    sample_index = models.IntegerField()
    # Source and destination of the path, copied from the run so path queries need no join.
    agent_id = models.UUIDField()
    peer_id = models.UUIDField(null=True, blank=True)
    seq = models.IntegerField()
    rtt_ms = models.FloatField(null=True, blank=True)
    ttl = models.SmallIntegerField(null=True, blank=True)
    duplicate = models.BooleanField(default=False)
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        indexes = [models.Index(fields=["agent_id", "peer_id", "-time"], name="pingsample_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id} seq {self.seq}: {self.rtt_ms} ms"


class PathLatestRun(models.Model):
    """The newest run per source, destination and test type (kept by ingest)."""

    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    run_id = models.UUIDField()
    started_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=RunStatus.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "destination", "test_type"], name="path_latest_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id} {self.test_type}"
