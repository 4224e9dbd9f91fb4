"""Opsgenie Alert API v2: an incident is one Opsgenie alert, named by its alias
(base.incident_key). Its first message creates it; updates and repeats add a note to it (what
changed, and the incident as it stands); an acknowledgement in Fathom acknowledges it; the
resolve closes it. A test message creates an alert of its own (priority P5) and closes it.

Every request carries `Authorization: GenieKey <api_key>`. Opsgenie answers 202 with
{"result": "Request will be processed", "requestId": ...} and does the work afterwards; 401
for a key it does not know, 403 for one without the right to create alerts, 404 for an
address that is no Alert API (or an alert it does not have), 422 for a body it will not take,
429 past the account's rate.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from alerts.transports.base import (
    Sent,
    Transport,
    clean_secret,
    clean_url,
    cut,
    incident_key,
    mask,
    post_json,
    require_object,
)
from alerts.transports.email import text_body

API_URL = "https://api.opsgenie.com"  # the EU instance: https://api.eu.opsgenie.com
MESSAGE_MAX = 130
ALIAS_MAX = 512
DESCRIPTION_MAX = 15000
NOTE_MAX = 25000
DETAIL_MAX = 8000
PRIORITIES = {"critical": "P1", "warning": "P3", "info": "P5"}
SOURCE = "Fathom"
# API keys are UUIDs.
KEY_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _create(alias: str, message: dict[str, Any]) -> dict[str, Any]:
    firing = message["firing"]
    agents = sorted({agent for alert in firing for agent in alert["agents"]})
    details = {
        "incident": str(message["incident_id"] or "test"),
        "url": message["url"],
        "severity": message["severity"],
        "paths": ", ".join(str(alert["path"]) for alert in firing if alert.get("path")),
        "agents": ", ".join(agents),
    }
    if message.get("cause"):
        details["cause"] = message["cause"]
    return {
        "message": cut(message["title"], MESSAGE_MAX),
        "alias": alias,
        "description": cut(text_body(message), DESCRIPTION_MAX),
        "details": {key: cut(value, DETAIL_MAX) for key, value in details.items() if value},
        "entity": cut(message.get("cause") or ", ".join(agents), 512),
        "source": SOURCE,
        "priority": "P5" if message["kind"] == "test" else PRIORITIES.get(message["severity"], "P3"),
        "tags": ["fathom", f"severity:{message['severity']}"],
    }


def _note(message: dict[str, Any]) -> dict[str, Any]:
    # The person who acknowledged speaks for the acknowledgement only; Fathom for the rest.
    person = message.get("acknowledged_by") if message["kind"] == "acknowledged" else None
    who = f" by {person}" if person else ""
    head = f"{message['headline']}{who}" + (f" ({message['changes']})" if message["changes"] else "")
    return {
        "user": cut(person or SOURCE, 100),
        "source": SOURCE,
        "note": cut(f"{head}\n\n{text_body(message)}", NOTE_MAX),
    }


def requests(message: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
    """(path under the API's address, body) of each request one message is."""
    alias = incident_key(message, key)[:ALIAS_MAX]
    by_alias = f"/v2/alerts/{quote(alias, safe='')}"
    query = "?" + urlencode({"identifierType": "alias"})
    kind = message["kind"]
    if kind == "firing":
        return [("/v2/alerts", _create(alias, message))]
    if kind == "test":
        return [("/v2/alerts", _create(alias, message)), (f"{by_alias}/close{query}", _note(message))]
    if kind == "acknowledged":
        return [(f"{by_alias}/acknowledge{query}", _note(message))]
    if kind == "resolved":
        return [(f"{by_alias}/close{query}", _note(message))]
    return [(f"{by_alias}/notes{query}", _note(message))]  # update, repeat


class OpsgenieTransport(Transport):
    kind = "opsgenie"
    secret_keys = ("api_key",)
    follows_acknowledgements = True

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        config = require_object(raw, {"api_key", "url"}, {"api_key"})
        config["api_key"] = clean_secret(config["api_key"], "api_key", KEY_PATTERN, "an Opsgenie API key (a UUID)")
        config["url"] = clean_url(config.get("url") or API_URL).rstrip("/")
        return config

    @classmethod
    def target(cls, config: dict[str, Any]) -> str:
        key = str(config.get("api_key", ""))
        return f"Opsgenie at {mask(str(config.get('url', API_URL)))} (key …{key[-4:]})"

    def send(self, message: dict[str, Any], key: str) -> Sent:
        headers = {"Authorization": f"GenieKey {self.config['api_key']}"}
        status, text = 0, ""
        for path, body in requests(message, key):
            # 404 on an alert's action: Opsgenie has no such alert (closed and purged, or its
            # create never arrived); that message is lost, the channel is fine.
            rejected = frozenset({400, 422} | ({404} if path != "/v2/alerts" else set()))
            status, text = post_json(
                self.config["url"] + path, body, headers, permanent_codes={401, 403, 404, 410}, rejected_codes=rejected
            )
        return Sent(status, text)
