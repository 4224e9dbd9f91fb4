"""One evaluation tick: conditions -> alert lifecycle -> silences and inhibition -> incidents
-> notifications queued in the outbox. A function of the database and `now`; the beat task
calls it every ALERT_EVALUATE_EVERY_S and tests call it with any `now`."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from alerts import matchers
from alerts.choices import AlertState, EventKind, IncidentStatus, NotificationKind, RuleKind, Severity
from alerts.models import Alert, Channel, Delivery, Incident, IncidentEvent, Rule, Silence
from alerts.services import messages
from alerts.services.advice import advice_for
from alerts.services.conditions import Condition, evaluate_conditions, load_world
from alerts.services.localisation import Localisation, PathFacts, localise, shared_router
from alerts.silences import is_active, silencing
from alerts.transports import TRANSPORTS
from analysis.services.coinciding import what_else_changed
from inventory.models import Agent

log = logging.getLogger(__name__)

SEVERITY_ORDER = [Severity.INFO, Severity.WARNING, Severity.CRITICAL]


@dataclass
class Tick:
    """What one evaluation did (the benchmark and the tests read it)."""

    conditions: int = 0
    opened: list[int] = field(default_factory=list)
    fired: int = 0
    resolved: int = 0
    deliveries: list[int] = field(default_factory=list)


def _event(incident: Incident, kind: EventKind, text: str, now: datetime, actor: str = "") -> None:
    IncidentEvent.objects.create(incident=incident, kind=kind, text=text[:2000], at=now, actor=actor)


def _agents(alert: Alert) -> set[str]:
    return set(alert.labels.get("agent", []))


def _causes(alert: Alert) -> set[str]:
    """The agents an alert can be blamed on, for grouping: a held-back alert only on the
    down agent that holds it back, so ta's outage does not pull every other alert of a path
    to ta into its incident through the far end."""
    if alert.inhibited and alert.rule.kind != RuleKind.AGENT_DOWN:
        return set(alert.labels.get("held_by", [])) or _agents(alert)
    return _agents(alert)


def _group_key(alert: Alert) -> str:
    if alert.rule.kind == RuleKind.AGENT_DOWN:
        return f"agent:{alert.labels['agent'][0]}"
    return f"path:{alert.labels.get('path')}"


def _shares_a_cause(alert: Alert, other: Alert, facts: PathFacts) -> bool:
    """Whether two alerts share an agent or a new route hop that may be their cause. Two
    findings on paths of one agent share it only while no other path of that agent measured
    either one's metric normally since it began: a cut on ta -> tc is no part of an RTT
    alarm on ta -> tb when ta -> td's throughput is fine (Boolean tomography: a good path
    clears its ends)."""
    if set(alert.labels.get("hop", [])) & set(other.labels.get("hop", [])):
        return True
    shared = _causes(alert) & _causes(other)
    if alert.finding_id is None or other.finding_id is None or alert.inhibited or other.inhibited:
        return bool(shared)
    metric = str(alert.labels.get("metric"))
    began = _began(alert, facts)
    if shared:
        # An agent that caused both would degrade its other paths in both metrics: one that
        # measured either normally since is ruled out.
        return any(
            name not in facts.ids
            or not (
                facts.agent_cleared(facts.ids[name], metric, began)
                or facts.agent_cleared(facts.ids[name], str(other.labels.get("metric")), _began(other, facts))
            )
            for name in shared
        )
    # No agent in common: a router both cross that no healthy path clears, for one metric.
    if metric != other.labels.get("metric"):
        return False
    return shared_router((_pair(alert), _pair(other)), metric, began, facts) is not None


def _began(alert: Alert, facts: PathFacts) -> datetime:
    finding = facts.finding(alert.finding_id) if alert.finding_id is not None else None
    return finding.started_at if finding is not None else alert.started_at


def _pair(alert: Alert) -> tuple[str, str]:
    return str(alert.labels.get("source_id")), str(alert.labels.get("destination_id"))


def _incident_for(
    alert: Alert,
    open_incidents: list[Incident],
    members: dict[int, list[Alert]],
    now: datetime,
    facts: PathFacts,
) -> Incident | None:
    """An open incident this alert shares a cause with: one involving one of its agents or
    one of the new route hops it passes (_shares_a_cause), or one of the same mesh and metric
    opened within the group window."""
    for incident in open_incidents:
        if any(_shares_a_cause(alert, other, facts) for other in members.get(incident.pk, [])):
            return incident
    window = timedelta(seconds=settings.ALERT_GROUP_WINDOW_S)
    meshes, metric = set(alert.labels.get("mesh", [])), alert.labels.get("metric")
    for incident in open_incidents:
        if now - incident.opened_at > window:
            continue
        for other in members.get(incident.pk, []):
            if other.labels.get("metric") == metric and meshes & set(other.labels.get("mesh", [])):
                return incident
    return None


def _words(metric: str) -> str:
    """A finding metric as a title reads it: "one_way_loss" is "one-way loss"."""
    return metric.replace("one_way_", "one-way ").replace("_", " ")


def _title(alerts: list[Alert], localisation: Localisation | None = None) -> str:
    if len(alerts) == 1:
        return alerts[0].summary[:300]
    down = [a for a in alerts if a.rule.kind == RuleKind.AGENT_DOWN]
    if down:
        return f"{down[0].summary} ({len(alerts) - 1} path alerts held back)"[:300]
    hops = set.intersection(*(set(a.labels.get("hop", [])) for a in alerts))
    if hops:
        return f"{len(alerts)} route changes through {sorted(hops)[0]}"[:300]
    if localisation and localisation.suspects and localisation.suspects[0].explains and localisation.healthy_checked:
        return f"{localisation.degraded} {_words(localisation.metric)} alerts, all through {localisation.where()}"[:300]
    common = set.intersection(*(_agents(a) for a in alerts))
    metrics = Counter(_words(str(a.labels.get("metric"))) for a in alerts)
    what = ", ".join(f"{n} {m}" for m, n in metrics.most_common())
    if len(common) == 2:
        first, second = sorted(common)
        return f"{len(alerts)} alerts between {first} and {second} ({what})"[:300]
    if common:
        return f"{len(alerts)} alerts on paths of {sorted(common)[0]} ({what})"[:300]
    return f"{len(alerts)} alerts ({what})"[:300]


def _severity(alerts: list[Alert]) -> str:
    return max(
        (a.rule.severity for a in alerts), key=lambda s: SEVERITY_ORDER.index(Severity(s)), default=Severity.WARNING
    )


def _update_alerts(conditions: list[Condition], now: datetime, tick: Tick) -> list[Alert]:
    """The lifecycle: new conditions are pending, pending ones fire after the rule's pending
    period, clear ones resolve after its hold time (a pending one silently)."""
    active = {
        a.fingerprint: a
        for a in Alert.objects.select_for_update(of=("self",))
        .exclude(state=AlertState.RESOLVED)
        .select_related("rule", "incident")
    }
    seen: set[str] = set()
    for condition in conditions:
        fingerprint = condition.fingerprint
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        alert = active.get(fingerprint)
        if alert is None:
            alert = Alert(
                rule=condition.rule,
                fingerprint=fingerprint,
                started_at=now,
                last_true_at=now,
                advice=advice_for(condition),
            )
            active[fingerprint] = alert
        alert.labels, alert.summary, alert.value = condition.labels, condition.summary[:500], condition.value
        alert.evidence, alert.last_true_at = {**condition.evidence, **_also_changed(alert, condition)}, now
        alert.finding_id = condition.finding.pk if condition.finding is not None else None
        if alert.state == AlertState.PENDING and (now - alert.started_at).total_seconds() >= alert.rule.pending_s:
            alert.state, alert.firing_at = AlertState.FIRING, now
            tick.fired += 1
        alert.save()
    for fingerprint, alert in active.items():
        if fingerprint in seen:
            continue
        clear_s = (now - alert.last_true_at).total_seconds()
        if alert.state == AlertState.PENDING or clear_s >= alert.rule.hold_s or not alert.rule.enabled:
            alert.state, alert.resolved_at = AlertState.RESOLVED, now
            alert.save(update_fields=["state", "resolved_at"])
            tick.resolved += 1
            if alert.incident is not None:
                _event(alert.incident, EventKind.ALERT_RESOLVED, f"Resolved: {alert.summary}", now)
    return [a for a in active.values() if a.state != AlertState.RESOLVED]


def _mute(alerts: list[Alert], now: datetime) -> None:
    """Silences and maintenance windows mark alerts silenced; a firing agent-down alert
    inhibits the other alerts of that agent's paths. Both only stop delivery."""
    silences = [
        s
        for s in Silence.objects.filter(starts_at__lte=now, ends_at__gt=now, expired_at__isnull=True)
        if is_active(s, now)
    ]
    down = {a.labels["agent"][0] for a in alerts if a.rule.kind == RuleKind.AGENT_DOWN and a.state == AlertState.FIRING}
    for alert in alerts:
        silence = silencing(silences, alert.labels)
        inhibited = alert.rule.kind != RuleKind.AGENT_DOWN and bool(_agents(alert) & down)
        held_by = sorted(_agents(alert) & down) if inhibited else []
        changed = (silence is not None) != alert.silenced or inhibited != alert.inhibited
        if not changed and alert.labels.get("held_by", []) == held_by:
            continue
        if alert.incident is not None and silence is not None and not alert.silenced:
            _event(
                alert.incident, EventKind.ALERT_SILENCED, f"Silenced by {silence.created_by}: {silence.comment}", now
            )
        if alert.incident is not None and inhibited and not alert.inhibited:
            _event(
                alert.incident,
                EventKind.ALERT_INHIBITED,
                f"Held back while agent {sorted(_agents(alert) & down)[0]} is down",
                now,
            )
        alert.silenced, alert.inhibited = silence is not None, inhibited
        labels = {k: v for k, v in alert.labels.items() if k != "held_by"}
        alert.labels = {**labels, "held_by": held_by} if held_by else labels
        alert.save(update_fields=["silenced", "inhibited", "labels"])


