"""Sparkline series for a page of the Paths list (at most SPARK_PAIRS paths): each path's last
24 hours of hourly RTT medians from the history rollups, and its newest analysed throughput
runs against their ceilings. Three queries whatever the number of pairs.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from analysis.services.path_state import RUNS_LOOKBACK
from history.buckets import HOUR

# 40 pairs make a request line of about 3.3 KB: under the 4,094 bytes gunicorn takes by default.
SPARK_PAIRS = 40
SPARK_HOURS = 24
SPARK_RUNS = 12

# The paths asked for, as rows: (source, destination, family).
PATHS = "SELECT * FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[])"
HOURS_SQL = """
SELECT source_id, destination_id, family, bucket, p50_ms FROM history_rtthour
WHERE (source_id, destination_id, family) IN ({PATHS})
  AND bucket >= %(start)s AND bucket < %(live_from)s
"""
# Hours the refresh has not closed yet (the current one, and the one before for a few minutes
# after it ends): the median of their stored 1-minute medians, as path_state's last hour.
LIVE_HOURS_SQL = """
SELECT source_id, destination_id, family, date_bin('1 hour', bucket, 'epoch'::timestamptz),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p50_ms)
FROM history_rttminute
WHERE (source_id, destination_id, family) IN ({PATHS})
  AND bucket >= %(live_from)s
GROUP BY 1, 2, 3, 4
"""
RUNS_SQL = """
SELECT source_id, destination_id, family, started_at_text, rate_bps, ceiling_bps FROM (
  SELECT source_id, destination_id, family, started_at,
         to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS started_at_text,
         rate_bps, ceiling_bps,
         row_number() OVER (PARTITION BY source_id, destination_id, family ORDER BY started_at DESC) AS newest
  FROM analysis_runanalysis
  WHERE (source_id, destination_id, family) IN ({PATHS})
  AND started_at >= %(runs_since)s
) recent
WHERE newest <= %(runs)s
ORDER BY started_at
"""

Path = tuple[uuid.UUID, uuid.UUID, int]  # source, destination, family


@dataclass(frozen=True)
class Spark:
    source: uuid.UUID
    destination: uuid.UUID
    family: int
    rtt_p50_ms: list[float | None]  # SPARK_HOURS hourly buckets from PathSparks.start
    runs: list[tuple[str, float | None, float | None]]  # (started_at ISO 8601, rate, ceiling), oldest first


@dataclass(frozen=True)
class PathSparks:
    generated_at: datetime
    start: datetime  # the first hourly bucket
    step_s: int
    sparks: list[Spark]  # in the order the pairs were asked for


def path_sparks(pairs: Sequence[Path]) -> PathSparks:
    """Series of each path (source id, destination id, family); one without data gets empty series."""
    now = timezone.now()
    start = HOUR.floor(now) - (SPARK_HOURS - 1) * HOUR.width
    # A closed hour is stored from raw data; until the refresh closes it, its minutes stand in.
    live_from = max(start, HOUR.served_live_from(now))
    params: dict[str, Any] = {
        "sources": [src for src, _, _ in pairs],
        "destinations": [dst for _, dst, _ in pairs],
        "families": [family for _, _, family in pairs],
        "start": start,
        "live_from": live_from,
        "runs_since": now - RUNS_LOOKBACK,
        "runs": SPARK_RUNS,
    }
    rtt: dict[Path, list[float | None]] = defaultdict(lambda: [None] * SPARK_HOURS)
    runs: dict[Path, list[tuple[str, float | None, float | None]]] = defaultdict(list)
    with connection.cursor() as cursor:
        for sql in (HOURS_SQL, LIVE_HOURS_SQL):
            cursor.execute(sql.format(PATHS=PATHS), params)
            for source_id, destination_id, family, bucket, p50_ms in cursor.fetchall():
                index = (bucket - start) // HOUR.width
                if 0 <= index < SPARK_HOURS:
                    rtt[(source_id, destination_id, family)][index] = p50_ms
        cursor.execute(RUNS_SQL.format(PATHS=PATHS), params)
        for source_id, destination_id, family, started_at, rate_bps, ceiling_bps in cursor.fetchall():
            runs[(source_id, destination_id, family)].append((started_at, rate_bps, ceiling_bps))
    sparks = [Spark(*path, rtt.get(path, [None] * SPARK_HOURS), runs.get(path, [])) for path in pairs]
    return PathSparks(now, start, HOUR.width_s, sparks)


def parse_pair(text: str) -> Path:
    """ "<source uuid>:<destination uuid>", IPv4, or with ":6" after it, the IPv6 path;
    raises ValueError naming what is wrong."""
    parts = text.split(":")
    wrong = f"{text!r} is not <source uuid>:<destination uuid>[:6]"
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("4", "6")):
        raise ValueError(wrong)
    try:
        return uuid.UUID(parts[0]), uuid.UUID(parts[1]), int(parts[2]) if len(parts) == 3 else 4
    except ValueError:
        raise ValueError(wrong) from None
