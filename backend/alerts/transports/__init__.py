"""The transports by channel kind."""

from alerts.transports.base import ConfigError, Sent, Transport, TransportError
from alerts.transports.email import EmailTransport
from alerts.transports.slack import SlackTransport
from alerts.transports.webhook import WebhookTransport

TRANSPORTS: dict[str, type[Transport]] = {t.kind: t for t in (EmailTransport, SlackTransport, WebhookTransport)}

__all__ = ["TRANSPORTS", "ConfigError", "Sent", "Transport", "TransportError"]