# How often an incident's cause is worked out again while its alerts stay the same: paths
# that measured since may now clear, or implicate, what its degraded paths share.
LOCALISE_EVERY = timedelta(minutes=5)


def _localise_due(incident: Incident, alerts: list[Alert], now: datetime) -> bool:
    last = incident.localised_at
    if last is None or now - last >= LOCALISE_EVERY:
        return True
    return any(max(a.started_at, a.firing_at or a.started_at, a.resolved_at or a.started_at) > last for a in alerts)


def _group(alerts: list[Alert], now: datetime, tick: Tick, world_agents: dict[str, Agent]) -> None:
    """Firing alerts without an incident join one that shares their cause, or open one."""
    facts = PathFacts(world_agents, now)
    open_incidents = list(
        Incident.objects.select_for_update().exclude(status=IncidentStatus.RESOLVED).order_by("opened_at")
    )
    members: dict[int, list[Alert]] = {}
    for alert in Alert.objects.filter(incident__in=open_incidents).select_related("rule"):
        members.setdefault(alert.incident_id or 0, []).append(alert)
    # Agent-down first, so an agent's path alerts join its outage rather than the reverse.
    for alert in sorted(alerts, key=lambda a: a.rule.kind != RuleKind.AGENT_DOWN):
        if alert.state != AlertState.FIRING or alert.incident is not None:
            continue
        incident = _incident_for(alert, open_incidents, members, now, facts)
        if incident is None:
            incident = Incident.objects.create(group_key=_group_key(alert), title=alert.summary[:300], opened_at=now)
            open_incidents.append(incident)
            tick.opened.append(incident.pk)
            _event(incident, EventKind.OPENED, f"Opened by rule {alert.rule.name}", now)
        alert.incident = incident
        alert.save(update_fields=["incident"])
        members.setdefault(incident.pk, []).append(alert)
        _event(incident, EventKind.ALERT_FIRING, alert.summary, now)
        if alert.silenced:
            _event(incident, EventKind.ALERT_SILENCED, "Silenced: it matches an active silence", now)
        if alert.inhibited:
            _event(incident, EventKind.ALERT_INHIBITED, "Held back while one of its agents is down", now)
    for incident in open_incidents:
        group = members.get(incident.pk, [])
        live = [a for a in group if a.state != AlertState.RESOLVED]
        if group and not live:
            incident.status, incident.resolved_at = IncidentStatus.RESOLVED, now
            _event(incident, EventKind.RESOLVED, "Every alert resolved", now)
        shown = live or group
        localisation = None
        if len(shown) > 1 and _localise_due(incident, shown, now):
            localisation = localise(shown, facts)
            cause = localisation.sentence() if localisation else ""
            if cause != incident.cause:
                _event(incident, EventKind.LOCALISED, cause or "Its degraded paths no longer share anything", now)
            incident.cause, incident.localised_at = cause, now
            incident.title = _title(shown, localisation)
        elif len(shown) <= 1 or not incident.cause:
            incident.title, incident.cause = _title(shown), ""
        incident.severity = _severity(shown)
        incident.save()


