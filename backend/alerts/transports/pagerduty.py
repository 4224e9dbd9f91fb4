"""PagerDuty Events API v2: an incident is one PagerDuty alert, named by its dedup_key
(base.incident_key). Its first message triggers it, updates and repeats trigger it again
(PagerDuty adds them to the alert's log and keeps one alert), an acknowledgement in Fathom
acknowledges it, and the resolve resolves it. A retry sends the same event, which the
dedup_key makes harmless. A test message triggers an alert of its own and resolves it.

PagerDuty answers 202 with {"status": "success", "dedup_key": ...}; 400 with
{"status": "invalid event", "errors": [...]} for an event it will never take (a wrong routing
key among them); 429 when the service's rate is exceeded; 5xx when it is in trouble.
"""

from __future__ import annotations

from typing import Any

from alerts.transports.base import (
    Sent,
    Transport,
    TransportError,
    clean_secret,
    clean_url,
    cut,
    incident_key,
    post_json,
    require_object,
)
from alerts.transports.email import text_body

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SUMMARY_MAX = 1024
DEDUP_KEY_MAX = 255
DETAILS_MAX = 16000  # custom_details' text; the whole event must stay under 512 KB
SEVERITIES = {"critical": "critical", "warning": "warning", "info": "info"}
ACTIONS = {
    "firing": "trigger",
    "update": "trigger",
    "repeat": "trigger",
    "acknowledged": "acknowledge",
    "resolved": "resolve",
}


def _alert_event(routing_key: str, dedup_key: str, message: dict[str, Any]) -> dict[str, Any]:
    firing = message["firing"]
    first = firing[0] if firing else None
    return {
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": dedup_key,
        "payload": {
            "summary": cut(
                f"{message['title']}" + (f" ({message['changes']})" if message["changes"] else ""), SUMMARY_MAX
            ),
            # The thing that is wrong: the paths' agents, as PagerDuty's "source" asks.
            "source": cut(", ".join(first["agents"]) if first and first["agents"] else "fathom", 255),
            "severity": SEVERITIES.get(message["severity"], "warning"),
            "timestamp": message["at"],
            "component": cut(str(first["path"]), 255) if first and first.get("path") else None,
            "group": cut(message["cause"], 255) if message.get("cause") else None,
            "class": cut(first["rule"], 255) if first else None,
            "custom_details": {
                "headline": message["headline"],
                "firing": [alert["summary"] for alert in firing],
                "resolved": [alert["summary"] for alert in message["resolved"]],
                "text": cut(text_body(message), DETAILS_MAX),
            },
        },
        "links": [{"href": message["url"], "text": f"Fathom incident #{message['incident_id'] or 'test'}"}],
        "client": "Fathom",
        "client_url": message["url"],
    }


def events(routing_key: str, message: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The events one message is: a trigger with the whole alert, or an acknowledge or resolve
    of the alert its dedup_key names; a test triggers and resolves its own."""
    dedup_key = incident_key(message, key)[:DEDUP_KEY_MAX]
    kind = message["kind"]
    if kind == "test":
        return [_alert_event(routing_key, dedup_key, message), _action(routing_key, dedup_key, "resolve")]
    action = ACTIONS[kind]
    if action == "trigger":
        return [_alert_event(routing_key, dedup_key, message)]
    return [_action(routing_key, dedup_key, action)]


def _action(routing_key: str, dedup_key: str, action: str) -> dict[str, Any]:
    return {"routing_key": routing_key, "event_action": action, "dedup_key": dedup_key}


def _without_nulls(event: dict[str, Any]) -> dict[str, Any]:
    payload = event.get("payload")
    if isinstance(payload, dict):
        event = {**event, "payload": {k: v for k, v in payload.items() if v is not None}}
    return event


class PagerDutyTransport(Transport):
    kind = "pagerduty"
    secret_keys = ("routing_key",)
    follows_acknowledgements = True

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        config = require_object(raw, {"routing_key", "url"}, {"routing_key"})
        config["routing_key"] = clean_secret(
            config["routing_key"], "routing_key", r"[A-Za-z0-9]{32}", "the 32-character integration key"
        )
        config["url"] = clean_url(config.get("url") or EVENTS_URL)
        return config

    @classmethod
    def target(cls, config: dict[str, Any]) -> str:
        key = str(config.get("routing_key", ""))
        return (
            f"PagerDuty service …{key[-4:]}" if config.get("url", EVENTS_URL) == EVENTS_URL else super().target(config)
        )

    def send(self, message: dict[str, Any], key: str) -> Sent:
        status, text = 0, ""
        for event in events(self.config["routing_key"], message, key):
            try:
                status, text = post_json(
                    self.config["url"],
                    _without_nulls(event),
                    permanent_codes={401, 403, 404, 410},
                    rejected_codes=frozenset({400, 413}),
                )
            except TransportError as exc:
                # A wrong routing key is the channel's, not this event's: every event would fail.
                if exc.status_code == 400 and "routing" in exc.response.lower():
                    exc.message_only = False
                raise
        return Sent(status, text)
