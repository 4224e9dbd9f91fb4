"""Fathom's own counters, histograms and gauges, kept in one Redis hash so that every process
(web, workers, beat) adds to the same figure and /metrics (the metrics app) reads them all in
one round trip. Prometheus handles a counter that starts again from zero (a Redis restart)
as it handles a process restart.

Every family is declared here with its labels; callers pass label values from bounded sets
(test types, choices, fixed reasons), so the series count stays what docs/metrics.md says.
Measuring Fathom must never fail what it measures: a write Redis refuses is dropped with a
warning.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.core.cache import cache as django_cache
from redis.exceptions import RedisError

from core.shared_redis import shared_redis

log = logging.getLogger(__name__)


class FamilyKind(StrEnum):
    COUNTER = "counter"
    HISTOGRAM = "histogram"
    GAUGE = "gauge"


@dataclass(frozen=True)
class Family:
    name: str  # without the fathom_ prefix; counters without _total
    kind: FamilyKind
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()  # a histogram's upper bounds, +Inf implied
    # Label values known here; the exposition adds those other apps own (test types, channel
    # kinds) and shows every combination from zero, so rate() has a series before the first event.
    values: tuple[tuple[str, tuple[str, ...]], ...] = ()


RESULTS_INGESTED = Family("results_ingested", FamilyKind.COUNTER, "Results stored, by test type.", ("kind",))
BATCHES_REFUSED = Family(
    "batches_refused",
    FamilyKind.COUNTER,
    "Result batches refused whole (nothing stored), by reason: schema, content (times, peers) or plan.",
    ("reason",),
    values=(("reason", ("schema", "content", "plan")),),
)
INGEST_DELAY = Family(
    "ingest_delay_seconds",
    FamilyKind.HISTOGRAM,
    "From a result's end to its storing: the agent's spool and upload.",
    buckets=(1, 5, 15, 60, 300, 900, 3600, 21600, 86400),
)
ALERT_DELIVERIES = Family(
    "alert_deliveries",
    FamilyKind.COUNTER,
    "Alert delivery attempts, by channel kind and outcome (sent, retrying, failed).",
    ("channel_kind", "outcome"),
    values=(("outcome", ("sent", "retrying", "failed")),),
)
PERFSONAR_SYNCS = Family(
    "perfsonar_syncs",
    FamilyKind.COUNTER,
    "Syncs of Fathom's tasks with the perfSONAR nodes, by outcome (ok, errors: some call failed, cut_short:"
    " the deadline left work for the next sync, skipped: another sync held the lock).",
    ("outcome",),
    values=(("outcome", ("ok", "errors", "cut_short", "skipped")),),
)
ANALYSIS_PASS_SECONDS = Family("analysis_pass_seconds", FamilyKind.GAUGE, "Duration of the newest analysis pass.")
ANALYSIS_PASS_END = Family(
    "analysis_pass_end_timestamp_seconds", FamilyKind.GAUGE, "When the newest analysis pass ended (Unix time)."
)
SLOT_PLANNING_SECONDS = Family(
    "slot_planning_seconds", FamilyKind.GAUGE, "Duration of the newest planning of exclusive test slots."
)

FAMILIES = (
    RESULTS_INGESTED,
    BATCHES_REFUSED,
    INGEST_DELAY,
    ALERT_DELIVERIES,
    PERFSONAR_SYNCS,
    ANALYSIS_PASS_SECONDS,
    ANALYSIS_PASS_END,
    SLOT_PLANNING_SECONDS,
)

# A field of the hash is "name|label=value,label=value"; a histogram's "name|le=5|..." and
# "name|sum|...". Label values never hold "|", "," or "=" (they come from bounded sets).
SEPARATOR = "|"


def key() -> str:
    return django_cache.make_key("metrics")


def field(family: Family, labels: dict[str, str], part: str = "") -> str:
    if set(labels) != set(family.labels):
        raise ValueError(f"{family.name} takes labels {family.labels}, not {tuple(labels)}")
    pairs = ",".join(f"{name}={labels[name]}" for name in family.labels)
    return SEPARATOR.join(piece for piece in (family.name, part, pairs) if piece)


def count(family: Family, amount: int = 1, **labels: str) -> None:
    """Adds to a counter."""
    _write(family, FamilyKind.COUNTER, lambda pipe: pipe.hincrby(key(), field(family, labels), amount))


def observe(family: Family, values: Iterable[float], **labels: str) -> None:
    """Puts values in a histogram (a batch's in one round trip)."""
    values = list(values)
    if not values:
        return
    in_bucket = Counter(next((bound for bound in family.buckets if value <= bound), math.inf) for value in values)

    def write(pipe: Any) -> None:
        for bound, number in in_bucket.items():
            pipe.hincrby(key(), field(family, labels, f"le={bound:g}"), number)
        pipe.hincrbyfloat(key(), field(family, labels, "sum"), sum(values))

    _write(family, FamilyKind.HISTOGRAM, write)


def set_gauge(family: Family, value: float, **labels: str) -> None:
    _write(family, FamilyKind.GAUGE, lambda pipe: pipe.hset(key(), field(family, labels), repr(float(value))))


@contextmanager
def timed(duration: Family, ended: Family | None = None) -> Iterator[None]:
    """Sets `duration` to the block's wall time, and `ended` to the time it ended if it raised
    nothing (a pass that keeps failing shows as a growing lag, not as a fresh end)."""
    started = time.monotonic()
    try:
        yield
    finally:
        set_gauge(duration, time.monotonic() - started)
    if ended is not None:
        set_gauge(ended, time.time())


def _write(family: Family, kind: FamilyKind, write: Callable[[Any], object]) -> None:
    if family.kind != kind:
        raise ValueError(f"{family.name} is a {family.kind}, not a {kind}")
    try:
        pipe = shared_redis().pipeline(transaction=False)
        write(pipe)
        pipe.execute()
    except RedisError as exc:
        log.warning("metric %s not recorded: %s", family.name, exc)


def read() -> dict[str, float]:
    """Every field of the hash (raises RedisError when Redis does not answer)."""
    raw: dict[bytes, bytes] = shared_redis().hgetall(key())  # type: ignore[assignment]
    return {name.decode(): float(value) for name, value in raw.items()}


def clear() -> None:
    """Forgets every figure (tests)."""
    shared_redis().delete(key())
