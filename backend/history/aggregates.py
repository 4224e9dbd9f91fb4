"""The one computation of a rollup bucket from raw data, shared by the refresh (which stores
it) and by path queries (which compute the unsettled tail of a range with it).

Each statement takes a list of (source, destination, family, bucket) and a constant [lo, hi) that
holds every bucket: the constant range lets TimescaleDB exclude other chunks when it plans.
A few buckets (late data, a query's tail) are each read through the raw table's path-and-time
index; many buckets (a minute of the whole mesh, an hour or a day closing) in one pass over
the range, grouped: seven times cheaper per bucket at 9,900 paths.

Percentiles: every bucket at every resolution is computed from the raw samples, never from
finer rollups (a median of medians is not the median). Raw data is kept
FATHOM_RAW_RETENTION_DAYS; once it is gone a bucket's row is final: exact as of the last time
it was computed, never recomputed (ingest refuses results older than raw retention, and the
refresh skips buckets that begin before it, whose raw data may be partly dropped).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from history.buckets import Resolution
from history.models import Kind

RTT_COLUMNS = ("count", "sent", "lost", "min_ms", "p10_ms", "p50_ms", "p90_ms", "max_ms", "own_load")
RTT_SELECT = """
SELECT c.source_id, c.destination_id, c.family, c.bucket,
       a.sent - a.lost, a.sent, a.lost, a.min_ms, a.p[1], a.p[2], a.p[3], a.max_ms, a.own_load
FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[], %(buckets)s::timestamptz[])
     AS c(source_id, destination_id, family, bucket)
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS sent,
           count(*) FILTER (WHERE NOT s.duplicate AND NOT s.own_load AND s.rtt_ms IS NULL) AS lost,
           min(s.rtt_ms) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS min_ms,
           max(s.rtt_ms) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS max_ms,
           percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY s.rtt_ms)
               FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS p,
           count(*) FILTER (WHERE NOT s.duplicate AND s.own_load) AS own_load
    FROM measurements_pingsample s
    WHERE s.source_id = c.source_id AND s.destination_id = c.destination_id AND s.family = c.family
      AND s.time >= c.bucket AND s.time < c.bucket + %(width)s
      AND s.time >= %(lo)s AND s.time < %(hi)s
) a
WHERE a.sent + a.own_load > 0
"""

# Many buckets of pings: one pass over the range's samples.
RTT_DENSE_SELECT = """
SELECT s.source_id, s.destination_id, s.family, c.bucket,
       a_sent - a_lost, a_sent, a_lost, a_min_ms, a_p[1], a_p[2], a_p[3], a_max_ms, a_own_load
FROM (
    SELECT s.source_id, s.destination_id, s.family, time_bucket(%(width)s, s.time) AS bucket,
           count(*) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS a_sent,
           count(*) FILTER (WHERE NOT s.duplicate AND NOT s.own_load AND s.rtt_ms IS NULL) AS a_lost,
           min(s.rtt_ms) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS a_min_ms,
           max(s.rtt_ms) FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS a_max_ms,
           percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY s.rtt_ms)
               FILTER (WHERE NOT s.duplicate AND NOT s.own_load) AS a_p,
           count(*) FILTER (WHERE NOT s.duplicate AND s.own_load) AS a_own_load
    FROM measurements_pingsample s
    WHERE s.time >= %(lo)s AND s.time < %(hi)s AND s.destination_id IS NOT NULL
    GROUP BY 1, 2, 3, 4
) s
JOIN unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[], %(buckets)s::timestamptz[])
     AS c(source_id, destination_id, family, bucket)
  ON c.source_id = s.source_id AND c.destination_id = s.destination_id AND c.family = s.family
     AND c.bucket = s.bucket
WHERE a_sent + a_own_load > 0
"""
# More buckets than this in one range are read in one pass (RTT_DENSE_SELECT).
DENSE_BUCKETS = 500

# A throughput run belongs to the path its data flowed on: a reverse (-R) run that agent B
# ran towards A carried data from A to B. The rate is the received rate of iperf3's end
# summary; failed and missed runs count as failed. A policer's UDP ramp and a streams probe
# (several streams beside the path's single-stream runs) are not the path's throughput (the
# analysis reads them): they are left out.
THROUGHPUT_COLUMNS = ("runs_ok", "runs_failed", "min_bps", "median_bps", "max_bps", "retransmits")
THROUGHPUT_SELECT = """
SELECT c.source_id, c.destination_id, c.family, c.bucket,
       a.runs_ok, a.runs_failed, a.min_bps, a.median_bps, a.max_bps, a.retransmits
FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[], %(buckets)s::timestamptz[])
     AS c(source_id, destination_id, family, bucket)
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE r.ok) AS runs_ok,
           count(*) FILTER (WHERE NOT r.ok) AS runs_failed,
           min(r.rate_bps) FILTER (WHERE r.ok) AS min_bps,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY r.rate_bps) FILTER (WHERE r.ok) AS median_bps,
           max(r.rate_bps) FILTER (WHERE r.ok) AS max_bps,
           sum(r.retransmits) FILTER (WHERE r.ok) AS retransmits
    FROM (
        SELECT run.status = 'ok' AS ok,
               run.source_id,
               (run.summary ->> 'receiver_bits_per_s')::float8 AS rate_bps,
               (run.summary ->> 'retransmits')::bigint AS retransmits,
               coalesce(run.summary ->> 'reverse' = 'true' OR run.params ->> 'reverse' = 'true', false) AS reverse
        FROM measurements_run run
        WHERE run.test_type = 'throughput'
          AND NOT run.params ? 'ramp_bps'
          AND NOT coalesce((run.params ->> 'streams_probe')::boolean, false)
          AND ((run.source_id = c.source_id AND run.destination_id = c.destination_id)
               OR (run.source_id = c.destination_id AND run.destination_id = c.source_id))
          AND run.family = c.family
          AND run.started_at >= c.bucket AND run.started_at < c.bucket + %(width)s
          AND run.started_at >= %(lo)s AND run.started_at < %(hi)s
    ) r
    WHERE (r.source_id = c.source_id) <> r.reverse
) a
WHERE a.runs_ok + a.runs_failed > 0
"""

SELECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    Kind.RTT: (RTT_SELECT, RTT_COLUMNS),
    Kind.THROUGHPUT: (THROUGHPUT_SELECT, THROUGHPUT_COLUMNS),
}


def select_sql(kind: str, buckets: int) -> str:
    # Throughput runs are a few per path and day: looking each bucket up is cheap at any count.
    return RTT_DENSE_SELECT if kind == Kind.RTT and buckets > DENSE_BUCKETS else SELECTS[kind][0]


@dataclass(frozen=True)
class BucketKeys:
    """Buckets of one resolution, as parallel lists, and the [lo, hi) that holds them all."""

    sources: Sequence[uuid.UUID]
    destinations: Sequence[uuid.UUID]
    families: Sequence[int]
    buckets: Sequence[datetime]
    lo: datetime
    hi: datetime

    def params(self, resolution: Resolution) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "destinations": list(self.destinations),
            "families": list(self.families),
            "buckets": list(self.buckets),
            "width": resolution.width,
            "lo": self.lo,
            "hi": self.hi,
        }


def upsert_sql(kind: str, table: str, buckets: int) -> str:
    select, columns = select_sql(kind, buckets), SELECTS[kind][1]
    updates = ", ".join(f"{column} = EXCLUDED.{column}" for column in columns)
    return (
        f"INSERT INTO {table} (source_id, destination_id, family, bucket, {', '.join(columns)})\n{select}\n"
        f"ON CONFLICT (source_id, destination_id, family, bucket) DO UPDATE SET {updates}"
    )


def store(kind: str, table: str, resolution: Resolution, keys: BucketKeys) -> int:
    """Recomputes the buckets from raw data and stores them; returns the rows written."""
    with connection.cursor() as cursor:
        cursor.execute(upsert_sql(kind, table, len(keys.buckets)), keys.params(resolution))
        return int(cursor.rowcount)


def compute(kind: str, resolution: Resolution, keys: BucketKeys) -> list[tuple[Any, ...]]:
    """The buckets' rows as the refresh would store them: (source, destination, family, bucket, ...)."""
    with connection.cursor() as cursor:
        cursor.execute(select_sql(kind, len(keys.buckets)), keys.params(resolution))
        return list(cursor.fetchall())
