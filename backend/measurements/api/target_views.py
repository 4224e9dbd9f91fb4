"""The external-target API: every agent -> target path of the list meshes, and one path's RTT
percentiles, latency (TWAMP-light to the device's own reflector), runs and routes. A target
path is named by its source agent and the target string, normalised as ingest stores it (so
"Example.ORG" finds "example.org")."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.history_view import HistoryReadView
from inventory.models import Agent
from measurements import routes, targets
from measurements.api.target_serializers import (
    TargetLatencySeriesSerializer,
    TargetListSerializer,
    TargetRangeQuerySerializer,
    TargetRoutesSerializer,
    TargetRttQuerySerializer,
    TargetRttSeriesSerializer,
    TargetRunsQuerySerializer,
    TargetRunsSerializer,
)
from measurements.api.views import latency_point
from measurements.models import Run, TargetLatestRun
from measurements.run_filters import runs_matching

DEFAULT_RTT_SPAN = timedelta(hours=24)
DEFAULT_ROUTES_SPAN = timedelta(days=7)
NOT_FOUND = OpenApiResponse(description="the source agent has no runs to this target")


def _agent_ref(agent: Agent) -> dict[str, Any]:
    return {"id": agent.pk, "name": agent.name}


def _target_path(params: dict[str, Any]) -> tuple[Agent, str, list[TargetLatestRun]]:
    """The source agent (400 when unknown), the normalised target and its newest runs (404
    when the agent never measured it)."""
    source = Agent.objects.filter(pk=params["source"]).first()
    if source is None:
        raise ValidationError({"source": [f"unknown agent {params['source']}"]})
    latest = targets.target_latest(source.pk, params["target"])
    if not latest:
        raise NotFound(f"{source.name} has no runs to the target {params['target']!r}")
    return source, params["target"], latest


def _range(params: dict[str, Any], now: datetime, default_span: timedelta) -> tuple[datetime, datetime, datetime]:
    """The range asked for, checked, its end clipped to now and its start to raw retention
    (targets have no rollups); with the retention's start."""
    end = params.get("to") or now
    start = params.get("from") or end - default_span
    if start >= now:
        raise ValidationError({"from": ["the range lies in the future: there is no data yet"]})
    if start > end:
        raise ValidationError({"from": ["from is after to: the range is reversed"]})
    if start == end:
        raise ValidationError({"from": ["the range is empty: from equals to"]})
    retained_from = now - timedelta(days=settings.RAW_RETENTION_DAYS)
    if end <= retained_from:
        raise ValidationError(
            {"to": [f"the range ends before raw retention ({settings.RAW_RETENTION_DAYS} days): nothing is kept"]}
        )
    return max(start, retained_from), min(end, now), retained_from


def _rtt_point(point: targets.TargetRttPoint) -> dict[str, Any]:
    return {
        "t": point.time,
        "min": point.rtt_min_ms,
        "p10": point.rtt_p10_ms,
        "p50": point.rtt_median_ms,
        "p90": point.rtt_p90_ms,
        "max": point.rtt_max_ms,
        "count": point.sent - point.lost,
        "sent": point.sent,
        "lost": point.lost,
        "loss": point.loss_fraction,
    }


class TargetListView(HistoryReadView):
    """Every source agent -> external target pair with runs: test types, the newest run and its
    status, and the RTT median and loss of the last hour of pings."""

    @extend_schema(responses={200: TargetListSerializer})
    def get(self, request: Request) -> Response:
        now = timezone.now()
        body = {
            "generated_at": now,
            "targets": [
                {
                    "source": _agent_ref(entry.source),
                    "target": entry.target,
                    "test_types": entry.test_types,
                    "last_run_at": entry.last_run_at,
                    "last_status": entry.last_status,
                    "last_run_test_type": entry.last_run_test_type,
                    "data_age_s": max(0.0, (now - entry.last_run_at).total_seconds()),
                    "rtt_median_ms": entry.rtt_median_ms,
                    "loss_fraction": entry.loss_fraction,
                    "sent_last_hour": entry.sent,
                }
                for entry in targets.known_targets(now)
            ],
        }
        return Response(TargetListSerializer(body).data)


