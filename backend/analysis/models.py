"""What the analysis stored: each throughput run's ceilings and diagnosis, each flow sweep's
RTT modes, and findings (regressions, route changes) with their life cycle.

Ordinary tables keyed by the run they describe (one row per run, rewritten on recompute), so
history keeps the ceilings that were true at the time of each run even after hosts are
retuned.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from analysis.choices import Diagnosis, FindingKind, FindingMetric, FindingState, RttModeVerdict
from inventory.models import Agent, address_family_field

# Bumped when the analysis of a run would come out differently: rows of older versions are
# recomputed by the incremental task.
ANALYSIS_VERSION = 9


class RunAnalysis(models.Model):
    """Ceilings and diagnosis of one throughput run, in the direction the data flowed."""

    run_id = models.UUIDField(unique=True)
    started_at = models.DateTimeField()
    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    family = address_family_field()
    streams = models.IntegerField()
    # Runs with the same key are one regression series (streams, -w, congestion control).
    options_key = models.CharField(max_length=100, default="")
    rate_bps = models.FloatField(null=True, blank=True)
    ceiling_bps = models.FloatField(null=True, blank=True)
    limit = models.CharField(max_length=32)
    diagnosis = models.CharField(max_length=32, choices=Diagnosis.choices)
    # The ceiling terms at the run's RTT, under load and per RTT mode (analysis.runs.RunCeilings).
    ceilings = models.JSONField()
    # What the ceilings rest on: both hosts' tuning at run time, RTT and loss with sources.
    inputs = models.JSONField()
    interval_stats = models.JSONField()
    evidence = models.JSONField()
    iperf3_version = models.CharField(max_length=64, blank=True)
    analysis_version = models.IntegerField(default=ANALYSIS_VERSION)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["source", "destination", "-started_at"], name="runanalysis_path_time")]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.diagnosis}"

    @property
    def binding_ceiling_bps(self) -> float | None:
        """What binds the run (its diagnosis's binding_bps: a full bottleneck's rate, a
        window's term), else the hosts' ceiling: a full pipe reads as full against it."""
        evidence = self.evidence if isinstance(self.evidence, dict) else {}
        binding = evidence.get("binding_bps")
        if isinstance(binding, int | float) and not isinstance(binding, bool) and binding > 0:
            return float(binding)
        return self.ceiling_bps

    @property
    def fraction_of_ceiling(self) -> float | None:
        """The run's rate over what binds it (binding_ceiling_bps)."""
        ceiling = self.binding_ceiling_bps
        if self.rate_bps is None or not ceiling:
            return None
        return self.rate_bps / ceiling


class SweepModes(models.Model):
    """The RTT modes one flow sweep found (the per-flow rule of probes-and-detection.md)."""

    run_id = models.UUIDField(unique=True)
    started_at = models.DateTimeField()
    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    family = address_family_field()
    verdict = models.CharField(max_length=16, choices=RttModeVerdict.choices)
    base_rtt_ms = models.FloatField(null=True, blank=True)
    mode_count = models.IntegerField()
    analysis = models.JSONField()
    analysis_version = models.IntegerField(default=ANALYSIS_VERSION)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["source", "destination", "-started_at"], name="sweepmodes_path_time")]

    def __str__(self) -> str:
        return f"sweep {self.run_id}: {self.verdict}"


class StandingModes(models.Model):
    """Whose RTT modes stand now on a path: `current_modes` over its sweeps of the last day, as
    the analysis task last computed it (services/modes.py says when), so the grid reads one
    row per path instead of every path's last day of sweeps."""

    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    family = address_family_field()
    sweep_run_id = models.UUIDField(null=True, blank=True)  # the standing sweep; null: no decided sweep
    mode_count = models.IntegerField(null=True, blank=True)
    verdict = models.CharField(max_length=16, choices=RttModeVerdict.choices, blank=True)  # "": none
    # The answer may change without new data from here on (the window drops a sweep that counted).
    valid_until = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "destination", "family"], name="standing_modes_path")]

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.destination_id}: {self.verdict} ({self.mode_count} modes)"


class Finding(models.Model):
    """A detected change on one path: open until the rule's clear condition holds."""

    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    family = address_family_field()
    metric = models.CharField(max_length=16, choices=FindingMetric.choices)
    rules = models.JSONField(default=list)
    kind = models.CharField(max_length=16, choices=FindingKind.choices, default=FindingKind.ALARM)
    state = models.CharField(max_length=16, choices=FindingState.choices, default=FindingState.OPEN)
    started_at = models.DateTimeField()
    detected_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True)
    direction = models.CharField(max_length=8)
    baseline = models.FloatField()
    current = models.FloatField()
    magnitude = models.FloatField()
    unit = models.CharField(max_length=16)
    evidence = models.JSONField(default=dict)
    # Why this is an annotation rather than an alarm (a tuning or iperf3 change coincided).
    annotation = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-detected_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "destination", "family", "metric"],
                condition=Q(state="open"),
                name="finding_one_open_per_path_metric",
            ),
            models.UniqueConstraint(
                fields=["source", "destination", "family", "metric", "started_at"], name="finding_path_metric_start"
            ),
        ]
        indexes = [models.Index(fields=["source", "destination", "metric", "-started_at"], name="finding_path")]

    def __str__(self) -> str:
        return f"{self.metric} {self.direction} on {self.source_id} -> {self.destination_id} ({self.state})"


class AnalysisPass(models.Model):
    """The moment the last completed per-minute pass judged the data at (one row): an RTT
    window that closed before it has been judged, so the next pass need not judge it again."""

    judged_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"analysis pass at {self.judged_at:%Y-%m-%d %H:%M:%S}"
