from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.history_view import HistoryReadView
from inventory.api.lookups import path_agents
from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from inventory.models import Agent
from measurements import ingest, paths, routes
from measurements.api.serializers import (
    IngestResponseSerializer,
    InvalidBatchSerializer,
    PathLatencySeriesSerializer,
    PathRoutesSerializer,
    PathSerializer,
    RouteQuerySerializer,
    RttQuerySerializer,
    RttSeriesSerializer,
    RunQuerySerializer,
    RunRowSerializer,
)
from measurements.models import Run
from measurements.run_filters import runs_matching


class ResultsView(APIView):
    """An agent submits a batch of results (contract v1); all or nothing, idempotent on ids."""

    authentication_classes = [AgentAuthentication]
    permission_classes = [IsAgent]

    @extend_schema(
        request={"application/json": {"type": "object", "description": "result-batch.v1.schema.json"}},
        responses={
            200: IngestResponseSerializer,
            400: InvalidBatchSerializer,
            413: OpenApiResponse(description="body larger than 32 MiB (any single valid result fits)"),
        },
    )
    def post(self, request: Request) -> Response:
        try:
            body = request.data
        except ParseError as exc:
            # Not JSON at all: the same shape as any refused batch, so the agent reads one kind of 400.
            return Response(
                {"detail": "invalid result batch", "errors": [{"path": "", "message": str(exc.detail)}]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            statuses = ingest.ingest_batch(request_agent(request), body)
        except ingest.InvalidBatch as exc:
            return Response(
                {"detail": "invalid result batch", "errors": [error.as_json() for error in exc.errors]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response({"results": [{"id": item.id, "status": item.status} for item in statuses]})


def agent_ref(agent: Agent) -> dict[str, object]:
    return {"id": agent.pk, "name": agent.name}


class PathListView(HistoryReadView):
    """Every source -> destination pair that has results."""

    @extend_schema(responses={200: PathSerializer(many=True)})
    def get(self, request: Request) -> Response:
        body = [
            {
                "source": agent_ref(entry.source),
                "destination": agent_ref(entry.destination),
                "family": entry.family,
                "test_types": entry.test_types,
                "last_run_at": entry.last_run_at,
                "last_status": entry.last_status,
            }
            for entry in paths.known_paths()
        ]
        return Response(PathSerializer(body, many=True).data)


class PathRttView(HistoryReadView):
    """RTT min/median and loss of one path, in time buckets (at most max_points)."""

    @extend_schema(parameters=[RttQuerySerializer], responses={200: RttSeriesSerializer})
    def get(self, request: Request) -> Response:
        query = RttQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        source, destination = path_agents(params)
        start, end = paths.default_range(params.get("end"), params.get("start"), timezone.now())
        if start >= end:
            raise ValidationError({"start": ["start must be before end"]})
        width, points = paths.rtt_series(
            params["source"], params["destination"], start, end, params["max_points"], params["family"]
        )
        body = {
            "source": agent_ref(source),
            "destination": agent_ref(destination),
            "family": params["family"],
            "start": start,
            "end": end,
            "bucket_s": width,
            "points": [
                {
                    "time": point.time,
                    "rtt_min_ms": point.rtt_min_ms,
                    "rtt_median_ms": point.rtt_median_ms,
                    "sent": point.sent,
                    "lost": point.lost,
                    "loss_fraction": point.loss_fraction,
                }
                for point in points
            ],
        }
        return Response(RttSeriesSerializer(body).data)


def latency_point(point: paths.LatencyPoint) -> dict[str, Any]:
    """One bucket of latency intervals as PathLatencyPointSerializer has it (agent and target paths)."""
    return {
        "time": point.time,
        "sent": point.sent,
        "answered": point.answered,
        "forward_lost": point.forward_lost,
        "backward_lost": point.backward_lost,
        "forward_loss_fraction": point.forward_loss_fraction,
        "backward_loss_fraction": point.backward_loss_fraction,
        "forward_min_ms": point.forward_min_ms,
        "forward_p50_ms": point.forward_p50_ms,
        "forward_p90_ms": point.forward_p90_ms,
        "forward_p99_ms": point.forward_p99_ms,
        "forward_max_ms": point.forward_max_ms,
        "backward_min_ms": point.backward_min_ms,
        "backward_p50_ms": point.backward_p50_ms,
        "backward_p90_ms": point.backward_p90_ms,
        "backward_p99_ms": point.backward_p99_ms,
        "backward_max_ms": point.backward_max_ms,
        "round_trip_min_ms": point.round_trip_min_ms,
        "round_trip_p50_ms": point.round_trip_p50_ms,
        "round_trip_p99_ms": point.round_trip_p99_ms,
        "clock_error_ms": point.clock_error_ms,
        "one_way_trusted": point.one_way_trusted,
        "loaded": point.loaded,
    }


class PathLatencyView(HistoryReadView):
    """One-way delay and loss each way of one path (its source's latency sessions towards its
    destination), in time buckets (at most max_points), with whether the clocks allow trusting
    the one-way delays and whether Fathom's own throughput tests loaded either host."""

    @extend_schema(parameters=[RttQuerySerializer], responses={200: PathLatencySeriesSerializer})
    def get(self, request: Request) -> Response:
        query = RttQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        source, destination = path_agents(params)
        start, end = paths.default_range(params.get("end"), params.get("start"), timezone.now())
        if start >= end:
            raise ValidationError({"start": ["start must be before end"]})
        limit_ms = settings.LATENCY_CLOCK_ERROR_LIMIT_MS
        width, points = paths.latency_series(
            params["source"], params["destination"], start, end, params["max_points"], limit_ms, params["family"]
        )
        body = {
            "source": agent_ref(source),
            "destination": agent_ref(destination),
            "family": params["family"],
            "start": start,
            "end": end,
            "bucket_s": width,
            "clock_error_limit_ms": limit_ms,
            "points": [latency_point(point) for point in points],
        }
        return Response(PathLatencySeriesSerializer(body).data)


class PathRunsView(HistoryReadView):
    """One path's runs, newest first, with why a run did not measure: failed and missed runs
    (an agent's probe that could not run, a perfSONAR node's non-starter) and their reason."""

    @extend_schema(parameters=[RunQuerySerializer], responses={200: RunRowSerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = RunQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        runs = runs_matching(
            Run.objects.filter(
                source_id=params["source"], destination_id=params["destination"], family=params["family"]
            ),
            params["status"],
            params.get("test_type"),
        )
        if params.get("since"):
            runs = runs.filter(started_at__gte=params["since"])
        if params.get("until"):
            runs = runs.filter(started_at__lt=params["until"])
        rows = runs.order_by("-started_at").values(
            "id", "test_type", "test_id", "started_at", "ended_at", "status", "error"
        )[: params["limit"]]
        return Response(RunRowSerializer(list(rows), many=True).data)


class PathRoutesView(HistoryReadView):
    """One path's routes: each ECMP member's hops, the routes each trace run saw, and when
    that set changed (newest 500 runs of the range)."""

    @extend_schema(parameters=[RouteQuerySerializer], responses={200: PathRoutesSerializer})
    def get(self, request: Request) -> Response:
        query = RouteQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        source, destination = path_agents(params)
        end = params.get("end") or timezone.now()
        start = params.get("start") or end - timedelta(days=7)
        if start >= end:
            raise ValidationError({"start": ["start must be before end"]})
        if source.pk == destination.pk:
            raise ValidationError({"destination": ["a path needs two different agents"]})
        found = routes.path_routes(source.pk, destination.pk, start, end, params["family"])
        body = {
            "source": agent_ref(source),
            "destination": agent_ref(destination),
            "family": params["family"],
            "start": start,
            "end": end,
            "routes": [asdict(route) for route in found.routes],
            "runs": [asdict(run) for run in found.runs],
            "changes": [asdict(change) for change in found.changes],
            "truncated": found.truncated,
        }
        return Response(PathRoutesSerializer(body).data)
