"""External targets: the far ends of list meshes, a host name or an address with no agent.

Their runs are stored like any other (destination_id NULL, the host in `target`) and their
samples carry no target at all, so every query here starts from the target's runs and
reaches the samples through run_id. TargetLatestRun (kept by ingest) lists the target paths
without scanning the Run hypertable. The history rollups cover agent paths only: a target's
RTT is read from raw samples, within raw retention. A latency test towards a target measures
the device's own TWAMP-light reflector; its intervals are bucketed as an agent path's are.
"""

from __future__ import annotations

import ipaddress
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from core.units import loss_fraction
from inventory.models import Agent
from measurements.choices import TestType
from measurements.models import TargetLatestRun
from measurements.paths import LatencyPoint, bucket_width_s, latency_buckets

# The longest a ping run can last (10,000 packets at 60 s): a run that started this long
# before a range can still have samples in it.
MAX_PING_RUN = timedelta(days=7)


def normalize_target(value: str) -> str:
    """One spelling per host: an address in its canonical form ("2001:DB8:0::1" ->
    "2001:db8::1"), a host name in lower case without its root dot (DNS ignores case)."""
    text = value.strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if text.endswith(".") and len(text) > 1:
        text = text[:-1]
    return text.lower() or value


@dataclass(frozen=True)
class TargetEntry:
    source: Agent
    target: str
    test_types: list[str]
    last_run_at: datetime
    last_status: str
    last_run_test_type: str
    rtt_median_ms: float | None  # pings of the last hour
    loss_fraction: float | None
    sent: int


LAST_HOUR_SQL = """
WITH recent AS (
    SELECT run_id, rtt_ms FROM measurements_pingsample
    WHERE destination_id IS NULL AND time >= %(since)s AND NOT duplicate
), runs AS (
    SELECT id, source_id, target FROM measurements_run
    WHERE destination_id IS NULL AND test_type = 'ping' AND started_at >= %(runs_from)s
      AND id IN (SELECT DISTINCT run_id FROM recent)
)
SELECT runs.source_id, runs.target,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY recent.rtt_ms),
       count(*),
       count(*) FILTER (WHERE recent.rtt_ms IS NULL)
FROM recent JOIN runs ON runs.id = recent.run_id
GROUP BY runs.source_id, runs.target
"""


def _last_hour(now: datetime) -> dict[tuple[uuid.UUID, str], tuple[float | None, int, int]]:
    since = now - timedelta(hours=1)
    with connection.cursor() as cursor:
        cursor.execute(LAST_HOUR_SQL, {"since": since, "runs_from": since - MAX_PING_RUN})
        return {(source, target): (median, sent, lost) for source, target, median, sent, lost in cursor.fetchall()}


def known_targets(now: datetime) -> list[TargetEntry]:
    """Every source -> external target pair with runs, by source name and target, with the
    RTT median and loss of its last hour of pings. Two queries whatever the count."""
    by_pair: dict[tuple[uuid.UUID, str], list[TargetLatestRun]] = {}
    for row in TargetLatestRun.objects.select_related("source").order_by("source__name", "target", "test_type"):
        by_pair.setdefault((row.source_id, row.target), []).append(row)
    if not by_pair:
        return []
    pings = _last_hour(now)
    entries = []
    for key, rows in by_pair.items():
        newest = max(rows, key=lambda row: row.started_at)
        median, sent, lost = pings.get(key, (None, 0, 0))
        entries.append(
            TargetEntry(
                source=newest.source,
                target=newest.target,
                test_types=sorted({row.test_type for row in rows}),
                last_run_at=newest.started_at,
                last_status=newest.status,
                last_run_test_type=newest.test_type,
                rtt_median_ms=median,
                loss_fraction=lost / sent if sent else None,
                sent=sent,
            )
        )
    return entries


def target_latest(source: uuid.UUID, target: str) -> list[TargetLatestRun]:
    """The newest run per test type of one target path; empty: no run was ever stored."""
    return list(TargetLatestRun.objects.filter(source_id=source, target=target).order_by("test_type"))


@dataclass(frozen=True)
class TargetRttPoint:
    time: datetime
    rtt_min_ms: float | None
    rtt_p10_ms: float | None
    rtt_median_ms: float | None
    rtt_p90_ms: float | None
    rtt_max_ms: float | None
    sent: int
    lost: int

    @property
    def loss_fraction(self) -> float | None:
        return loss_fraction(self.lost, self.sent)


# The history rollups' aggregate (history/aggregates.py), over one target's runs.
RTT_SQL = """
WITH runs AS (
    SELECT id FROM measurements_run
    WHERE source_id = %(source)s AND destination_id IS NULL AND target = %(target)s AND test_type = %(ping)s
      AND started_at >= %(runs_from)s AND started_at < %(end)s AND ended_at >= %(start)s
)
SELECT time_bucket(make_interval(secs => %(width)s), time) AS bucket,
       min(rtt_ms),
       percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY rtt_ms),
       max(rtt_ms),
       count(*),
       count(*) FILTER (WHERE rtt_ms IS NULL)
FROM measurements_pingsample
WHERE source_id = %(source)s AND destination_id IS NULL AND time >= %(start)s AND time < %(end)s
  AND NOT duplicate AND run_id IN (SELECT id FROM runs)
GROUP BY bucket
ORDER BY bucket
"""


def target_rtt_series(
    source: uuid.UUID, target: str, start: datetime, end: datetime, max_points: int
) -> tuple[int, list[TargetRttPoint]]:
    """RTT percentiles and loss of one target path in at most max_points time buckets."""
    width = bucket_width_s(start, end, max_points)
    params: dict[str, Any] = {
        "width": width,
        "source": source,
        "target": target,
        "ping": TestType.PING.value,
        "start": start,
        "end": end,
        "runs_from": start - MAX_PING_RUN,
    }
    with connection.cursor() as cursor:
        cursor.execute(RTT_SQL, params)
        rows = cursor.fetchall()
    points = []
    for bucket, min_ms, percentiles, max_ms, sent, lost in rows:
        p10, p50, p90 = percentiles if percentiles is not None else (None, None, None)
        points.append(TargetRttPoint(bucket, min_ms, p10, p50, p90, max_ms, sent, lost))
    return width, points


# A latency interval's time is its run's start, so the runs of the range are those of its intervals.
TARGET_LATENCY_PATH = """source_id = %(source)s AND destination_id IS NULL AND run_id IN (
    SELECT id FROM measurements_run
    WHERE source_id = %(source)s AND destination_id IS NULL AND target = %(target)s AND test_type = 'latency'
      AND started_at >= %(start)s AND started_at < %(end)s
)"""


def target_latency_series(
    source: uuid.UUID, target: str, start: datetime, end: datetime, max_points: int, clock_limit_ms: float
) -> tuple[int, list[LatencyPoint]]:
    """One target path's latency intervals (forward: the agent to the device's reflector), as an
    agent path's are bucketed. A device that declares its clock unsynchronized leaves one_way_trusted
    false: its round trip and loss each way stand."""
    keys = {"source": source, "target": target}
    return latency_buckets(TARGET_LATENCY_PATH, keys, start, end, max_points, clock_limit_ms)
