"""The rules a fresh install starts with, so the demo alerts with no configuration. The
migration adds them; tests whose database was flushed call ensure_default_rules."""

from typing import Any

DEFAULT_RULES: list[dict[str, Any]] = [
    # Scoped to drops: the slow rule also reports a path that got faster, which is worth a
    # finding on the path page but not a critical page.
    {"name": "Throughput regression", "kind": "finding", "metric": "throughput", "severity": "critical",
     "hold_s": 1800, "scope": [{"name": "direction", "op": "=", "value": "down"}],
     "description": "The analysis found a throughput drop (judged per ECMP member)."},
    {"name": "RTT shift", "kind": "finding", "metric": "rtt", "severity": "warning", "hold_s": 900,
     "description": "The analysis found the path's RTT moved (within its ECMP member)."},
    {"name": "Loss increase", "kind": "finding", "metric": "loss", "severity": "warning", "hold_s": 900,
     "description": "The analysis found more ping loss than the path's baseline."},
    # Pending 5 min: ten packets a second find a queue that comes and goes within minutes,
    # which the path page shows but is no page.
    {"name": "One-way delay shift", "kind": "finding", "metric": "one_way_delay", "severity": "warning",
     "pending_s": 300, "hold_s": 900,
     "description": "The analysis found one direction's delay moved (latency tests, clocks trusted)."},
    {"name": "One-way loss increase", "kind": "finding", "metric": "one_way_loss", "severity": "warning",
     "pending_s": 300, "hold_s": 900,
     "description": "The analysis found more loss in one direction than its baseline (latency tests)."},
    {"name": "Route change", "kind": "finding", "metric": "route", "severity": "info", "hold_s": 900,
     "description": "Traceroute saw new hops on the path."},
    {"name": "ECMP members changed", "kind": "finding", "metric": "ecmp", "severity": "info", "hold_s": 900,
     "description": "A multipath member moved, appeared or vanished, or the hash weights shifted."},
    {"name": "Agent down", "kind": "agent_down", "severity": "critical", "hold_s": 120,
     "description": "No contact for three poll intervals (FATHOM_AGENT_OFFLINE_AFTER_S)."},
    # Held 2 min: an agent that went away is "agent down" (3 polls) before its paths' no-data
    # fires, so the outage inhibits them instead of paging once per path first.
    {"name": "No data", "kind": "no_data", "severity": "warning", "k": 3, "n": 3, "hold_s": 600, "pending_s": 120,
     "description": "Three of a path test's last three runs failed or were missed, or it is three intervals late."},
    {"name": "Throughput far below ceiling", "kind": "threshold", "metric": "throughput_fraction",
     "comparison": "lt", "value": 0.1, "k": 3, "n": 4, "severity": "warning", "hold_s": 3600, "enabled": False,
     "description": "An example threshold rule: 3 of the last 4 runs under 10% of the path's ceiling."},
]  # fmt: skip


def ensure_default_rules() -> None:
    from alerts.models import Rule

    for spec in DEFAULT_RULES:
        Rule.objects.get_or_create(name=spec["name"], defaults=spec)