def _due(incident: Incident, firing: list[str], now: datetime) -> NotificationKind | None:
    """Which message the incident owes now, by Alertmanager's timers (none when nothing it
    reported changed and the repeat interval has not passed)."""
    since = (now - incident.last_notified_at).total_seconds() if incident.last_notified_at else None
    if incident.status == IncidentStatus.RESOLVED:
        return NotificationKind.RESOLVED if since is not None and not incident.resolved_notified else None
    if since is None:
        waited = (now - incident.opened_at).total_seconds() >= settings.ALERT_GROUP_WAIT_S
        return NotificationKind.FIRING if firing and waited else None
    if sorted(firing) != sorted(incident.notified_firing):
        return NotificationKind.UPDATE if since >= settings.ALERT_GROUP_INTERVAL_S else None
    if firing and incident.status == IncidentStatus.OPEN and since >= settings.ALERT_REPEAT_INTERVAL_S:
        return NotificationKind.REPEAT
    return None


def _routes(channel: Channel, alerts: list[Alert]) -> bool:
    return not channel.matchers or any(matchers.matches(channel.matchers, a.labels) for a in alerts)


def _notify(now: datetime, tick: Tick) -> None:
    incidents = Incident.objects.select_for_update(of=("self",)).exclude(
        status=IncidentStatus.RESOLVED, resolved_notified=True
    )
    incidents = incidents.exclude(status=IncidentStatus.RESOLVED, last_notified_at__isnull=True)
    channels = list(Channel.objects.filter(enabled=True))
    for incident in incidents.select_related("acknowledged_by"):
        alerts = list(incident.alerts.select_related("rule"))
        firing = [a.fingerprint for a in alerts if a.notifiable]
        kind = _due(incident, firing, now)
        if kind is None:
            continue
        previous = list(incident.notified_firing)
        incident.sequence += 1
        incident.last_notified_at, incident.notified_firing = now, firing
        incident.resolved_notified = kind == NotificationKind.RESOLVED
        incident.save()
        message = messages.build(incident, kind, alerts, previous, now)
        targets = [c for c in channels if _routes(c, alerts) and (kind != NotificationKind.RESOLVED or c.send_resolved)]
        for channel in targets:
            delivery = Delivery.objects.create(
                incident=incident,
                channel=channel,
                sequence=incident.sequence,
                kind=kind,
                message=message,
                next_attempt_at=now,
            )
            tick.deliveries.append(delivery.pk)
        names = ", ".join(c.name for c in targets) or "no channel routes it"
        _event(
            incident, EventKind.NOTIFIED, f"{messages.HEADLINES[kind]} (message {incident.sequence}) to {names}", now
        )


