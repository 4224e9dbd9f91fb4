"""Slack incoming webhook with Block Kit: a header, the summary, one section per alert (the
first ten; the rest counted), context, a button to the incident. Within Slack's limits:
header 150 characters, section text 3000, fields 10, 50 blocks. Untrusted text (agent names,
reasons) is escaped (&, <, >) so a name like "<!channel>" cannot ping anyone."""

from __future__ import annotations

import json
from typing import Any

from alerts.transports.base import Sent, Transport, TransportError, cut, post, url_config

HEADER_MAX = 150
SECTION_MAX = 3000
FIELD_MAX = 2000
ALERTS_SHOWN = 10
TEXT_MAX = 3000
# Slack answers these when a webhook is gone for good (reference/alerting.md section 4).
PERMANENT_BODIES = ("invalid_token", "no_service", "channel_not_found", "channel_is_archived", "action_prohibited")
EMOJI = {
    "firing": ":red_circle:",
    "update": ":large_orange_circle:",
    "repeat": ":red_circle:",
    "resolved": ":large_green_circle:",
    "test": ":white_circle:",
}


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": cut(text, limit), "emoji": False}


def _mrkdwn(text: str, limit: int = SECTION_MAX) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": cut(text, limit)}


def blocks(message: dict[str, Any]) -> dict[str, Any]:
    kind = message["kind"]
    head = f"{message['headline']}: {message['title']}"
    out: list[dict[str, Any]] = [{"type": "header", "text": _plain(head, HEADER_MAX)}]
    lead = f"{EMOJI.get(kind, '')} *{escape(message['headline'])}*"
    if message["changes"]:
        lead += f" ({escape(message['changes'])})"
    if message.get("acknowledged_by"):
        lead += f"\nAcknowledged by {escape(message['acknowledged_by'])}"
    if message.get("cause"):
        lead += f"\n*Where:* {escape(message['cause'])}"
    out.append({"type": "section", "text": _mrkdwn(lead)})
    items = [("Firing", a) for a in message["firing"]] + [("Resolved", a) for a in message["resolved"]]
    for state, alert in items[:ALERTS_SHOWN]:
        line = f"*{state}* {escape(alert['summary'])}"
        if alert.get("url"):
            line += f"\n<{alert['url']}|Path page>"
        if alert.get("advice"):
            line += "\n" + escape(alert["advice"])
        fields = [
            _mrkdwn(f"*Rule*\n{escape(alert['rule'])}", FIELD_MAX),
            _mrkdwn(f"*Severity*\n{alert['severity']}", FIELD_MAX),
        ]
        out.append({"type": "section", "text": _mrkdwn(line), "fields": fields})
    if len(items) > ALERTS_SHOWN:
        out.append(
            {"type": "section", "text": _mrkdwn(f"…and {len(items) - ALERTS_SHOWN} more alerts on the incident page")}
        )
    out.append(
        {
            "type": "context",
            "elements": [
                _mrkdwn(
                    f"Incident #{message['incident_id']} · severity {message['severity']}"
                    f" · opened {message['opened_at']}"
                )
            ],
        }
    )
    out.append({
        "type": "actions",
        "elements": [{"type": "button", "text": _plain("Open the incident", 75), "url": message["url"]}],
    })  # fmt: skip
    return {"text": cut(head, TEXT_MAX), "blocks": out}


class SlackTransport(Transport):
    kind = "slack"
    min_interval_s = 1.0

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        return url_config(raw)

    def send(self, message: dict[str, Any], key: str) -> Sent:
        body = json.dumps(blocks(message)).encode()
        try:
            status, text = post(
                self.config["url"], body, {"Content-Type": "application/json"}, permanent_codes={403, 404, 410}
            )
        except TransportError as exc:
            if any(word in exc.response for word in PERMANENT_BODIES):
                exc.permanent = True
            raise
        return Sent(status, text)
