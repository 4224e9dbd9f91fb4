"""What one throughput run's ceilings rest on, read from the database as of a moment.

Both hosts' tuning from the host-facts history (never facts reported after the run), loss and
the minimum RTT from the pings before it, the RTT modes that stood on the path, iperf3's
options and summary, and the per-interval TCP_INFO. Stored JSON of any shape is read
defensively: a missing or mistyped value becomes None, so its ceiling term says "unknown".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from analysis.choices import RttModeVerdict
from analysis.intervals import IntervalRow, IntervalStats
from analysis.models import SweepModes
from analysis.run_judgement import PathContext, reverse_run, run_facts, udp_run
from analysis.runs import MIN_LOSS_SAMPLES, RunInputs, wilson_lower_bound
from analysis.services.own_load import BUSY_CTE, NOT_BUSY
from analysis.services.sweep_modes import sweep_modes_near
from analysis.tuning import HostTuning
from inventory.models import Agent, HostFactsSnapshot
from measurements.choices import RunStatus, TestType
from measurements.models import Run, ThroughputInterval

# Loss and RTT around a run come from the pings of this period before it.
LOSS_LOOKBACK = timedelta(hours=6)
# How long an ECMP sweep makes a flow far above the path's RTT a possible unseen member.
ECMP_SEEN_LOOKBACK = timedelta(days=7)
# Host facts reported within this long after a run still describe it (an agent reports
# its facts right after start, before its first results upload).
FACTS_GRACE = timedelta(hours=1)


def as_dict(value: object) -> dict[str, Any]:
    """A stored JSON object, or an empty one when the value is anything else."""
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class FactsAt:
    facts: dict[str, Any] | None
    source: str


def host_facts_at(agent: Agent, when: datetime) -> FactsAt:
    """The facts the agent reported last before `when` (its tuning at that moment); failing
    that, the first ones it reported within FACTS_GRACE after (an agent that has just
    started). Never later ones: a retune after the run must not rewrite its ceilings."""
    before = HostFactsSnapshot.objects.filter(agent=agent, collected_at__lte=when).order_by("-collected_at").first()
    if before is not None:
        return FactsAt(as_dict(before.facts), f"host facts of {before.collected_at:%Y-%m-%d %H:%M:%S}")
    after = (
        HostFactsSnapshot.objects.filter(agent=agent, collected_at__gt=when, collected_at__lte=when + FACTS_GRACE)
        .order_by("collected_at")
        .first()
    )
    if after is not None:
        return FactsAt(as_dict(after.facts), f"first host facts, of {after.collected_at:%Y-%m-%d %H:%M:%S}")
    return FactsAt(None, "no host facts reported before the run")


@dataclass(frozen=True)
class PathLoss:
    fraction: float | None
    sent: int
    lost: int
    min_rtt_ms: float | None
    source: str

    @property
    def floor(self) -> float | None:
        """The least loss the pings support, at 95% (None without a loss rate)."""
        return wilson_lower_bound(self.lost, self.sent) if self.fraction is not None else None


# Per ping run: packets that could have been answered (no ICMP error, no duplicate) and lost,
# leaving out those sent while a throughput test loaded either agent (own_load.py).
PING_LOSS_SQL = f"""
WITH {BUSY_CTE}
SELECT sum(sent) FILTER (WHERE lost < sent), sum(lost) FILTER (WHERE lost < sent),
       count(*) FILTER (WHERE lost = sent AND sent > 0), min(min_rtt)
FROM (
    SELECT run_id,
           count(*) FILTER (WHERE NOT duplicate AND error = '') AS sent,
           count(*) FILTER (WHERE NOT duplicate AND error = '' AND rtt_ms IS NULL) AS lost,
           min(rtt_ms) AS min_rtt
    FROM measurements_pingsample
    WHERE ((source_id = %(a)s AND destination_id = %(b)s) OR (source_id = %(b)s AND destination_id = %(a)s))
      AND family = %(family)s AND time >= %(start)s AND time < %(end)s AND {NOT_BUSY}
    GROUP BY run_id
) AS runs
"""  # noqa: S608 (own_load.py's constants, no input)


def path_loss(a: uuid.UUID, b: uuid.UUID, start: datetime, end: datetime, family: int = 4) -> PathLoss:
    """Random loss and minimum RTT between two agents in one family from pings (either
    direction: both are round trips). A ping run that lost every packet is an outage, not
    random loss, and ICMP errors are not losses; both are left out."""
    with connection.cursor() as cursor:
        cursor.execute(PING_LOSS_SQL, {"a": a, "b": b, "family": family, "start": start, "end": end})
        sent, lost, outages, min_rtt = cursor.fetchone() or (None, None, 0, None)
    sent, lost = int(sent or 0), int(lost or 0)
    outage_note = f"; {outages} ping runs lost entirely (outages) left out" if outages else ""
    if sent < MIN_LOSS_SAMPLES:
        return PathLoss(None, sent, lost, min_rtt, f"only {sent} pings in the 6 h before: too few for a loss rate")
    return PathLoss(lost / sent, sent, lost, min_rtt, f"ping: {lost} of {sent} lost in the 6 h before{outage_note}")


def is_reverse(run: Run) -> bool:
    return reverse_run(as_dict(run.summary), as_dict(run.params))


def is_udp(run: Run) -> bool:
    return udp_run(as_dict(run.summary), as_dict(run.params))


def ok_throughput_runs(a: Agent, b: Agent, since: datetime, until: datetime, family: int = 4) -> QuerySet[Run]:
    """The measured throughput runs between two agents in one family, either way, started in
    [since, until], newest first: which way the data flowed is the caller's (data_direction)."""
    return Run.objects.filter(
        Q(source_id=a.pk, destination_id=b.pk) | Q(source_id=b.pk, destination_id=a.pk),
        family=family,
        test_type=TestType.THROUGHPUT,
        status=RunStatus.OK,
        started_at__gte=since,
        started_at__lte=until,
    ).order_by("-started_at")


