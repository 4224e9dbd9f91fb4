"""Regressions against the database: every rule run over a path's stored history, and the
findings of the path made to match what the rules found.

Reads the throughput series (stored run analyses), ping windows, latency windows and trace
fingerprints of one path, runs the pure rules of analysis.changes, and stores their incidents as findings under
the path's lock: a recompute over the same data changes nothing, an episode whose start
estimate moved updates its finding, and at most one finding per path and metric is open.
"""

from __future__ import annotations

import bisect
import itertools
import math
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from analysis.changes.ecmp import ModeObservation, SweepObservation, ecmp_changes
from analysis.changes.episodes import Direction, Episode, Point
from analysis.changes.loss import loss_rule
from analysis.changes.matching import MergedEpisode, StoredPeriod, match_episodes, merge_episodes
from analysis.changes.policer_rate import RampPoint, policer_rate_rule
from analysis.changes.routes import route_changes
from analysis.changes.rtt import rtt_cusum
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule
from analysis.changes.windows import RttWindow
from analysis.choices import FindingKind, FindingMetric, FindingState, RttModeVerdict
from analysis.members import (
    MemberLevel,
    judged_point,
    member_switch,
    on_unseen_member,
    run_scale,
    within_member,
)
from analysis.models import Finding, RunAnalysis, SweepModes
from analysis.payloads import checked
from analysis.policer import from_ramp, ramp_steps
from analysis.services.inputs import as_dict
from analysis.services.own_load import BUSY_CTE, NOT_BUSY
from analysis.services.ramp_runs import ramp_runs
from analysis.services.sweep_modes import MODES_LOOKBACK
from inventory.models import Agent, HostFactsSnapshot
from measurements import route_match
from measurements.models import TracePath

# Regression rules see this much throughput history (the slow rule's window is 50 runs).
THROUGHPUT_HISTORY = timedelta(days=120)
# The policer-rate rule sees this many of a path's newest ramps (a day's is 1-2 a direction).
RULE_RAMPS = 60
TRACE_HISTORY = timedelta(days=14)
# The ECMP rules learn the members from the first day of this and judge the rest.
ECMP_HISTORY = timedelta(days=3)
TUNING_KEYS = ("sysctls", "kernel", "iperf3_version", "interfaces")

RTT_WINDOWS_SQL = f"""
WITH {BUSY_CTE}
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       count(*) FILTER (WHERE NOT duplicate),
       count(*) FILTER (WHERE NOT duplicate AND rtt_ms IS NULL),
       min(rtt_ms) FILTER (WHERE NOT duplicate),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY rtt_ms) FILTER (WHERE NOT duplicate)
FROM measurements_pingsample
WHERE source_id = %(a)s AND destination_id = %(b)s AND family = %(family)s
  AND time >= %(start)s AND time < %(end)s AND {NOT_BUSY}
GROUP BY bucket
ORDER BY bucket
"""  # noqa: S608 (own_load.py's constants, no input)