def evaluate(now: datetime) -> Tick:
    """One tick; queued deliveries are sent by the delivery task after the commit."""
    tick = Tick()
    world = load_world(now)
    conditions = evaluate_conditions(list(Rule.objects.filter(enabled=True)), world)
    tick.conditions = len(conditions)
    with transaction.atomic():
        _serialize_with_actions()
        alerts = _update_alerts(conditions, now, tick)
        _mute(alerts, now)
        _group(alerts, now, tick, world.agents)
        _notify(now, tick)
    return tick


def acknowledge(incident: Incident, user: Any, comment: str, now: datetime) -> list[int]:
    """Acknowledges an open incident; returns the deliveries that tell the services with an
    acknowledgement of their own (to send once committed)."""
    with transaction.atomic():
        _serialize_with_actions()
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
        if incident.status != IncidentStatus.OPEN:
            raise IncidentStateError(f"incident {incident.pk} is {incident.status}, not open")
        incident.status, incident.acknowledged_at, incident.acknowledged_by = IncidentStatus.ACKNOWLEDGED, now, user
        incident.ack_comment = comment
        incident.save()
        _event(incident, EventKind.ACKNOWLEDGED, f"Acknowledged: {comment}" if comment else "Acknowledged", now,
               actor=user.get_username())  # fmt: skip
        return _tell_acknowledgement(incident, now)


