"""Each path's last hour of pings in one row (RttLastHour), for the views that show every path
at once: the mesh grid and the Paths list. The minute refresh recomputes the row of every path
whose minutes it just stored, from those minute rollups.

The hour ends at the newest settled minute (history.buckets.SETTLE; the refresh runs every
minute), so it lags real time by two to three minutes: cheap to read for 9,900 paths, and the
newest run's age and the open alarms say what happens now. A path that stops pinging keeps
the hour up to its last ping (`through` says when that was). Its RTT is the median of the
minutes' medians: an hour's exact median would need every sample again, and with pings every
second that is 3,600 a path.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection

from history.buckets import MINUTE

LAST_HOUR = timedelta(hours=1)

STORE_SQL = """
INSERT INTO history_rttlasthour (source_id, destination_id, family, sent, lost, min_ms, p50_ms, p90_ms, through)
SELECT m.source_id, m.destination_id, m.family, sum(m.sent), sum(m.lost), min(m.min_ms),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY m.p50_ms),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY m.p90_ms), %(through)s
FROM history_rttminute m
WHERE (m.source_id, m.destination_id, m.family)
      IN (SELECT * FROM unnest(%(sources)s::uuid[], %(destinations)s::uuid[], %(families)s::smallint[]))
  AND m.bucket >= %(since)s AND m.bucket < %(through)s
GROUP BY m.source_id, m.destination_id, m.family
ON CONFLICT (source_id, destination_id, family) DO UPDATE
SET sent = excluded.sent, lost = excluded.lost, min_ms = excluded.min_ms, p50_ms = excluded.p50_ms,
    p90_ms = excluded.p90_ms, through = excluded.through
"""


def store_last_hour(paths: Iterable[tuple[uuid.UUID, uuid.UUID, int]], now: datetime) -> int:
    """Recomputes the last hour of these paths (source, destination, family), up to the newest
    settled minute at `now`; returns the rows written."""
    wanted = sorted(set(paths))
    if not wanted:
        return 0
    through = MINUTE.settled_before(now)
    with connection.cursor() as cursor:
        cursor.execute(
            STORE_SQL,
            {
                "sources": [src for src, _, _ in wanted],
                "destinations": [dst for _, dst, _ in wanted],
                "families": [family for _, _, family in wanted],
                "since": through - LAST_HOUR,
                "through": through,
            },
        )
        return int(cursor.rowcount)
