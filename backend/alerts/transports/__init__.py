"""The transports by channel kind."""

from alerts.transports.alertmanager import AlertmanagerTransport
from alerts.transports.base import ConfigError, Sent, Transport, TransportError
from alerts.transports.email import EmailTransport
from alerts.transports.opsgenie import OpsgenieTransport
from alerts.transports.pagerduty import PagerDutyTransport
from alerts.transports.slack import SlackTransport
from alerts.transports.teams import TeamsTransport
from alerts.transports.webhook import WebhookTransport

TRANSPORTS: dict[str, type[Transport]] = {
    t.kind: t
    for t in (
        EmailTransport,
        SlackTransport,
        WebhookTransport,
        PagerDutyTransport,
        OpsgenieTransport,
        TeamsTransport,
        AlertmanagerTransport,
    )
}

__all__ = ["TRANSPORTS", "ConfigError", "Sent", "Transport", "TransportError"]
