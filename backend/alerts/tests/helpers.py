"""Builders shared by the alerting tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from alerts.models import Channel, Rule
from analysis.models import Finding
from inventory.models import Agent

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
# Keys in the shapes the services issue (none is real).
PAGERDUTY_KEY = "e93facc04764012d7bfb002500d5d1a6"
OPSGENIE_KEY = "eb243592-faa2-4ba2-a551-1afdf565c889"


def finding(source: Agent, destination: Agent, metric: str = "throughput", at: datetime = T0, **extra: Any) -> Finding:
    values: dict[str, Any] = {
        "throughput": {"direction": "down", "baseline": 3e9, "current": 1.8e9, "magnitude": -0.4, "unit": "relative"},
        "rtt": {"direction": "up", "baseline": 23.0, "current": 33.0, "magnitude": 10.0, "unit": "ms"},
        "loss": {"direction": "up", "baseline": 0.0, "current": 0.01, "magnitude": 1.0, "unit": "pp"},
        "route": {"direction": "up", "baseline": 1.0, "current": 1.0, "magnitude": 1.0, "unit": "paths"},
        "one_way_loss": {"direction": "up", "baseline": 0.0, "current": 0.02, "magnitude": 2.0, "unit": "pp"},
    }[metric]
    return Finding.objects.create(
        source=source, destination=destination, metric=metric, started_at=at, detected_at=at, **{**values, **extra}
    )


def channel(kind: str = "webhook", name: str | None = None, **config: Any) -> Channel:
    defaults: dict[str, dict[str, Any]] = {
        "webhook": {"url": "http://127.0.0.1:9/hook", "secret": "whsec_" + "QUFB" * 11},
        "slack": {"url": "http://127.0.0.1:9/slack"},
        "email": {"to": ["noc@example.org"]},
        "pagerduty": {"routing_key": PAGERDUTY_KEY, "url": "http://127.0.0.1:9/v2/enqueue"},
        "opsgenie": {"api_key": OPSGENIE_KEY, "url": "http://127.0.0.1:9"},
        "teams": {"url": "http://127.0.0.1:9/workflows/1"},
        "alertmanager": {"url": "http://127.0.0.1:9"},
    }
    return Channel.objects.create(name=name or kind, kind=kind, config={**defaults[kind], **config})


def rule(name: str) -> Rule:
    return Rule.objects.get(name=name)


def later(seconds: float, start: datetime = T0) -> datetime:
    return start + timedelta(seconds=seconds)