class TargetRttView(HistoryReadView):
    """One target path's RTT (min, p10, median, p90, max) and loss in time buckets, at most
    max_points of them, from raw pings (raw retention is the longest range)."""

    @extend_schema(parameters=[TargetRttQuerySerializer], responses={200: TargetRttSeriesSerializer, 404: NOT_FOUND})
    def get(self, request: Request) -> Response:
        query = TargetRttQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        now = timezone.now()
        start, end, retained_from = _range(params, now, DEFAULT_RTT_SPAN)
        source, target, latest = _target_path(params)
        width, points = targets.target_rtt_series(source.pk, target, start, end, params["max_points"])
        # Plain dicts: TargetRttSeriesSerializer is the schema, a serializer per point the cost.
        body = {
            "source": _agent_ref(source),
            "target": target,
            "from": start,
            "to": end,
            "retained_from": retained_from,
            "bucket_s": width,
            "latest": [
                {"test_type": row.test_type, "run_id": row.run_id, "started_at": row.started_at, "status": row.status}
                for row in latest
            ],
            "points": [_rtt_point(point) for point in points],
        }
        return Response(body)


class TargetLatencyView(HistoryReadView):
    """One target path's latency test: delay and loss each way to the device's TWAMP-light
    reflector in time buckets (at most max_points), from raw intervals, as paths/latency/ has
    them. Round trip and loss always; one-way delays only where the device declared its clock
    synchronized and both clocks' error is within the limit (one_way_trusted)."""

    @extend_schema(
        parameters=[TargetRttQuerySerializer], responses={200: TargetLatencySeriesSerializer, 404: NOT_FOUND}
    )
    def get(self, request: Request) -> Response:
        query = TargetRttQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        now = timezone.now()
        start, end, retained_from = _range(params, now, DEFAULT_RTT_SPAN)
        source, target, _latest = _target_path(params)
        limit_ms = settings.LATENCY_CLOCK_ERROR_LIMIT_MS
        width, points = targets.target_latency_series(source.pk, target, start, end, params["max_points"], limit_ms)
        # Plain dicts, as targets/rtt/: TargetLatencySeriesSerializer is the schema.
        body = {
            "source": _agent_ref(source),
            "target": target,
            "from": start,
            "to": end,
            "retained_from": retained_from,
            "bucket_s": width,
            "clock_error_limit_ms": limit_ms,
            "points": [latency_point(point) for point in points],
        }
        return Response(body)


class TargetRunsView(HistoryReadView):
    """One target path's runs of every kind, newest first, with why a run did not measure;
    a page at a time (`before` = the previous page's `next_before`)."""

    @extend_schema(parameters=[TargetRunsQuerySerializer], responses={200: TargetRunsSerializer, 404: NOT_FOUND})
    def get(self, request: Request) -> Response:
        query = TargetRunsQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        source, target, _latest = _target_path(params)
        runs = runs_matching(
            Run.objects.filter(source_id=source.pk, destination_id__isnull=True, target=target),
            params["status"],
            params.get("test_type"),
        )
        if params.get("before"):
            runs = runs.filter(started_at__lt=params["before"])
        limit = params["limit"]
        rows = list(
            runs.order_by("-started_at").values(
                "id", "test_type", "test_id", "started_at", "ended_at", "status", "error", "summary"
            )[: limit + 1]
        )
        # Runs that started in the same microsecond as the page's last would straddle pages;
        # a probe's runs start at distinct times, so `started_at` is cursor enough.
        more = len(rows) > limit
        rows = rows[:limit]
        body = {
            "source": _agent_ref(source),
            "target": target,
            "runs": rows,
            "next_before": rows[-1]["started_at"] if more else None,
        }
        return Response(TargetRunsSerializer(body).data)


class TargetRoutesView(HistoryReadView):
    """One target path's routes: each ECMP member's hops, the routes each trace run saw and
    when that set changed (the newest 500 trace runs of the range; default the last 7 days)."""

    @extend_schema(parameters=[TargetRangeQuerySerializer], responses={200: TargetRoutesSerializer, 404: NOT_FOUND})
    def get(self, request: Request) -> Response:
        query = TargetRangeQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        now = timezone.now()
        start, end, retained_from = _range(params, now, DEFAULT_ROUTES_SPAN)
        source, target, _latest = _target_path(params)
        found = routes.target_routes(source.pk, target, start, end)
        body = {
            "source": _agent_ref(source),
            "target": target,
            "from": start,
            "to": end,
            "retained_from": retained_from,
            "routes": [asdict(route) for route in found.routes],
            "runs": [asdict(run) for run in found.runs],
            "changes": [asdict(change) for change in found.changes],
            "truncated": found.truncated,
        }
        return Response(TargetRoutesSerializer(body).data)
