"""Which runs a runs list asks for, the same for an agent path's and an external target's:
by outcome (`failed` is every run that did not measure: failed or missed) and test type."""

from __future__ import annotations

from django.db.models import QuerySet

from measurements.choices import RunStatus
from measurements.models import Run


def runs_matching(runs: QuerySet[Run], outcome: str, test_type: str | None) -> QuerySet[Run]:
    """`runs` narrowed to `outcome` ("failed", "ok" or "all") and, when given, one test type."""
    if outcome == "failed":
        runs = runs.exclude(status=RunStatus.OK)
    elif outcome == "ok":
        runs = runs.filter(status=RunStatus.OK)
    if test_type:
        runs = runs.filter(test_type=test_type)
    return runs