def rtt_windows(source: Agent, destination: Agent, start: datetime, end: datetime, family: int = 4) -> list[RttWindow]:
    """Ping samples of a path in fixed windows (only complete ones: the newest may still fill,
    and the first starts on a window boundary so it is not a partial one), without those
    answered while a throughput test loaded either agent (own_load.py)."""
    width = settings.ANALYSIS_RTT_WINDOW_S
    start = datetime.fromtimestamp(-(-start.timestamp() // width) * width, tz=start.tzinfo)
    with connection.cursor() as cursor:
        cursor.execute(
            RTT_WINDOWS_SQL,
            {"width": width, "a": source.pk, "b": destination.pk, "family": family, "start": start, "end": end},
        )
        rows = cursor.fetchall()
    step = timedelta(seconds=width)
    return [
        RttWindow(start=bucket, end=bucket + step, sent=sent, lost=lost, min_ms=min_ms, p50_ms=p50_ms, p90_ms=p90_ms)
        for bucket, sent, lost, min_ms, p50_ms, p90_ms in rows
        if bucket + step <= end and sent
    ]


# One direction of latency sessions in the windows of the RTT rules: the path a -> b is the
# forward direction of a's sessions towards b, or the backward direction of b's towards a.
# Loss leaves out the intervals Fathom's own throughput tests loaded (own_load.py); delay
# leaves those out too, and every interval whose clocks do not allow a one-way figure. A
# one-way-only session (OWAMP) has no backward direction to read.
ONE_WAY_WINDOWS_SQL = """
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       sum({sent}) FILTER (WHERE NOT own_load),
       sum({lost}) FILTER (WHERE NOT own_load),
       min({direction}_min_ms) FILTER (WHERE {trusted}),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY {direction}_p50_ms) FILTER (WHERE {trusted}),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY {direction}_p90_ms) FILTER (WHERE {trusted})
FROM measurements_latencyinterval
WHERE source_id = %(source)s AND destination_id = %(destination)s AND family = %(family)s
  AND time >= %(start)s AND time < %(end)s AND {lost} IS NOT NULL
GROUP BY bucket
ORDER BY bucket
"""
TRUSTED = """NOT own_load AND answered > 0 AND sender_synchronized AND reflector_synchronized
             AND sender_error_ms + reflector_error_ms <= %(clock_limit)s"""
ONE_WAY_SQL = {
    "forward": ONE_WAY_WINDOWS_SQL.format(sent="sent", lost="forward_lost", direction="forward", trusted=TRUSTED),
    # Of what reached the far end: answers are lost only of the packets the reflector got.
    "backward": ONE_WAY_WINDOWS_SQL.format(
        sent="sent - forward_lost", lost="backward_lost", direction="backward", trusted=TRUSTED
    ),
}


def one_way_windows(
    source: Agent, destination: Agent, start: datetime, end: datetime, family: int = 4
) -> tuple[list[RttWindow], list[RttWindow]]:
    """The delay and loss windows of the direction source -> destination (complete windows
    only, as rtt_windows): from source's latency sessions towards destination, or where it ran
    none in the range, from destination's sessions back (their backward direction)."""
    width = settings.ANALYSIS_RTT_WINDOW_S
    start = datetime.fromtimestamp(-(-start.timestamp() // width) * width, tz=start.tzinfo)
    params: dict[str, Any] = {
        "width": width, "start": start, "end": end, "clock_limit": settings.LATENCY_CLOCK_ERROR_LIMIT_MS,
        "family": family,
    }  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        for direction, (a, b) in (("forward", (source, destination)), ("backward", (destination, source))):
            cursor.execute(ONE_WAY_SQL[direction], {**params, "source": a.pk, "destination": b.pk})
            rows = cursor.fetchall()
            if rows:
                break
    step = timedelta(seconds=width)
    windows = [
        RttWindow(start=bucket, end=bucket + step, sent=sent or 0, lost=lost or 0, min_ms=low, p50_ms=p50, p90_ms=p90)
        for bucket, sent, lost, low, p50, p90 in rows
        if bucket + step <= end
    ]
    return [window for window in windows if window.min_ms is not None], [window for window in windows if window.sent]


def trace_route_sets(
    source: Agent, destination: Agent, since: datetime, family: int = 4
) -> list[tuple[datetime, frozenset[str]]]:
    """Per trace run, the routes of the flows that reached the destination (a route with
    silent hops read as the complete route it fits: a router's ICMP rate limit is no move)."""
    path = TracePath.objects.filter(source_id=source.pk, destination_id=destination.pk, family=family, time__gte=since)
    rows = list(path.filter(reached=True).values_list("time", "run_id", "fingerprint"))
    weights = Counter(fingerprint for _, _, fingerprint in rows)
    hops = (
        path.filter(fingerprint__in=list(weights))
        .order_by("fingerprint", "-time")
        .distinct("fingerprint")
        .values_list("fingerprint", "hops")
    )
    read = route_match.read_as({fingerprint: route_match.hop_pattern(h) for fingerprint, h in hops}, weights)
    by_run: dict[uuid.UUID, tuple[datetime, set[str]]] = {}
    for time, run_id, fingerprint in rows:
        by_run.setdefault(run_id, (time, set()))[1].add(read.get(fingerprint, fingerprint))
    return sorted((time, frozenset(prints)) for time, prints in by_run.values())


ALL_METRICS = frozenset(FindingMetric)


def path_episodes(
    source: Agent,
    destination: Agent,
    now: datetime,
    metrics: frozenset[FindingMetric] = ALL_METRICS,
    family: int = 4,
) -> dict[FindingMetric, list[Episode]]:
    """The rules of the given metrics (all by default) over the path's history (in its
    family): what the stored findings of those metrics must match. Each metric reads only
    its own inputs."""
    episodes: dict[FindingMetric, list[Episode]] = {}
    if FindingMetric.THROUGHPUT in metrics:
        episodes[FindingMetric.THROUGHPUT] = throughput_episodes(source, destination, now, family)
    if metrics & {FindingMetric.RTT, FindingMetric.LOSS}:
        baseline = timedelta(seconds=settings.ANALYSIS_RTT_BASELINE_S)
        windows = rtt_windows(source, destination, now - 2 * baseline, now, family)
        if FindingMetric.RTT in metrics:
            # RTT is compared within the ECMP member each ping ran on; loss is the same on every member.
            judged = within_member(windows, ecmp_modes_at(source, destination, windows, family))
            episodes[FindingMetric.RTT] = rtt_cusum(judged, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
        if FindingMetric.LOSS in metrics:
            episodes[FindingMetric.LOSS] = loss_rule(windows, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
    if metrics & {FindingMetric.ONE_WAY_DELAY, FindingMetric.ONE_WAY_LOSS}:
        baseline = timedelta(seconds=settings.ANALYSIS_RTT_BASELINE_S)
        delays, losses = one_way_windows(source, destination, now - 2 * baseline, now, family)
        if FindingMetric.ONE_WAY_DELAY in metrics:
            episodes[FindingMetric.ONE_WAY_DELAY] = rtt_cusum(delays, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
        if FindingMetric.ONE_WAY_LOSS in metrics:
            episodes[FindingMetric.ONE_WAY_LOSS] = loss_rule(losses, baseline_s=settings.ANALYSIS_RTT_BASELINE_S)
    if FindingMetric.ROUTE in metrics:
        routes = trace_route_sets(source, destination, now - TRACE_HISTORY, family)
        episodes[FindingMetric.ROUTE] = route_changes(routes)
    if FindingMetric.ECMP in metrics:
        sweeps = sweep_observations(source, destination, now - ECMP_HISTORY, now, family)
        episodes[FindingMetric.ECMP] = ecmp_changes(sweeps)
    return episodes


def run_point(row: RunAnalysis) -> Point:
    """An analysed run as the throughput rules see it: a run on a slower ECMP member is
    judged against that member's ceiling. The row must have a rate."""
    assert row.rate_bps is not None
    scale = run_scale(row.ceilings, row.diagnosis)
    ambiguous = on_unseen_member(row.ceilings, row.rate_bps)
    return judged_point(row.started_at, row.rate_bps, row.ceiling_bps, scale, ambiguous=ambiguous)


def throughput_episodes(source: Agent, destination: Agent, now: datetime, family: int = 4) -> list[Episode]:
    history = RunAnalysis.objects.filter(
        source=source,
        destination=destination,
        family=family,
        started_at__gte=now - THROUGHPUT_HISTORY,
        rate_bps__isnull=False,
    ).order_by("started_at")
    series: dict[str, list[Point]] = defaultdict(list)
    scaled: dict[str, int] = defaultdict(int)
    for row in history:
        if row.rate_bps:
            point = run_point(row)
            series[row.options_key].append(point)
            scaled[row.options_key] += run_scale(row.ceilings, row.diagnosis) < 1
    # One series per option set: 1 stream and 8 streams are different levels, not a change.
    episodes = [
        replace(episode, evidence={**episode.evidence, "member_scaled": scaled[key]})
        for key, points in series.items()
        for episode in (*throughput_fast_rule(points), *throughput_slow_rule(points))
    ]
    # A policed path's ramps measure its policer; the TCP runs they are judged beside are the
    # path's main series (the option set with the most runs).
    ramps = measured_ramps(source, destination, now - THROUGHPUT_HISTORY, now, family)
    if ramps and series:
        main = max(series.values(), key=len)
        episodes += policer_rate_rule(ramps, main)
    return episodes


def measured_ramps(
    source: Agent, destination: Agent, since: datetime, now: datetime, family: int = 4
) -> list[RampPoint]:
    """The path's ramps since `since` that measured its policer's rate (not only a bound)."""
    points: list[RampPoint] = []
    # Enough ramps for a baseline before a drop and the ramps after it, in both directions.
    for run in ramp_runs(source, destination, since, now, family, newest=RULE_RAMPS):
        estimate = from_ramp(ramp_steps(run.summary), "")
        if estimate is not None and not estimate.lower_bound:
            points.append(RampPoint(run.started_at, estimate.rate_bps))
    return points


def sweep_observations(
    source: Agent, destination: Agent, since: datetime, until: datetime, family: int = 4
) -> list[SweepObservation]:
    """The path's decided flow sweeps as the ECMP rules read them: flows used and each mode's
    RTT and flows (stored analyses are contract-checked; anything else is passed over)."""
    rows = SweepModes.objects.filter(
        source=source, destination=destination, family=family, started_at__gte=since, started_at__lte=until
    ).exclude(verdict=RttModeVerdict.INSUFFICIENT)
    found: list[SweepObservation] = []
    for row in rows.order_by("started_at").only("started_at", "analysis"):
        analysis = as_dict(row.analysis)
        flows, modes = analysis.get("flows_used"), analysis.get("modes")
        if not isinstance(flows, int) or not isinstance(modes, list):
            continue
        observed = tuple(
            ModeObservation(float(mode["rtt_ms"]), int(mode["flow_count"]))
            for mode in modes
            if isinstance(mode, dict)
            and isinstance(mode.get("rtt_ms"), int | float)
            and isinstance(mode.get("flow_count"), int)
        )
        found.append(SweepObservation(row.started_at, flows, observed))
    return found


def stored_levels(analysis: dict[str, Any]) -> tuple[MemberLevel, ...]:
    """The modes of a stored sweep analysis as ping windows are judged within them."""
    modes = analysis.get("modes")
    levels: list[MemberLevel] = []
    for mode in modes if isinstance(modes, list) else []:
        rtt = mode.get("rtt_ms") if isinstance(mode, dict) else None
        if isinstance(rtt, bool) or not isinstance(rtt, int | float):
            continue
        low = mode.get("min_rtt_ms")
        levels.append(
            MemberLevel(
                float(rtt), float(low) if isinstance(low, int | float) and not isinstance(low, bool) else float(rtt)
            )
        )
    return tuple(levels)


def ecmp_modes_at(
    source: Agent, destination: Agent, windows: Sequence[RttWindow], family: int = 4
) -> list[tuple[MemberLevel, ...]]:
    """Per window, the RTT modes of the newest ECMP flow sweep of the day before its end (the
    reverse path's where the forward one has none); () where the path had no ECMP sweep."""
    if not windows:
        return []
    since, until = windows[0].start - MODES_LOOKBACK, windows[-1].end
    both_ways = SweepModes.objects.filter(
        Q(source=source, destination=destination) | Q(source=destination, destination=source),
        family=family,
        verdict=RttModeVerdict.ECMP,
        started_at__gte=since,
        started_at__lte=until,
    ).order_by("started_at")
    by_direction: dict[bool, list[tuple[datetime, tuple[MemberLevel, ...]]]] = {True: [], False: []}
    for row in both_ways.only("source_id", "started_at", "analysis"):
        forward = row.source_id == source.pk
        by_direction[forward].append((row.started_at, stored_levels(as_dict(row.analysis))))
    sweeps = by_direction[True] or by_direction[False]
    starts = [started for started, _ in sweeps]
    found: list[tuple[MemberLevel, ...]] = []
    for window in windows:
        newest = bisect.bisect_right(starts, window.end) - 1
        usable = newest >= 0 and starts[newest] >= window.end - MODES_LOOKBACK
        found.append(sweeps[newest][1] if usable else ())
    return found


# The direction that is a regression, where a metric has one (ECMP and route changes are news either way).
REGRESSION_DIRECTION = {
    FindingMetric.THROUGHPUT: Direction.DOWN,
    FindingMetric.RTT: Direction.UP,
    FindingMetric.LOSS: Direction.UP,
    FindingMetric.ONE_WAY_DELAY: Direction.UP,
    FindingMetric.ONE_WAY_LOSS: Direction.UP,
}

# ECMP rules measure different things: a member's RTT, a member count, a share of flows.
ECMP_UNITS = {"ecmp_member_moved": "ms", "ecmp_weights_shifted": "pp"}

UNITS = {
    FindingMetric.THROUGHPUT: "relative",
    FindingMetric.RTT: "ms",
    FindingMetric.LOSS: "pp",
    FindingMetric.ROUTE: "paths",
    FindingMetric.ECMP: "members",
    FindingMetric.ONE_WAY_DELAY: "ms",
    FindingMetric.ONE_WAY_LOSS: "pp",
}


def _facts_change(agent: Agent, start: datetime, end: datetime) -> str:
    """What of an agent's tuning changed between two moments, as a sentence ('' if nothing)."""
    snapshots = list(
        HostFactsSnapshot.objects.filter(agent=agent, collected_at__lte=end).order_by("-collected_at")[:50]
    )
    snapshots.reverse()
    for before, after in itertools.pairwise(snapshots):
        if not start < after.collected_at <= end:
            continue
        old_facts, new_facts = as_dict(before.facts), as_dict(after.facts)
        changed = [key for key in TUNING_KEYS if old_facts.get(key) != new_facts.get(key)]
        if "sysctls" in changed:
            old, new = as_dict(old_facts.get("sysctls")), as_dict(new_facts.get("sysctls"))
            keys = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
            changed = [key for key in changed if key != "sysctls"] + keys
        if changed:
            return f"{agent.name}'s host changed at {after.collected_at:%Y-%m-%d %H:%M}: {', '.join(changed)}"
    return ""


def day_levels(source: Agent, destination: Agent, when: datetime, family: int = 4) -> tuple[MemberLevel, ...]:
    """Every ECMP mode the path's sweeps showed in the day before `when` (the reverse path's
    where the forward one has none): a member of 5 % forms a mode in one sweep in five, so the
    newest sweep alone would miss the member a ping took."""
    for src, dst in ((source, destination), (destination, source)):
        rows = SweepModes.objects.filter(
            source=src,
            destination=dst,
            family=family,
            verdict=RttModeVerdict.ECMP,
            started_at__gte=when - MODES_LOOKBACK,
            started_at__lte=when,
        ).only("analysis")
        levels = tuple(level for row in rows for level in stored_levels(as_dict(row.analysis)))
        if levels:
            return levels
    return ()


def ping_member_switch(source: Agent, destination: Agent, episode: MergedEpisode, family: int = 4) -> str:
    """An RTT step from one ECMP member's RTT to another's: ping's flow moved, nothing changed.

    Both must be members the sweeps showed before the step began: after a real shift the
    sweeps show every member moved, and the moved first member is no other member."""
    first = episode.first
    until = first.detected_at + timedelta(seconds=settings.ANALYSIS_RTT_WINDOW_S)
    raw = rtt_windows(source, destination, first.started_at, until, family)
    minima = [math.nan if window.min_ms is None else window.min_ms for window in raw]
    scale = first.evidence.get("baseline_scale_ms")
    slack = float(scale) if isinstance(scale, int | float) and not isinstance(scale, bool) else 0.0
    levels = day_levels(source, destination, first.started_at, family)
    return member_switch(first.baseline, minima, levels, slack, ecmp_modes_at(source, destination, raw, family))


def coinciding_change(
    source: Agent, destination: Agent, episode: MergedEpisode, metric: FindingMetric, family: int = 4
) -> str:
    """What explains a step, so it is an annotation and not an alarm ('' if nothing does): a
    tuning or iperf3 change for throughput, ping moving to another ECMP member for RTT."""
    if metric == FindingMetric.RTT:
        return ping_member_switch(source, destination, episode, family)
    if metric != FindingMetric.THROUGHPUT:
        return ""
    analyses = RunAnalysis.objects.filter(source=source, destination=destination, family=family)
    before = analyses.filter(started_at__lt=episode.started_at).order_by("-started_at").first()
    start = before.started_at if before else episode.started_at - timedelta(days=1)
    end = episode.first.detected_at
    notes = [note for agent in (source, destination) if (note := _facts_change(agent, start, end))]
    after = analyses.filter(started_at__gte=episode.started_at).order_by("started_at").first()
    if before and after and before.iperf3_version and after.iperf3_version != before.iperf3_version:
        notes.append(f"iperf3 changed from {before.iperf3_version} to {after.iperf3_version}")
    return "; ".join(notes)


def _finding_fields(episode: MergedEpisode, metric: FindingMetric, annotation: str) -> dict[str, Any]:
    first = episode.first
    return {
        "rules": episode.rules,
        "kind": FindingKind.ANNOTATION if annotation else FindingKind.ALARM,
        "state": FindingState.CLEARED if episode.cleared_at else FindingState.OPEN,
        "started_at": first.started_at,
        "detected_at": first.detected_at,
        "cleared_at": episode.cleared_at,
        "direction": first.direction.value,
        "baseline": first.baseline,
        "current": first.current,
        "magnitude": first.magnitude,
        "unit": ECMP_UNITS.get(first.rule, UNITS[metric]) if metric == FindingMetric.ECMP else UNITS[metric],
        "evidence": checked("FindingEvidence", first.evidence),
        "annotation": annotation,
    }


def reconcile_findings(
    source: Agent,
    destination: Agent,
    metric: FindingMetric,
    episodes: Sequence[Episode],
    now: datetime,
    existing: list[Finding] | None = None,
    family: int = 4,
) -> int:
    """Makes the stored findings of one path and metric match the rules' episodes.

    A stored finding is matched by overlapping periods, so a start estimate that moves as
    data arrives updates the finding rather than adding one. An open finding no rule still
    sees is cleared. Returns how many findings were opened. `existing` is the path's stored
    findings of this metric when the caller has read them already.
    """
    merged = merge_episodes(episodes, worse=REGRESSION_DIRECTION.get(metric))
    opened = 0
    if existing is None:
        existing = list(Finding.objects.filter(source=source, destination=destination, family=family, metric=metric))
    if not merged and not existing:
        return 0  # the usual path: nothing found, nothing stored
    by_key = {finding.pk: finding for finding in existing}
    stored = [StoredPeriod(finding.pk, finding.started_at, finding.cleared_at) for finding in existing]
    matched: set[int] = set()
    plans: list[tuple[Finding | None, dict[str, Any]]] = []
    for incident in match_episodes(merged, stored):
        # Findings the merged episode also covers are folded into it.
        for folded in incident.folded:
            by_key[folded].delete()
        matched.update(incident.folded)
        if incident.key is not None:
            matched.add(incident.key)
        episode = incident.episode
        fields = _finding_fields(episode, metric, coinciding_change(source, destination, episode, metric, family))
        plans.append((by_key[incident.key] if incident.key is not None else None, fields))
    # Close stale open findings first: at most one may be open per path and metric.
    for finding in existing:
        # A finding folded into another above is deleted (its pk is None now): nothing to close.
        if finding.pk is not None and finding.pk not in matched and finding.state == FindingState.OPEN:
            cleared = max(now, finding.started_at)
            finding.state, finding.cleared_at, finding.updated_at = FindingState.CLEARED, cleared, now
            # `cleared` is one of every evidence shape's keys; the rest was checked when it was stored.
            finding.evidence = {**finding.evidence, "cleared": "no rule confirms it on the current data"}
            finding.save(update_fields=["state", "cleared_at", "updated_at", "evidence"])
    for match, fields in sorted(plans, key=lambda plan: plan[1]["state"] == FindingState.OPEN):
        if match is None:
            Finding.objects.create(source=source, destination=destination, family=family, metric=metric, **fields)
            opened += fields["state"] == FindingState.OPEN
            continue
        if any(getattr(match, key) != value for key, value in fields.items()):
            for key, value in fields.items():
                setattr(match, key, value)
            match.updated_at = now
            match.save()
    return opened


def detect_findings(
    source: Agent,
    destination: Agent,
    now: datetime | None = None,
    metrics: frozenset[FindingMetric] = ALL_METRICS,
    family: int = 4,
) -> int:
    """Runs the rules of the given metrics (every rule by default) on one path (in one
    family) and stores what they find; returns findings newly opened.

    The rules run under the path's lock and on data up to the moment the lock is held, so
    the task and a recompute cannot store findings from different views of the data.
    """
    opened = 0
    # No savepoint when nested (the per-minute pass runs each path in its own transaction):
    # an error still rolls the path back whole, and a pass over 4,500 paths saves 9,000 queries.
    with transaction.atomic(savepoint=False):
        with connection.cursor() as cursor:
            key = f"findings:{source.pk}:{destination.pk}:{family}"
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
        now = now or timezone.now()
        episodes = path_episodes(source, destination, now, metrics, family)
        stored: dict[str, list[Finding]] = defaultdict(list)
        path = Finding.objects.filter(source=source, destination=destination, family=family)
        for finding in path.filter(metric__in=list(episodes)):
            stored[finding.metric].append(finding)
        for metric, found in episodes.items():
            opened += reconcile_findings(source, destination, metric, found, now, stored[metric], family)
    return opened
