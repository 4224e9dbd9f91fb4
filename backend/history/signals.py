"""Listens to measurements' results_stored: the minute buckets a batch touches become stale in
the batch's own transaction, so a stored result is never left out of the rollups."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from history.buckets import MINUTE
from history.marks import mark, result_marks
from measurements.signals import results_stored


@receiver(results_stored, dispatch_uid="history.mark_stale_buckets")
def mark_stale_buckets(sender: Any, agent: Any, results: list[dict[str, Any]], **kwargs: Any) -> None:
    mark(MINUTE, result_marks(agent.pk, results))
