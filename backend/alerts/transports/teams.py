"""Microsoft Teams through a Workflows webhook ("Post to a channel when a webhook request is
received"): a message whose one attachment is an Adaptive Card (version 1.4, which Teams
renders): the headline, the title, what changed, where the paths meet, a FactSet per alert
(the first ten; the rest counted) and a button to the incident. Teams caps a card at 28 KB;
texts are cut well within it. A workflow answers 202; 400 for a body it cannot read; 401,
403 and 404 for a URL that is no longer a workflow's; 429 when posted to too fast.
"""

from __future__ import annotations

import json
from typing import Any

from alerts.transports.base import Sent, Transport, cut, post_json, url_config

CARD_VERSION = "1.4"
CARD_MAX_BYTES = 28 * 1024
TEXT_MAX = 2000
ALERTS_SHOWN = 10
COLOURS = {"firing": "Attention", "update": "Warning", "repeat": "Attention", "resolved": "Good", "test": "Accent"}


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": cut(text, TEXT_MAX), "wrap": True, **style}


def card(message: dict[str, Any]) -> dict[str, Any]:
    """The Adaptive Card of one message. Card text is Markdown: names are shown as they are,
    which a card cannot turn into a mention (mentions need an msteams entity)."""
    body: list[dict[str, Any]] = [
        _text(message["headline"], weight="Bolder", color=COLOURS.get(message["kind"], "Default"), size="Medium"),
        _text(message["title"], weight="Bolder"),
    ]
    if message["changes"]:
        body.append(_text(message["changes"], isSubtle=True, spacing="None"))
    if message.get("acknowledged_by"):
        body.append(_text(f"Acknowledged by {message['acknowledged_by']}"))
    if message.get("cause"):
        body.append(_text(f"Where: {message['cause']}"))
    items = [("Firing", a) for a in message["firing"]] + [("Resolved", a) for a in message["resolved"]]
    for state, alert in items[:ALERTS_SHOWN]:
        body.append(_text(f"{state}: {alert['summary']}", separator=True))
        facts = [{"title": "Rule", "value": alert["rule"]}, {"title": "Severity", "value": alert["severity"]}]
        if alert.get("path"):
            facts.append({"title": "Path", "value": alert["path"]})
        body.append({"type": "FactSet", "facts": [{**f, "value": cut(str(f["value"]), 500)} for f in facts]})
        if alert.get("advice"):
            body.append(_text(alert["advice"], isSubtle=True))
    if len(items) > ALERTS_SHOWN:
        body.append(_text(f"…and {len(items) - ALERTS_SHOWN} more alerts on the incident page"))
    number = f"Incident #{message['incident_id']} · " if message["incident_id"] is not None else ""
    body.append(
        _text(f"{number}severity {message['severity']} · opened {message['opened_at']}", isSubtle=True, size="Small")
    )
    content = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "msteams": {"width": "Full"},
        "body": body,
        "actions": [{"type": "Action.OpenUrl", "title": "Open the incident", "url": message["url"]}],
    }
    # Many long advices could still pass Teams' cap: drop alerts from the end until it fits.
    while len(json.dumps(content).encode()) > CARD_MAX_BYTES - 1024 and len(body) > 3:
        body.pop(-2)
    return content


def teams_message(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": card(message)}
        ],
    }


class TeamsTransport(Transport):
    kind = "teams"
    min_interval_s = 1.0  # Teams throttles a webhook posting several messages a second

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        return url_config(raw)

    def send(self, message: dict[str, Any], key: str) -> Sent:
        status, text = post_json(
            self.config["url"],
            teams_message(message),
            permanent_codes={401, 403, 404, 410},
            rejected_codes=frozenset({400, 413}),
        )
        return Sent(status, text)
