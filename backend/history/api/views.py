"""The path history API: a path's RTT percentiles, loss and throughput runs over any range."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.history_view import HistoryReadView
from history.api.ranges import path_range
from history.api.serializers import HistoryQuerySerializer, PathHistorySerializer
from history.buckets import RangeRefused
from history.series import Direction, path_history


def _rtt(row: tuple[Any, ...]) -> dict[str, Any]:
    bucket, count, sent, lost, min_ms, p10, p50, p90, max_ms, own_load = row
    return {"t": bucket, "min": min_ms, "p10": p10, "p50": p50, "p90": p90, "max": max_ms, "count": count,
            "sent": sent, "lost": lost, "loss": lost / sent, "own_load": own_load}  # fmt: skip


def _throughput(row: tuple[Any, ...]) -> dict[str, Any]:
    bucket, runs_ok, runs_failed, min_bps, median_bps, max_bps, retransmits = row
    return {"t": bucket, "runs_ok": runs_ok, "runs_failed": runs_failed, "min_bps": min_bps,
            "median_bps": median_bps, "max_bps": max_bps,
            "retransmits": int(retransmits) if retransmits is not None else None}  # fmt: skip


def _direction(direction: Direction) -> dict[str, Any]:
    return {
        # A bucket whose every ping overlapped Fathom's own throughput test has no figure of
        # the path: a gap, under the chart's grey span of that test.
        "rtt": [_rtt(row) for row in direction.rtt if row[2] > 0],
        "throughput": [_throughput(row) for row in direction.throughput],
    }


class PathHistoryView(HistoryReadView):
    """One path's history, both directions, at the resolution (1 minute, 1 hour or 1 day) that
    keeps every series under 1,500 points. An empty series means no data in the range."""

    @extend_schema(parameters=[HistoryQuerySerializer], responses={200: PathHistorySerializer})
    def get(self, request: Request) -> Response:
        now = timezone.now()
        source, destination, start, end, family = path_range(request.query_params.dict(), now)
        try:
            history = path_history(source.pk, destination.pk, start, end, now, family)
        except RangeRefused as exc:
            raise ValidationError({"from": [str(exc)]}) from exc
        # Built as plain dicts: a day at one minute is 2 x 1,440 points, which a serializer
        # per point would spend most of the request on. PathHistorySerializer is its schema.
        return Response(
            {
                "source": {"id": source.pk, "name": source.name},
                "destination": {"id": destination.pk, "name": destination.name},
                "family": family,
                "resolution": history.resolution.name,
                "bucket_s": history.resolution.width_s,
                "from": start,
                "to": end,
                **_direction(history.forward),
                "reverse": _direction(history.reverse),
            }
        )