def _tell_acknowledgement(incident: Incident, now: datetime) -> list[int]:
    """An acknowledgement for each enabled channel that paged this incident through a service
    with an acknowledgement of its own (PagerDuty, Opsgenie), so its on-call stops escalating."""
    kinds = [kind for kind, transport in TRANSPORTS.items() if transport.follows_acknowledgements]
    paged = Delivery.objects.filter(incident=incident).values("channel_id")
    channels = list(Channel.objects.filter(enabled=True, kind__in=kinds, pk__in=paged))
    if not channels:
        return []
    incident.sequence += 1
    incident.save(update_fields=["sequence"])
    alerts = list(incident.alerts.select_related("rule"))
    message = messages.build(incident, NotificationKind.ACKNOWLEDGED, alerts, list(incident.notified_firing), now)
    rows = [
        Delivery.objects.create(
            incident=incident, channel=channel, sequence=incident.sequence, kind=NotificationKind.ACKNOWLEDGED,
            message=message, next_attempt_at=now,
        )
        for channel in channels
    ]  # fmt: skip
    names = ", ".join(channel.name for channel in channels)
    _event(incident, EventKind.NOTIFIED, f"Acknowledged (message {incident.sequence}) to {names}", now)
    return [row.pk for row in rows]


def resolve(incident: Incident, user: Any, comment: str, now: datetime) -> None:
    """By hand: the incident and its alerts end; a condition that still holds raises a new
    alert (and incident) at the next tick."""
    with transaction.atomic():
        _serialize_with_actions()
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
        if incident.status == IncidentStatus.RESOLVED:
            raise IncidentStateError(f"incident {incident.pk} is already resolved")
        incident.alerts.exclude(state=AlertState.RESOLVED).update(state=AlertState.RESOLVED, resolved_at=now)
        incident.status, incident.resolved_at, incident.resolved_by = IncidentStatus.RESOLVED, now, user
        incident.save()
        _event(incident, EventKind.RESOLVED, f"Resolved by hand: {comment}" if comment else "Resolved by hand", now,
               actor=user.get_username())  # fmt: skip


# A tick locks alerts, then incidents; a hand resolve locks the incident, then its alerts. Run
# concurrently they deadlocked (CI: a 500 on /resolve/). One transaction-level advisory lock
# puts them in a line: a resolve waits at most one tick.
def _serialize_with_actions() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended('alerts:evaluate', 0))")


class IncidentStateError(ValueError):
    """An acknowledge or resolve the incident's state does not allow."""


def _also_changed(alert: Alert, condition: Condition) -> dict[str, str]:
    """What else changed when the alert's finding began, read once when the alert opens (later
    ticks keep it: the moment is in the past, and each tick re-reading it would cost a query
    per open finding)."""
    if condition.finding is None:
        return {}
    if alert.pk is not None and alert.finding_id == condition.finding.pk:
        kept = (alert.evidence or {}).get("also_changed")
        return {"also_changed": kept} if isinstance(kept, str) else {}
    items = what_else_changed(condition.finding)
    return {"also_changed": "; ".join(item.sentence for item in items)} if items else {}
