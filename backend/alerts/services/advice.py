"""What to do about an alert, in words, from the analysis of its path (throughput alerts) or
from what the alert is (the rest)."""

from __future__ import annotations

import logging

from django.conf import settings

from alerts.choices import RuleKind
from alerts.services.conditions import Condition
from analysis.services.paths import path_report
from inventory.models import Agent

log = logging.getLogger(__name__)

GENERIC = {
    "rtt": "Compare traceroutes before and after the change on the path page: a longer route or a new "
    "ECMP member usually explains an RTT step; a queue building shows as jitter growing with it.",
    "loss": "Check interface error counters on both hosts and along the route; loss on a long path caps "
    "a single TCP flow far below the link (Mathis).",
    "route": "A route change: check whether the new hops are expected (maintenance, a failover) and "
    "whether RTT or throughput moved with it.",
    "ecmp": "ECMP members changed: a member's RTT moved, one appeared or vanished, or the hash weights "
    "shifted. Flows on the slower member see a lower ceiling.",
    "one_way_delay": "One direction's delay moved and the other's did not: look for the queue or the longer "
    "route in that direction only (traceroute from each end, interface queues on the way there).",
    "one_way_loss": "Loss in one direction only: check the interfaces and policers on the way in that "
    "direction (error and drop counters, a policer's rate); the reverse direction is the control.",
}


def advice_for(condition: Condition) -> str:
    """A few lines; empty when there is nothing better to say than the summary."""
    rule = condition.rule
    if rule.kind == RuleKind.AGENT_DOWN:
        return (
            "Check that fathom-agent runs on the host (systemctl status fathom-agent) and can reach "
            "the server; its spool keeps results until it can upload them."
        )
    if rule.kind == RuleKind.NO_DATA:
        reasons = condition.evidence.get("reasons") or []
        text = "Runs fail or do not happen: check both agents are online and the test's peer answers"
        return f"{text}. Reasons: {'; '.join(reasons)}" if reasons else text + "."
    metric = condition.labels.get("metric")
    if metric in GENERIC:
        return GENERIC[metric]
    if len(condition.agent_ids) != 2:
        return ""
    try:
        source = Agent.objects.get(pk=condition.agent_ids[0])
        destination = Agent.objects.get(pk=condition.agent_ids[1])
        report = path_report(
            source, destination, goal_bps=None, daily_volume_bytes=settings.ANALYSIS_DAILY_VOLUME_BYTES, runs_limit=1
        )
    except Exception:  # the analysis must never stop an alert: it goes out without advice
        log.exception("no advice for %s", condition.summary)
        return ""
    lines = []
    if report.runs:
        lines.append(f"Latest run: {report.runs[0].get_diagnosis_display()}.")
    for item in report.advice[:6]:
        lines.append(f"{item.where}: {item.setting} = {item.value} ({item.reason})")
    return "\n".join(lines)
