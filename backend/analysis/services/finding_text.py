"""A finding in the words a NOC reads: one line (metric, direction, size, path) and, for a
route change, the routers the new route has that the old one did not. The alerts' subjects
and the "what else changed" list of a finding say it the same way."""

from __future__ import annotations

from collections.abc import Iterable

from analysis.models import Finding
from core.units import rate_text
from measurements.models import TracePath


def finding_summary(finding: Finding, path: str, ends: tuple[str, str] | None = None) -> str:
    """One line a NOC reads in a subject: metric, direction, size, path. A one-way finding
    names its direction with the path's `ends` (source and destination names) where given."""
    m, word = finding.magnitude, finding.direction
    way = f"from {ends[0]} to {ends[1]}" if ends else f"on {path}"
    if finding.metric == "one_way_delay":
        return f"One-way delay {word} {abs(m):.1f} ms {way} ({finding.baseline:.1f} to {finding.current:.1f} ms)"
    if finding.metric == "one_way_loss":
        return f"Loss {word} {abs(m):.2f} pp {way} ({finding.baseline:.2%} to {finding.current:.2%}, one way)"
    if finding.metric == "throughput":
        before, now = rate_text(finding.baseline), rate_text(finding.current)
        return f"Throughput {word} {abs(m) * 100:.0f}% on {path} ({before} to {now})"
    if finding.metric == "rtt":
        return f"RTT {word} {abs(m):.1f} ms on {path} ({finding.baseline:.1f} to {finding.current:.1f} ms)"
    if finding.metric == "loss":
        return f"Loss {word} {abs(m):.2f} pp on {path} ({finding.baseline:.2%} to {finding.current:.2%})"
    if finding.metric == "route":
        # The magnitude counts routes (a trace's flows may take several), not routers.
        return f"Route changed on {path} ({m:.0f} new route{'' if round(m) == 1 else 's'})"
    return f"ECMP members changed on {path} ({', '.join(finding.rules) or 'changed'})"


def hop_addresses(source_id: str, destination_id: str, fingerprints: Iterable[str], family: int = 4) -> set[str]:
    """The router addresses on the path's traces with these route fingerprints."""
    found: set[str] = set()
    traces = TracePath.objects.filter(
        source_id=source_id, destination_id=destination_id, family=family, fingerprint__in=list(fingerprints)
    ).order_by("-time")
    seen: set[str] = set()
    for fingerprint, hops in traces.values_list("fingerprint", "hops")[:50]:
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        for hop in hops:
            found |= {p["address"] for p in hop.get("probes", []) if p.get("address")}
    return found


def new_hops(finding: Finding) -> list[str]:
    """A route finding's routers that its old route did not have: the label that groups the
    route changes of many paths through one new hop into one incident."""
    evidence = finding.evidence or {}
    added, old = evidence.get("added") or [], evidence.get("old_fingerprints") or []
    if not added:
        return []
    src, dst, family = str(finding.source_id), str(finding.destination_id), finding.family
    return sorted(hop_addresses(src, dst, added, family) - hop_addresses(src, dst, old, family) - {"*"})[:20]
