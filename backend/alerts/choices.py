"""Choice sets of alerting, with the labels and colours the UI shows."""

from django.db import models

from core import choices as registry


class RuleKind(models.TextChoices):
    FINDING = "finding", "Analysis finding"
    NO_DATA = "no_data", "No data"
    AGENT_DOWN = "agent_down", "Agent down"
    THRESHOLD = "threshold", "Threshold"


class ThresholdMetric(models.TextChoices):
    """What a threshold rule reads, per run (throughput, modes) or per ping run (RTT, loss)."""

    THROUGHPUT_FRACTION = "throughput_fraction", "Throughput as a fraction of its ceiling"
    LOSS = "loss", "Ping loss (fraction)"
    RTT_P50 = "rtt_p50", "RTT p50 (ms)"
    MODE_COUNT = "mode_count", "RTT mode count"


class Comparison(models.TextChoices):
    LT = "lt", "<"
    LE = "le", "<="
    GT = "gt", ">"
    GE = "ge", ">="


class Severity(models.TextChoices):
    CRITICAL = "critical", "Critical"
    WARNING = "warning", "Warning"
    INFO = "info", "Info"


SEVERITY_COLORS = {Severity.CRITICAL: "#cf222e", Severity.WARNING: "#bc4c00", Severity.INFO: "#0969da"}


class AlertState(models.TextChoices):
    PENDING = "pending", "Pending"
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


ALERT_STATE_COLORS = {AlertState.PENDING: "#9a6700", AlertState.FIRING: "#cf222e", AlertState.RESOLVED: "#6e7781"}


class IncidentStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


INCIDENT_STATUS_COLORS = {
    IncidentStatus.OPEN: "#cf222e",
    IncidentStatus.ACKNOWLEDGED: "#9a6700",
    IncidentStatus.RESOLVED: "#1a7f37",
}


class ChannelKind(models.TextChoices):
    EMAIL = "email", "Email"
    SLACK = "slack", "Slack"
    WEBHOOK = "webhook", "Webhook"
    PAGERDUTY = "pagerduty", "PagerDuty"
    OPSGENIE = "opsgenie", "Opsgenie"
    TEAMS = "teams", "Microsoft Teams"
    ALERTMANAGER = "alertmanager", "Alertmanager"


class NotificationKind(models.TextChoices):
    FIRING = "firing", "Firing"
    UPDATE = "update", "Update"
    REPEAT = "repeat", "Repeat"
    RESOLVED = "resolved", "Resolved"
    TEST = "test", "Test"
    # Sent only to channels whose service has an acknowledgement of its own.
    ACKNOWLEDGED = "acknowledged", "Acknowledged"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    RETRYING = "retrying", "Retrying"
    FAILED = "failed", "Failed"


DELIVERY_STATUS_COLORS = {
    DeliveryStatus.PENDING: "#6e7781",
    DeliveryStatus.SENDING: "#0969da",
    DeliveryStatus.SENT: "#1a7f37",
    DeliveryStatus.RETRYING: "#9a6700",
    DeliveryStatus.FAILED: "#cf222e",
}


class EventKind(models.TextChoices):
    """What happened on an incident's timeline."""

    OPENED = "opened", "Opened"
    ALERT_PENDING = "alert_pending", "Alert pending"
    ALERT_FIRING = "alert_firing", "Alert firing"
    ALERT_RESOLVED = "alert_resolved", "Alert resolved"
    ALERT_SILENCED = "alert_silenced", "Alert silenced"
    ALERT_INHIBITED = "alert_inhibited", "Alert inhibited"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"
    REOPENED = "reopened", "Reopened"
    NOTIFIED = "notified", "Notified"
    LOCALISED = "localised", "Cause localised"


registry.register("alert_severity", Severity, SEVERITY_COLORS)
# A rule's kind and what a threshold rule compares, with the labels the rule editor shows (no
# colour of their own).
registry.register("alert_rule_kind", RuleKind, dict.fromkeys(RuleKind, "#57606a"))
registry.register("alert_metric", ThresholdMetric, dict.fromkeys(ThresholdMetric, "#57606a"))
registry.register("alert_comparison", Comparison, dict.fromkeys(Comparison, "#57606a"))
registry.register("alert_state", AlertState, ALERT_STATE_COLORS)
registry.register("incident_status", IncidentStatus, INCIDENT_STATUS_COLORS)
registry.register("delivery_status", DeliveryStatus, DELIVERY_STATUS_COLORS)
