"""The notification every transport formats: built once per incident message and frozen in
the delivery row, so a retry sends what the first attempt tried to send."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings

from alerts.choices import AlertState, NotificationKind
from alerts.models import Alert, Incident

HEADLINES = {
    NotificationKind.FIRING: "New incident",
    NotificationKind.UPDATE: "Incident updated",
    NotificationKind.REPEAT: "Still open",
    NotificationKind.RESOLVED: "Resolved",
    NotificationKind.TEST: "Test message",
    NotificationKind.ACKNOWLEDGED: "Acknowledged",
}


# Evidence is stored as jsonb, which keeps no key order: messages show it in this one.
EVIDENCE_ORDER = (
    "before", "now", "change", "rules", "changed_at", "detected_at", "also_changed", "reasons", "test",
    "interval_s", "values", "comparison", "threshold", "last_seen_at", "silent_s",
)  # fmt: skip


def evidence_lines(evidence: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) in EVIDENCE_ORDER, then any other key; the raw detail left out."""
    keys = [k for k in EVIDENCE_ORDER if k in evidence] + sorted(set(evidence) - set(EVIDENCE_ORDER) - {"detail"})
    return [(key.replace("_", " "), str(evidence[key])) for key in keys]


def readable_time(iso: str | None) -> str:
    """An ISO time as "2026-11-24 23:58:05 UTC" (messages are read, not parsed)."""
    if not iso:
        return "-"
    try:
        return f"{datetime.fromisoformat(iso).astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
    except ValueError:
        return iso


def incident_url(incident: Incident) -> str:
    return f"{settings.PUBLIC_URL}/incidents/{incident.pk}"


def path_url(alert: Alert) -> str | None:
    """The path page around the time the alert started (an hour before to now)."""
    labels = alert.labels
    if "source_id" not in labels or "destination_id" not in labels:
        return None
    around = {"from": (alert.started_at - timedelta(hours=1)).isoformat(timespec="seconds")}
    if labels.get("family") == "ipv6":
        around["family"] = "6"
    return f"{settings.PUBLIC_URL}/paths/{labels['source_id']}/{labels['destination_id']}?{urlencode(around)}"


def _alert_item(alert: Alert) -> dict[str, Any]:
    return {
        "fingerprint": alert.fingerprint,
        "rule": alert.rule.name,
        "severity": alert.rule.severity,
        "state": alert.state,
        "silenced": alert.silenced,
        "inhibited": alert.inhibited,
        "summary": alert.summary,
        "path": alert.labels.get("path"),
        "agents": list(alert.labels.get("agent", [])),
        "metric": alert.labels.get("metric"),
        "started_at": alert.started_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
        "evidence": alert.evidence,
        "advice": alert.advice,
        "url": path_url(alert),
    }


def build(
    incident: Incident,
    kind: NotificationKind,
    alerts: Sequence[Alert],
    previous: Sequence[str],
    now: datetime,
) -> dict[str, Any]:
    """What changed since the last message first, then every alert of the incident."""
    reported = [a for a in alerts if a.notifiable or (a.state == AlertState.RESOLVED and a.fingerprint in previous)]
    firing = [a for a in reported if a.state == AlertState.FIRING]
    resolved = [a for a in reported if a.state == AlertState.RESOLVED]
    new = [a for a in firing if a.fingerprint not in previous]
    changes: list[str] = []
    if new and kind != NotificationKind.FIRING:
        changes.append(f"{len(new)} new")
    if resolved:
        changes.append(f"{len(resolved)} resolved")
    return {
        "incident_id": incident.pk,
        "sequence": incident.sequence,
        "kind": kind.value,
        "headline": HEADLINES[kind],
        "title": incident.title,
        "cause": incident.cause,
        "status": incident.status,
        "severity": incident.severity,
        "opened_at": incident.opened_at.isoformat(),
        "at": now.isoformat(),
        "url": incident_url(incident),
        "changes": ", ".join(changes),
        "acknowledged_by": incident.acknowledged_by.get_username() if incident.acknowledged_by else None,
        "firing": [_alert_item(a) for a in firing],
        "resolved": [_alert_item(a) for a in resolved],
        "email_root_id": incident.email_root_id,
    }


def test_message(channel_name: str, now: datetime) -> dict[str, Any]:
    return {
        "incident_id": None,
        "sequence": 0,
        "kind": NotificationKind.TEST.value,
        "headline": HEADLINES[NotificationKind.TEST],
        "title": f"Test message to {channel_name}",
        "status": "test",
        "severity": "info",
        "opened_at": now.isoformat(),
        "at": now.isoformat(),
        "url": f"{settings.PUBLIC_URL}/alerts/channels",
        "changes": "",
        "acknowledged_by": None,
        "firing": [],
        "resolved": [],
        "email_root_id": None,
    }
