"""The current state of a set of paths, as the mesh grid and the Paths list show it: the newest
analysed throughput run against its ceiling, loss and RTT median of the last hour, one-way loss
of the last hour each way (latency tests), the newest run of any kind and its age, and open
alarms. Five queries whatever the number of paths.

Both callers serve up to 9,900 paths in a few hundred milliseconds, so ids and times leave
PostgreSQL as text (times to the second, ages to 0.1 s, to keep the body small) and ages are
computed there: psycopg makes a UUID in 4 us and a datetime in 13 us, which at 9,900 paths
costs more than the queries. Paths are keyed by the agents' ids as text and the family (a
dual-stack pair is two paths).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import connection

from analysis.choices import FindingKind, FindingState
from history.last_hour import LAST_HOUR

PINGS_WINDOW = LAST_HOUR
LATENCY_WINDOW = LAST_HOUR
# The longest latency interval (report_interval_s, contract/test-options/latency.v1): an interval
# that ended in the window started at most this long before it.
LATENCY_INTERVAL_MAX = timedelta(hours=1)
# A run older than a month is no longer what the path does.
RUNS_LOOKBACK = timedelta(days=31)

# Restricts a query to paths between the given agents (the grid's mesh); absent, every path.
AMONG_SQL = " AND source_id = ANY(%(ids)s) AND destination_id = ANY(%(ids)s)"

RUNS_SQL = """
SELECT DISTINCT ON (source_id, destination_id, family) source_id::text, destination_id::text, family,
       rate_bps, COALESCE(NULLIF((evidence->>'binding_bps')::float8, 0), ceiling_bps), diagnosis, "limit",
       to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM analysis_runanalysis
WHERE started_at >= %(runs_since)s{among}
ORDER BY source_id, destination_id, family, started_at DESC
"""

# Loss and RTT median of the last hour, one row a path, kept by the history refresh (see
# history/last_hour.py for the window and why it is the median of the minutes' medians).
RTT_SQL = """
SELECT source_id::text, destination_id::text, family, sent, lost, p50_ms
FROM history_rttlasthour
WHERE through > %(pings_since)s{among}
"""

# Per latency session direction (a source's sessions towards a destination), the intervals that
# ended in the last hour, less those Fathom's own throughput tests loaded (own_load.py): packets
# sent and lost forward; whether the sessions have a way back (OWAMP has none), and what reached
# the far end and was lost on the way back. The bound on `time` lets the scan use its index.
LATENCY_SQL = """
SELECT source_id::text, destination_id::text, family,
       coalesce(sum(sent) FILTER (WHERE NOT own_load), 0),
       coalesce(sum(forward_lost) FILTER (WHERE NOT own_load), 0),
       bool_or(backward_lost IS NOT NULL),
       coalesce(sum(sent - forward_lost) FILTER (WHERE NOT own_load AND backward_lost IS NOT NULL), 0),
       coalesce(sum(backward_lost) FILTER (WHERE NOT own_load), 0)