def is_streams_probe(run: Run) -> bool:
    """A run of several streams the server planned beside the path's single-stream runs
    (meshes/probes.py): compared with them, never one of them."""
    return as_dict(run.params).get("streams_probe") is True


def data_direction(run: Run, agents: dict[uuid.UUID, Agent]) -> tuple[Agent, Agent] | None:
    """(sender, receiver) of a throughput run: iperf3 -R makes the peer send."""
    if run.destination_id is None or run.source_id not in agents or run.destination_id not in agents:
        return None
    client, server = agents[run.source_id], agents[run.destination_id]
    return (server, client) if is_reverse(run) else (client, server)


def interval_rows(run: Run) -> list[IntervalRow]:
    rows = ThroughputInterval.objects.filter(
        run_id=run.id, time__gte=run.started_at, time__lte=run.ended_at + timedelta(minutes=10)
    ).order_by("interval_index")
    return [
        IntervalRow(
            stream=row.stream,
            start_s=row.start_s,
            end_s=row.end_s,
            omitted=row.omitted,
            sender=row.sender,
            bytes=row.bytes,
            bits_per_s=row.bits_per_s,
            retransmits=row.retransmits,
            snd_cwnd_bytes=row.snd_cwnd_bytes,
            snd_wnd_bytes=row.snd_wnd_bytes,
            rtt_us=row.rtt_us,
            pmtu=row.pmtu,
        )
        for row in rows
    ]


def ecmp_seen(source: Agent, destination: Agent, at: datetime, family: int = 4) -> bool:
    """Whether a flow sweep found ECMP members on the path, either way, in the week before `at`."""
    path = Q(source=source, destination=destination) | Q(source=destination, destination=source)
    recent = SweepModes.objects.filter(
        path, family=family, verdict=RttModeVerdict.ECMP, started_at__gte=at - ECMP_SEEN_LOOKBACK
    )
    return recent.filter(started_at__lte=at).exists()


@dataclass(frozen=True)
class Surroundings:
    """What stood around a run: both hosts' tuning, the path's context, and where each came from."""

    sender: HostTuning
    receiver: HostTuning
    context: PathContext
    sources: dict[str, str]  # sender_facts, receiver_facts, loss, modes: one sentence each


def surroundings(sender: Agent, receiver: Agent, at: datetime, family: int = 4) -> Surroundings:
    """The hosts' tuning and the path's loss, RTT and modes (in its family) as of `at` (a
    run's start, or now)."""
    sender_facts, receiver_facts = host_facts_at(sender, at), host_facts_at(receiver, at)
    loss = path_loss(sender.pk, receiver.pk, at - LOSS_LOOKBACK, at, family)
    modes = sweep_modes_near(sender, receiver, at, family)
    context = PathContext(
        loss_fraction=loss.fraction,
        loss_floor=loss.floor,
        loss_source=loss.source,
        ping_min_rtt_ms=loss.min_rtt_ms,
        sweep_base_rtt_ms=modes.base_rtt_ms if modes else None,
        mode_rtts_ms=(
            tuple(mode["rtt_ms"] for mode in (modes.analysis.get("modes") or []))
            if modes and modes.verdict == RttModeVerdict.ECMP
            else ()
        ),
        ecmp_seen=ecmp_seen(sender, receiver, at, family),
    )
    sources = {
        "sender_facts": sender_facts.source,
        "receiver_facts": receiver_facts.source,
        "loss": loss.source,
        "modes": f"flow sweep {modes.run_id} ({modes.verdict})" if modes else "no flow sweep in the 24 h before",
    }
    return Surroundings(
        HostTuning.from_facts(sender_facts.facts, sender.address_in(family)),
        HostTuning.from_facts(receiver_facts.facts, receiver.address_in(family)),
        context,
        sources,
    )


def run_inputs(run: Run, sender: Agent, receiver: Agent, at: datetime, stats: IntervalStats | None) -> RunInputs:
    """What one run's ceilings rest on, looked up as of `at` (the run's start, or now)."""
    around = surroundings(sender, receiver, at, run.family)
    facts = run_facts(as_dict(run.summary), as_dict(run.params), around.sender, around.receiver, around.context, stats)
    return RunInputs(facts, around.sources)
