"""Measurement tables. Run and the per-sample tables are TimescaleDB hypertables (see the migrations):
their primary keys include the time column, as hypertables require, and nothing points
into them with a foreign key. PathLatestRun and TargetLatestRun are small ordinary tables that
make "which paths exist" cheap without scanning the hypertables.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from inventory.models import Agent, address_family_field
from measurements.choices import RunStatus, TestType


class Run(models.Model):
    """One probe run, as reported by the agent that ran it (the source of the path)."""

    pk = models.CompositePrimaryKey("id", "started_at")
    id = models.UUIDField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    target = models.CharField(max_length=255)
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    test_id = models.CharField(max_length=200)
    plan_version = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices)
    error = models.TextField(blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    # The server-planned slot an exclusive run filled (meshes.Slot), when there was one.
    slot_id = models.UUIDField(null=True, blank=True)
    params = models.JSONField(default=dict)
    summary = models.JSONField(default=dict)

    class Meta:
        indexes = [
            models.Index(fields=["source_id", "destination_id", "-started_at"], name="run_path_time"),
            models.Index(fields=["id"], name="run_id"),
            # Runs to a list mesh's external targets (no agent at the far end), one target's at a time.
            models.Index(
                fields=["source_id", "target", "-started_at"],
                name="run_target_time",
                condition=models.Q(destination_id__isnull=True),
            ),
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
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    seq = models.IntegerField()
    rtt_ms = models.FloatField(null=True, blank=True)
    ttl = models.SmallIntegerField(null=True, blank=True)
    duplicate = models.BooleanField(default=False)
    error = models.CharField(max_length=200, blank=True)
    # Sent while one of Fathom's own throughput tests loaded either host (set at ingest by
    # analysis.services.own_load): the queue that test built, not the path's. Left out of the
    # rollups' figures, which count these apart.
    own_load = models.BooleanField(default=False, db_default=False)

    class Meta:
        indexes = [models.Index(fields=["source_id", "destination_id", "-time"], name="pingsample_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id} seq {self.seq}: {self.rtt_ms} ms"


class ThroughputInterval(models.Model):
    """One iperf3 reporting interval of one stream; TCP_INFO fields null where not reported."""

    pk = models.CompositePrimaryKey("run_id", "interval_index", "time")
    time = models.DateTimeField()  # the interval's end
    run_id = models.UUIDField()
    interval_index = models.IntegerField()
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    stream = models.IntegerField()
    start_s = models.FloatField()
    end_s = models.FloatField()
    omitted = models.BooleanField()
    sender = models.BooleanField()
    bytes = models.BigIntegerField()
    bits_per_s = models.FloatField()
    retransmits = models.BigIntegerField(null=True, blank=True)
    snd_cwnd_bytes = models.BigIntegerField(null=True, blank=True)
    snd_wnd_bytes = models.BigIntegerField(null=True, blank=True)
    rtt_us = models.BigIntegerField(null=True, blank=True)
    rttvar_us = models.BigIntegerField(null=True, blank=True)
    pmtu = models.IntegerField(null=True, blank=True)
    packets = models.BigIntegerField(null=True, blank=True)
    jitter_ms = models.FloatField(null=True, blank=True)
    lost_packets = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["source_id", "destination_id", "-time"], name="tputinterval_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id} stream {self.stream} {self.start_s}-{self.end_s} s"


class FlowSample(models.Model):
    """One flow-sweep probe: its flow (source port) and RTT, null when unanswered."""

    pk = models.CompositePrimaryKey("run_id", "sample_index", "time")
    time = models.DateTimeField()
    run_id = models.UUIDField()
    sample_index = models.IntegerField()
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    flow = models.SmallIntegerField()
    src_port = models.IntegerField()
    seq = models.SmallIntegerField()
    rtt_ms = models.FloatField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        indexes = [models.Index(fields=["source_id", "destination_id", "-time"], name="flowsample_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id} flow {self.flow} seq {self.seq}: {self.rtt_ms} ms"


class TracePath(models.Model):
    """The hop-by-hop path of one flow of a trace run; equal paths share a fingerprint."""

    pk = models.CompositePrimaryKey("run_id", "flow", "time")
    time = models.DateTimeField()  # the run's start
    run_id = models.UUIDField()
    flow = models.SmallIntegerField()
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    src_port = models.IntegerField()
    reached = models.BooleanField()
    fingerprint = models.CharField(max_length=64)
    hop_count = models.SmallIntegerField()
    hops = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["source_id", "destination_id", "-time"], name="tracepath_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id} flow {self.flow}: {self.fingerprint}"


class LatencyInterval(models.Model):
    """One interval of a TWAMP-light session (a latency run): loss, delay and clocks each way.

    Forward is source to destination (the sender to the reflector), backward the answers' way
    back. Delays are null when nothing was answered; one-way delays are only as right as the
    two clocks, whose synchronisation and declared error are kept beside them. A one-way-only
    test (OWAMP) has every backward and round-trip column null, `answered` being what arrived
    and the reflector's clock the receiver's.
    """

    pk = models.CompositePrimaryKey("run_id", "time")
    time = models.DateTimeField()  # the run's start
    ended_at = models.DateTimeField()
    run_id = models.UUIDField()
    source_id = models.UUIDField()
    destination_id = models.UUIDField(null=True, blank=True)
    family = address_family_field()  # of the address probed
    sent = models.IntegerField()
    answered = models.IntegerField()
    duplicates = models.IntegerField()
    malformed = models.IntegerField()
    forward_lost = models.IntegerField()
    forward_reordered_fraction = models.FloatField(null=True, blank=True)
    forward_min_ms = models.FloatField(null=True, blank=True)
    forward_p50_ms = models.FloatField(null=True, blank=True)
    forward_p90_ms = models.FloatField(null=True, blank=True)
    forward_p99_ms = models.FloatField(null=True, blank=True)
    forward_max_ms = models.FloatField(null=True, blank=True)
    forward_ipdv_ms = models.FloatField(null=True, blank=True)
    forward_hops = models.SmallIntegerField(null=True, blank=True)
    backward_lost = models.IntegerField(null=True, blank=True)
    backward_reordered_fraction = models.FloatField(null=True, blank=True)
    backward_min_ms = models.FloatField(null=True, blank=True)
    backward_p50_ms = models.FloatField(null=True, blank=True)
    backward_p90_ms = models.FloatField(null=True, blank=True)
    backward_p99_ms = models.FloatField(null=True, blank=True)
    backward_max_ms = models.FloatField(null=True, blank=True)
    backward_ipdv_ms = models.FloatField(null=True, blank=True)
    backward_hops = models.SmallIntegerField(null=True, blank=True)
    round_trip_min_ms = models.FloatField(null=True, blank=True)
    round_trip_p50_ms = models.FloatField(null=True, blank=True)
    round_trip_p90_ms = models.FloatField(null=True, blank=True)
    round_trip_p99_ms = models.FloatField(null=True, blank=True)
    round_trip_max_ms = models.FloatField(null=True, blank=True)
    sender_synchronized = models.BooleanField()
    sender_error_ms = models.FloatField()
    # Null when no answer came back to declare the reflector's clock.
    reflector_synchronized = models.BooleanField(null=True, blank=True)
    reflector_error_ms = models.FloatField(null=True, blank=True)
    # Overlapped one of Fathom's own throughput tests on either host (set at ingest by
    # analysis.services.own_load, as for pings): left out of the baselines.
    own_load = models.BooleanField(default=False, db_default=False)

    class Meta:
        indexes = [models.Index(fields=["source_id", "destination_id", "-time"], name="latencyinterval_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.answered}/{self.sent} answered"


class PathLatestRun(models.Model):
    """The newest run per source, destination and test type (kept by ingest)."""

    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    family = address_family_field()  # of the address probed
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    run_id = models.UUIDField()
    started_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=RunStatus.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "destination", "family", "test_type"], name="path_latest_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id} IPv{self.family} {self.test_type}"


class TargetLatestRun(models.Model):
    """The newest run per source, external target and test type (kept by ingest): the paths of
    list meshes, whose far end is a host name or address and no agent. `target` is normalised
    (measurements.targets.normalize_target), as ingest stores it on the run."""

    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    target = models.CharField(max_length=255)
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    run_id = models.UUIDField()
    started_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=RunStatus.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "test_type"], name="target_latest_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.target} {self.test_type}"
