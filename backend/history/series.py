"""One path's history over any range, at the resolution that keeps it under MAX_POINTS points
per series: stored rollups for settled buckets, the unsettled tail computed from raw data by
the same aggregate the refresh stores (aggregates.py). Both directions, in one query per table.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from history import aggregates
from history.buckets import Resolution, choose_resolution
from history.models import Kind
from history.tables import retention_days, table

# Times leave PostgreSQL as ISO 8601 text: a day at one minute is 2 x 1,440 rows, and making
# a datetime of each only to print it again is most of what the request would cost.
ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
STORED_SQL = """
SELECT source_id = %(a)s, to_char(bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), {columns}
FROM {table}
WHERE ((source_id = %(a)s AND destination_id = %(b)s) OR (source_id = %(b)s AND destination_id = %(a)s))
  AND family = %(family)s AND bucket >= %(first)s AND bucket < %(stop)s
ORDER BY bucket
"""


@dataclass
class Direction:
    """Rows of one direction: (bucket start as ISO 8601 text, *columns of aggregates.SELECTS),
    oldest first."""

    rtt: list[tuple[Any, ...]] = field(default_factory=list)
    throughput: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass(frozen=True)
class PathHistory:
    resolution: Resolution
    start: datetime
    end: datetime
    forward: Direction
    reverse: Direction


def path_history(
    source: uuid.UUID, destination: uuid.UUID, start: datetime, end: datetime, now: datetime, family: int = 4
) -> PathHistory:
    """Both directions of the path in one family. Raises buckets.RangeRefused for a range no
    resolution serves within the bounds."""
    resolution = choose_resolution(start, end, now, retention_days())
    first = resolution.floor(start)
    live_from = max(first, resolution.served_live_from(now))
    history = PathHistory(resolution, start, end, Direction(), Direction())
    for kind in Kind.values:
        rows = _stored(kind, resolution, (source, destination, family), first, min(end, live_from))
        if min(end, now) > live_from:
            rows += _live(kind, resolution, (source, destination, family), live_from, min(end, now))
        for row in rows:
            getattr(history.forward if row[0] else history.reverse, kind).append(row[1:])
    return history


# Two agents and a family: the path both ways.
PathEnds = tuple[uuid.UUID, uuid.UUID, int]


def _stored(
    kind: str, resolution: Resolution, ends: PathEnds, first: datetime, stop: datetime
) -> list[tuple[Any, ...]]:
    if stop <= first:
        return []
    a, b, family = ends
    _select, columns = aggregates.SELECTS[kind]
    sql = STORED_SQL.format(columns=", ".join(columns), table=table(kind, resolution))
    with connection.cursor() as cursor:
        cursor.execute(sql, {"a": a, "b": b, "family": family, "first": first, "stop": stop})
        return list(cursor.fetchall())


def _live(
    kind: str, resolution: Resolution, ends: PathEnds, live_from: datetime, end: datetime
) -> list[tuple[Any, ...]]:
    a, b, family = ends
    buckets = []
    bucket = live_from
    while bucket < end:
        buckets.append(bucket)
        bucket += resolution.width
    hi = buckets[-1] + resolution.width
    n = len(buckets)
    keys = aggregates.BucketKeys([a] * n + [b] * n, [b] * n + [a] * n, [family] * 2 * n, buckets * 2, live_from, hi)
    # (source, destination, family, bucket, *columns)
    rows = sorted(aggregates.compute(kind, resolution, keys), key=lambda row: row[3])
    return [(row[0] == a, row[3].strftime(ISO_FORMAT), *row[4:]) for row in rows]
