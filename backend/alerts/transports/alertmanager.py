"""A NOC's own Alertmanager, through its v2 API (POST /api/v2/alerts), so its routing,
silences, inhibitions and on-call schedule apply to Fathom's incidents.

Each alert of an incident is pushed as an Alertmanager alert, as Prometheus pushes its own:
its labels are the alert's (alertname: the rule's name, severity, path, metric, agent) with
fathom_incident naming the incident (an Alertmanager route that groups by it gets Fathom's
incidents back), and they never change over the alert's life, so every push updates the same
alert. A firing alert is pushed with endsAt hold_h ahead (Alertmanager ends an alert nobody
pushes again; Fathom pushes again with each update and repeat); a resolved one with endsAt
now. An acknowledgement is Fathom's alone: Alertmanager silences instead. A test pushes an
alert that is already over, which Alertmanager accepts and sends nowhere.

Alertmanager answers 200; 400 for alerts it will not take; a proxy in front of it 401 or 403.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from alerts.transports.base import (
    ConfigError,
    Sent,
    Transport,
    clean_secret,
    clean_url,
    cut,
    incident_key,
    instance_of,
    mask,
    post_json,
    require_object,
)

API_PATH = "/api/v2/alerts"
DEFAULT_HOLD_H = 24
MAX_HOLD_H = 24 * 7
LABEL_MAX = 1000
ANNOTATION_MAX = 8000
# Bearer tokens as proxies issue them: printable ASCII, no spaces.
TOKEN_PATTERN = r"[\x21-\x7e]{8,4096}"  # noqa: S105 - a shape, not a secret


def _label(value: Any) -> str:
    return cut(re.sub(r"\s+", " ", str(value)), LABEL_MAX)


def _alert(alert: dict[str, Any], message: dict[str, Any], ends_at: datetime) -> dict[str, Any]:
    labels = {
        "alertname": alert["rule"],
        "severity": alert["severity"],
        "fathom_incident": str(message["incident_id"]),
        "fathom_instance": instance_of(message),
        "fathom_alert": alert["fingerprint"],
    }
    for name in ("path", "metric"):
        if alert.get(name):
            labels[name] = alert[name]
    if alert.get("agents"):
        labels["agent"] = ",".join(sorted(alert["agents"]))
    annotations = {
        "summary": alert["summary"],
        "message": message["headline"],  # which of the incident's messages pushed it last
        "description": alert.get("advice") or "",
        "incident": message["title"],
        "cause": message.get("cause") or "",
        "incident_url": message["url"],
    }
    return {
        "labels": {key: _label(value) for key, value in labels.items()},
        "annotations": {key: cut(value, ANNOTATION_MAX) for key, value in annotations.items() if value},
        "startsAt": alert["started_at"],
        "endsAt": (alert.get("resolved_at") or ends_at.isoformat())
        if alert["state"] == "resolved"
        else ends_at.isoformat(),
        "generatorURL": alert.get("url") or message["url"],
    }


def alerts(message: dict[str, Any], key: str, hold: timedelta) -> list[dict[str, Any]]:
    """The alerts one message pushes: its firing ones held `hold` ahead, its resolved ones
    ended; for a test, one alert that ended as it began."""
    at = datetime.fromisoformat(message["at"])
    if message["kind"] == "test":
        test = {"alertname": "FathomTest", "fathom_test": incident_key(message, key), "severity": "info"}
        return [
            {
                "labels": test,
                "annotations": {"summary": message["title"]},
                "startsAt": message["at"],
                "endsAt": message["at"],
                "generatorURL": message["url"],
            }
        ]
    firing = [_alert(alert, message, at + hold) for alert in message["firing"]]
    return firing + [_alert(alert, message, at) for alert in message["resolved"]]


class AlertmanagerTransport(Transport):
    kind = "alertmanager"
    secret_keys = ("bearer_token",)

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        config = require_object(raw, {"url", "bearer_token", "hold_h"}, {"url"})
        url = clean_url(config["url"]).rstrip("/")
        if url.endswith(API_PATH):  # the API's own address pasted: its base is meant
            url = url[: -len(API_PATH)]
        config["url"] = url
        if config.get("bearer_token"):
            config["bearer_token"] = clean_secret(
                config["bearer_token"], "bearer_token", TOKEN_PATTERN, "8 to 4096 printable characters, no spaces"
            )
        else:
            config.pop("bearer_token", None)
        hold = config.get("hold_h", DEFAULT_HOLD_H)
        if isinstance(hold, bool) or not isinstance(hold, int) or not 1 <= hold <= MAX_HOLD_H:
            raise ConfigError(f"hold_h must be a whole number of hours from 1 to {MAX_HOLD_H}")
        config["hold_h"] = hold
        return config

    @classmethod
    def target(cls, config: dict[str, Any]) -> str:
        return f"Alertmanager at {mask(str(config.get('url', '')))}"

    def send(self, message: dict[str, Any], key: str) -> Sent:
        token = self.config.get("bearer_token")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        pushed = alerts(message, key, timedelta(hours=self.config.get("hold_h", DEFAULT_HOLD_H)))
        status, text = post_json(
            self.config["url"] + API_PATH,
            pushed,
            headers,
            permanent_codes={401, 403, 404, 410},
            rejected_codes=frozenset({400, 422}),
        )
        return Sent(status, text)
