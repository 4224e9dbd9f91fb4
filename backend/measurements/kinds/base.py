"""What every test kind's ingest provides, so ingest itself never names a kind."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import models
from django.utils.dateparse import parse_datetime


@dataclass(frozen=True)
class BatchError:
    path: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True)
class RunKeys:
    """The columns every sample row of a run repeats."""

    run_id: uuid.UUID
    source_id: uuid.UUID
    destination_id: uuid.UUID | None
    family: int  # of the address probed (inventory.choices.AddressFamily)
    started_at: datetime
    ended_at: datetime


@dataclass(frozen=True)
class KindIngest:
    """One test kind's part of ingest: checks a schema cannot express, the run's params and
    summary (what path queries and the analysis read), and its sample rows.

    `section` is the result's key holding the kind's data ("ping", "throughput", ...); a
    failed run has no section and stores only its Run row. `times` yields the time of each
    sample row with where it comes from, so ingest can bound them before anything is stored
    (a kind whose rows carry the run's start has none).
    """

    section: str
    errors: Callable[[str, dict[str, Any]], list[BatchError]]
    params_and_summary: Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]
    model: type[models.Model]
    # Sample rows as {attname: value}, as COPY writes them; a field left out takes its default.
    rows: Callable[[RunKeys, dict[str, Any]], Iterable[dict[str, Any]]]
    times: Callable[[str, datetime, dict[str, Any]], Iterable[tuple[str, datetime]]] = lambda *_: ()


def timestamp(value: str) -> datetime:
    parsed = parse_datetime(value)
    if parsed is None:  # the schema's pattern already guarantees a parseable value
        raise ValueError(value)
    return parsed
