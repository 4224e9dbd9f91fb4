"""What one throughput run's ceilings rest on, read from the database as of a moment.

Both hosts' tuning from the host-facts history (never facts reported after the run), loss and
the minimum RTT from the pings before it, the RTT modes that stood on the path, iperf3's
options and summary, and the per-interval TCP_INFO. Stored JSON of any shape is read
defensively: a missing or mistyped value becomes None, so its ceiling term says "unknown".
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q

from analysis.choices import RttModeVerdict
from analysis.intervals import IntervalRow, IntervalStats
from analysis.models import SweepModes
from analysis.runs import RunFacts, RunInputs, wilson_lower_bound
from analysis.services.modes import sweep_modes_near
from analysis.services.own_load import BUSY_CTE, NOT_BUSY
from analysis.tuning import HostTuning
from inventory.models import Agent, HostFactsSnapshot
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


def number(mapping: dict[str, Any], key: str) -> float | None:
    """A number of stored JSON (not a boolean), else None."""
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def positive_int(mapping: dict[str, Any], key: str) -> int | None:
    value = number(mapping, key)
    return int(value) if value is not None and value > 0 else None


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
# leaving out those sent while the pair's own throughput test ran (own_load.py).
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
      AND time >= %(start)s AND time < %(end)s AND {NOT_BUSY}
    GROUP BY run_id
) AS runs
"""  # noqa: S608 (own_load.py's constants, no input)
# Fewer pings than this give no loss rate worth a ceiling (1 lost of 10 is not p = 0.1).
MIN_LOSS_SAMPLES = 100


def path_loss(a: uuid.UUID, b: uuid.UUID, start: datetime, end: datetime) -> PathLoss:
    """Random loss and minimum RTT between two agents from pings (either direction: both are
    round trips). A ping run that lost every packet is an outage, not random loss, and ICMP
    errors are not losses; both are left out."""
    with connection.cursor() as cursor:
        cursor.execute(PING_LOSS_SQL, {"a": a, "b": b, "start": start, "end": end})
        sent, lost, outages, min_rtt = cursor.fetchone() or (None, None, 0, None)
    sent, lost = int(sent or 0), int(lost or 0)
    outage_note = f"; {outages} ping runs lost entirely (outages) left out" if outages else ""
    if sent < MIN_LOSS_SAMPLES:
        return PathLoss(None, sent, lost, min_rtt, f"only {sent} pings in the 6 h before: too few for a loss rate")
    return PathLoss(lost / sent, sent, lost, min_rtt, f"ping: {lost} of {sent} lost in the 6 h before{outage_note}")


def is_reverse(run: Run) -> bool:
    return as_dict(run.summary).get("reverse") is True or as_dict(run.params).get("reverse") is True


def is_udp(run: Run) -> bool:
    protocol = as_dict(run.summary).get("protocol")
    return as_dict(run.params).get("udp") is True or (isinstance(protocol, str) and protocol.upper() == "UDP")


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


def _inflight_bytes(stats: IntervalStats | None, rtt_us: float | None, streams: int) -> float | None:
    """Bytes in flight per stream (windows and buffers are per socket)."""
    if stats is None or not stats.steady_rate_bps or not rtt_us or rtt_us <= 0:
        return None
    return stats.steady_rate_bps * rtt_us / 1e6 / 8 / max(streams, 1)


def ecmp_seen(source: Agent, destination: Agent, at: datetime) -> bool:
    """Whether a flow sweep found ECMP members on the path, either way, in the week before `at`."""
    path = Q(source=source, destination=destination) | Q(source=destination, destination=source)
    recent = SweepModes.objects.filter(path, verdict=RttModeVerdict.ECMP, started_at__gte=at - ECMP_SEEN_LOOKBACK)
    return recent.filter(started_at__lte=at).exists()


def run_inputs(run: Run, sender: Agent, receiver: Agent, at: datetime, stats: IntervalStats | None) -> RunInputs:
    """What one run's ceilings rest on, looked up as of `at` (the run's start, or now)."""
    sender_facts, receiver_facts = host_facts_at(sender, at), host_facts_at(receiver, at)
    loss = path_loss(sender.pk, receiver.pk, at - LOSS_LOOKBACK, at)
    modes = sweep_modes_near(sender, receiver, at)
    mode_rtts = tuple(mode["rtt_ms"] for mode in (modes.analysis.get("modes") or [])) if modes else ()
    summary, params = as_dict(run.summary), as_dict(run.params)
    streams = positive_int(summary, "streams") or positive_int(params, "parallel") or 1
    sender_tuning = HostTuning.from_facts(sender_facts.facts, sender.address)
    congestion = next(
        (
            value
            for value in (summary.get("sender_congestion"), params.get("congestion"), sender_tuning.congestion_control)
            if isinstance(value, str) and value
        ),
        None,
    )
    client_sends = not is_reverse(run)
    min_rtt_us, mean_rtt_us = number(summary, "min_rtt_us"), number(summary, "mean_rtt_us")
    path_min = [value for value in (loss.min_rtt_ms, modes.base_rtt_ms if modes else None) if value]
    facts = RunFacts(
        streams=streams,
        sender=sender_tuning,
        receiver=HostTuning.from_facts(receiver_facts.facts, receiver.address),
        window_request_bytes=positive_int(params, "window_bytes"),
        congestion_control=congestion,
        mss_request_bytes=positive_int(params, "mss"),
        pmtu_bytes=stats.pmtu_bytes if stats else None,
        run_min_rtt_ms=min_rtt_us / 1000 if min_rtt_us and min_rtt_us > 0 else None,
        run_mean_rtt_ms=mean_rtt_us / 1000 if mean_rtt_us and mean_rtt_us > 0 else None,
        path_min_rtt_ms=min(path_min) if path_min else None,
        mode_rtts_ms=mode_rtts if modes and modes.verdict == RttModeVerdict.ECMP else (),
        ecmp_seen=ecmp_seen(sender, receiver, at),
        loss_fraction=loss.fraction,
        loss_source=loss.source,
        loss_floor=loss.floor,
        max_snd_wnd_bytes=positive_int(summary, "max_snd_wnd"),
        inflight_bytes=_inflight_bytes(stats, mean_rtt_us or min_rtt_us, streams),
        # iperf3 reports the client's socket buffers: the sender's with a forward run.
        sndbuf_actual_bytes=positive_int(summary, "sndbuf_actual") if client_sends else None,
        rcvbuf_actual_bytes=None if client_sends else positive_int(summary, "rcvbuf_actual"),
    )
    sources = {
        "sender_facts": sender_facts.source,
        "receiver_facts": receiver_facts.source,
        "loss": loss.source,
        "modes": f"flow sweep {modes.run_id} ({modes.verdict})" if modes else "no flow sweep in the 24 h before",
    }
    return RunInputs(facts, sources)


def with_summary_retransmits(stats: IntervalStats, summary: dict[str, Any], mss_bytes: int | None) -> IntervalStats:
    """Reverse runs have only the receiver's intervals (no TCP_INFO): take the retransmits
    from iperf3's end summary instead."""
    if stats.retransmits is not None:
        return stats
    retransmits = number(summary, "retransmits")
    sent_bytes = number(summary, "sender_bytes")
    if retransmits is None or retransmits < 0:
        return stats
    rate = retransmits / (sent_bytes / mss_bytes) if sent_bytes and mss_bytes else None
    return replace(stats, retransmits=int(retransmits), retransmit_rate=rate)
