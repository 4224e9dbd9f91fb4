"""Alerting state: rules, the alerts they raise, incidents that group alerts with one cause,
silences, channels and the outbox of deliveries. Kept out of hypertables: small, mutable."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from alerts.choices import (
    AlertState,
    ChannelKind,
    Comparison,
    DeliveryStatus,
    EventKind,
    IncidentStatus,
    NotificationKind,
    RuleKind,
    Severity,
)


class Rule(models.Model):
    """What raises an alert, where (scope matchers) and how patiently (k of n, pending,
    hold). Finding rules follow the analysis; threshold rules read runs directly."""

    name = models.CharField(max_length=100, unique=True)
    enabled = models.BooleanField(default=True)
    kind = models.CharField(max_length=16, choices=RuleKind.choices)
    # finding: the finding metric it follows ("" = every metric); threshold: a ThresholdMetric.
    metric = models.CharField(max_length=32, blank=True)
    comparison = models.CharField(max_length=2, choices=Comparison.choices, blank=True)
    value = models.FloatField(null=True, blank=True)
    # threshold and no_data: the condition holds when k of the last n runs violate it.
    k = models.PositiveSmallIntegerField(default=1)
    n = models.PositiveSmallIntegerField(default=1)
    # [{"name": "agent", "op": "=", "value": "ams-1"}]: every matcher must match.
    scope = models.JSONField(default=list, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.WARNING)
    pending_s = models.PositiveIntegerField(default=0)
    # A firing alert resolves once its condition has been clear this long (damps flapping).
    hold_s = models.PositiveIntegerField(default=600)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Incident(models.Model):
    """Alerts that share a cause (an agent, a hop, a mesh and metric): one message per change."""

    group_key = models.CharField(max_length=200)
    title = models.CharField(max_length=300)
    # What its degraded paths share and the paths that rule other causes out (localise.py),
    # or why nothing is named: empty for an incident of one path.
    cause = models.TextField(blank=True)
    # When cause was last worked out: again when its alerts change, or after LOCALISE_EVERY.
    localised_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=IncidentStatus.choices, default=IncidentStatus.OPEN)
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.WARNING)
    opened_at = models.DateTimeField(default=timezone.now)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ack_comment = models.TextField(blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The notification log: the fingerprints reported firing at the last message, and when.
    notified_firing = models.JSONField(default=list)
    last_notified_at = models.DateTimeField(null=True, blank=True)
    resolved_notified = models.BooleanField(default=False)
    sequence = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-opened_at"]
        indexes = [models.Index(fields=["status", "-opened_at"], name="incident_status")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title} ({self.status})"

    @property
    def email_root_id(self) -> str:
        """The Message-ID of its first email: every later one replies to it."""
        return f"<incident-{self.pk}@{settings.ALERT_EMAIL_DOMAIN}>"


class Alert(models.Model):
    """One rule's condition on one subject (a path's metric, an agent, a path's test)."""

    rule = models.ForeignKey(Rule, on_delete=models.CASCADE, related_name="alerts")
    fingerprint = models.CharField(max_length=64)
    labels = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=AlertState.choices, default=AlertState.PENDING)
    silenced = models.BooleanField(default=False)
    inhibited = models.BooleanField(default=False)
    summary = models.CharField(max_length=500)
    evidence = models.JSONField(default=dict)
    advice = models.TextField(blank=True)
    value = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField()
    firing_at = models.DateTimeField(null=True, blank=True)
    # The last evaluation at which its condition held; it resolves hold_s after that.
    last_true_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    finding_id = models.BigIntegerField(null=True, blank=True)
    incident = models.ForeignKey(Incident, null=True, blank=True, on_delete=models.SET_NULL, related_name="alerts")

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["fingerprint"], condition=~Q(state="resolved"), name="alert_one_active_per_fingerprint"
            )
        ]

    def __str__(self) -> str:
        return f"{self.rule.name}: {self.summary} ({self.state})"

    @property
    def notifiable(self) -> bool:
        return self.state == AlertState.FIRING and not self.silenced and not self.inhibited


class IncidentEvent(models.Model):
    """A line on an incident's timeline."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=24, choices=EventKind.choices)
    actor = models.CharField(max_length=150, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind}: {self.text[:60]}"


class Silence(models.Model):
    """Stops delivery for alerts matching every matcher while active; alerts are still
    recorded. With weekdays, a recurring maintenance window inside [starts_at, ends_at)."""

    matchers = models.JSONField()
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    created_by = models.CharField(max_length=150)
    comment = models.TextField()
    # Recurrence: ISO weekdays (1 = Monday) with a local daily window [window_start, window_end).
    weekdays = models.JSONField(default=list, blank=True)
    window_start = models.TimeField(null=True, blank=True)
    window_end = models.TimeField(null=True, blank=True)
    time_zone = models.CharField(max_length=64, default="UTC")
    # Or a cron schedule (alerts.cron) opening a window of duration_s at each firing.
    cron = models.CharField(max_length=100, blank=True)
    duration_s = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at"]

    def __str__(self) -> str:
        return f"silence by {self.created_by}: {self.comment[:60]}"


class Channel(models.Model):
    """Where incidents are delivered: one transport each; routing matchers pick incidents."""

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=ChannelKind.choices)
    # email: {"to": [...]}; slack: {"url": ...}; webhook: {"url": ..., "secret": "whsec_..."}
    config = models.JSONField()
    # Which incidents it receives: every matcher must match one of the incident's alerts.
    matchers = models.JSONField(default=list, blank=True)
    send_resolved = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.TextField(blank=True)
    last_error = models.TextField(blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    # Rate limit (Slack: one message per second per webhook): the earliest next send.
    next_send_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Delivery(models.Model):
    """One message for one channel: the outbox row. Its key is the webhook-id and the
    idempotency key: retries and a re-run after a killed worker reuse it."""

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    incident = models.ForeignKey(Incident, null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=NotificationKind.choices)
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    # The rendered notification (what every transport formats), frozen at creation.
    message = models.JSONField()
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    sending_since = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "channel", "sequence"],
                condition=Q(incident__isnull=False),
                name="delivery_once_per_incident_message",
            )
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.kind} {self.sequence} to channel {self.channel_id} ({self.status})"


class DeliveryAttempt(models.Model):
    """Every try, with what the receiver said."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    status_code = models.IntegerField(null=True, blank=True)
    response = models.TextField(blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField()

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"attempt at {self.at:%H:%M:%S}: {'ok' if self.ok else self.error[:60]}"
