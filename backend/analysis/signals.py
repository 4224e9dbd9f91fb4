"""Listens to measurements' results_stored: the pings Fathom's own throughput tests overlapped
are flagged in the batch's own transaction (services/own_load.py), before any rollup reads them."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from analysis.services.own_load import mark_own_load
from measurements.signals import results_stored


@receiver(results_stored, dispatch_uid="analysis.mark_own_load")
def flag_own_load_pings(sender: Any, agent: Any, results: list[dict[str, Any]], **kwargs: Any) -> None:
    mark_own_load(agent.pk, results)