FROM measurements_latencyinterval
WHERE time >= %(latency_from)s AND ended_at > %(latency_since)s AND destination_id IS NOT NULL{among}
GROUP BY source_id, destination_id, family
"""

LATEST_SQL = """
SELECT source_id::text, destination_id::text, family, string_agg(DISTINCT test_type, ',' ORDER BY test_type),
       (array_agg(status ORDER BY started_at DESC))[1], (array_agg(test_type ORDER BY started_at DESC))[1],
       to_char(max(started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       round(extract(epoch FROM %(now)s - max(started_at)), 1)::float8
FROM measurements_pathlatestrun
WHERE true{among}
GROUP BY source_id, destination_id, family
"""

FINDINGS_SQL = """
SELECT source_id::text, destination_id::text, family, count(*)
FROM analysis_finding
WHERE state = %(open)s AND kind = %(alarm)s{among}
GROUP BY source_id, destination_id, family
"""

Path = tuple[str, str, int]  # (source id, destination id) as text, family


class PathState(NamedTuple):
    """A tuple: 9,900 of them are made per request, and a tuple is made several times faster
    than a frozen dataclass."""

    rate_bps: float | None  # of the newest analysed throughput run of the last month
    ceiling_bps: float | None  # what binds it (RunAnalysis.binding_ceiling_bps)
    diagnosis: str | None
    limit: str | None
    measured_at: str | None  # ISO 8601
    loss_fraction: float | None  # pings of the last hour
    # Latency tests' loss of the last hour source -> destination, and destination -> source.
    forward_loss_fraction: float | None
    backward_loss_fraction: float | None
    rtt_median_ms: float | None  # median of the last hour's 1-minute RTT medians (history.last_hour)
    open_findings: int  # open alarms
    # The newest run of any kind: the path's newest data, whatever its age.
    last_run_status: str | None
    last_run_test_type: str | None
    last_run_at: str | None  # ISO 8601
    data_age_s: float | None
    test_types: str  # test types with runs, comma-separated (text is read faster than an array)

    @property
    def fraction_of_ceiling(self) -> float | None:
        return self.rate_bps / self.ceiling_bps if self.rate_bps is not None and self.ceiling_bps else None


NO_RUN = (None, None, None, None, None)
NO_PINGS = (0, 0, None)
NO_LATEST: tuple[Any, ...] = ("", None, None, None, None)


@dataclass(frozen=True)
class PathStates:
    """What the five queries found, by (source id, destination id, family)."""

    runs: dict[Path, tuple[Any, ...]]
    pings: dict[Path, tuple[Any, ...]]
    latency: dict[Path, tuple[Any, ...]]  # by the sessions' source and destination
    latest: dict[Path, tuple[Any, ...]]
    open_findings: dict[Path, int]

    def with_runs(self) -> list[Path]:
        """Every path with a run of any kind (PathLatestRun)."""
        return list(self.latest)

    def one_way_loss(self, source: str, destination: str, family: int) -> float | None:
        """Loss source -> destination as the one-way findings read it (findings.one_way_windows):
        the forward loss of source's sessions towards destination, or where it ran none, the
        backward loss of destination's sessions towards source."""
        sessions = self.latency.get((source, destination, family))
        if sessions is not None:
            sent, lost = sessions[0], sessions[1]
            return lost / sent if sent else None
        sessions = self.latency.get((destination, source, family))
        if sessions is not None and sessions[2]:
            reached, lost = sessions[3], sessions[4]
            return lost / reached if reached else None
        return None

    def get(self, path: Path) -> PathState:
        rate, ceiling, diagnosis, limit, measured_at = self.runs.get(path, NO_RUN)
        sent, lost, rtt_median_ms = self.pings.get(path, NO_PINGS)
        test_types, status, test_type, last_run_at, age_s = self.latest.get(path, NO_LATEST)
        return PathState(
            rate_bps=rate,
            ceiling_bps=ceiling,
            diagnosis=diagnosis,
            limit=limit,
            measured_at=measured_at,
            loss_fraction=lost / sent if sent else None,
            forward_loss_fraction=self.one_way_loss(*path) if self.latency else None,
            backward_loss_fraction=self.one_way_loss(path[1], path[0], path[2]) if self.latency else None,
            rtt_median_ms=rtt_median_ms,
            open_findings=self.open_findings.get(path, 0),
            last_run_status=status,
            last_run_test_type=test_type,
            last_run_at=last_run_at,
            data_age_s=age_s,
            test_types=test_types,
        )


def path_states(now: datetime, among: Sequence[uuid.UUID] | None = None) -> PathStates:
    """The state of every path between the `among` agents (every path if None) at `now`."""
    params: dict[str, Any] = {
        "ids": list(among) if among is not None else [],
        "now": now,
        "runs_since": now - RUNS_LOOKBACK,
        "pings_since": now - PINGS_WINDOW,
        "latency_since": now - LATENCY_WINDOW,
        "latency_from": now - LATENCY_WINDOW - LATENCY_INTERVAL_MAX,
        "open": FindingState.OPEN.value,
        "alarm": FindingKind.ALARM.value,
    }
    where = AMONG_SQL if among is not None else ""

    def by_path(sql: str) -> dict[Path, tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(sql.format(among=where), params)
            return {(row[0], row[1], row[2]): row[3:] for row in cursor.fetchall()}

    return PathStates(
        runs=by_path(RUNS_SQL),
        pings=by_path(RTT_SQL),
        latency=by_path(LATENCY_SQL),
        latest=by_path(LATEST_SQL),
        open_findings={path: row[0] for path, row in by_path(FINDINGS_SQL).items()},
    )
