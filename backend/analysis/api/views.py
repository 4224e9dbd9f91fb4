"""Read-only analysis API for logged-in users: one path in depth, a mesh as a grid, every path's
current state and a page of sparklines, findings."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from analysis.api.serializers import (
    FindingChangesSerializer,
    FindingQuerySerializer,
    FindingSerializer,
    MeshGridSerializer,
    PathAnalysisSerializer,
    PathListQuerySerializer,
    PathListSerializer,
    PathQuerySerializer,
    PathSparkQuerySerializer,
    PathSparksSerializer,
    PathTimelineSerializer,
)
from analysis.services import shaping
from analysis.services.coinciding import finding_changes
from analysis.services.finding_list import FindingFilter, list_findings
from analysis.services.path_list import path_list
from analysis.services.path_spark import path_sparks
from analysis.services.paths import path_report
from analysis.services.snapshots import grid_body
from analysis.services.timeline import path_timeline
from core.api.history_view import HistoryReadView
from history.api.ranges import path_range
from history.api.serializers import HistoryQuerySerializer
from history.buckets import RangeRefused, choose_resolution
from history.tables import retention_days
from inventory.api.lookups import path_agents
from meshes.models import Mesh


class PathAnalysisView(HistoryReadView):
    """Ceilings now, per-run diagnoses, RTT modes, findings, advice and a capacity plan."""

    @extend_schema(parameters=[PathQuerySerializer], responses={200: PathAnalysisSerializer})
    def get(self, request: Request) -> Response:
        query = PathQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        source, destination = path_agents(params)
        if source.pk == destination.pk:
            raise ValidationError({"destination": ["a path needs two different agents"]})
        report = path_report(
            source,
            destination,
            goal_bps=params.get("goal_bps"),
            daily_volume_bytes=params.get("daily_volume_bytes", settings.ANALYSIS_DAILY_VOLUME_BYTES),
            runs_limit=params["runs"],
            family=params["family"],
        )
        body = shaping.path_analysis(source, destination, report, params["family"])
        return Response(PathAnalysisSerializer(body).data)


class MeshGridView(HistoryReadView):
    """Every src -> dst of a mesh: throughput against its ceiling, loss and RTT median, RTT
    modes, the newest run and its age (stale or not), open findings; and the mesh's
    thresholds, as they apply."""

    @extend_schema(responses={200: MeshGridSerializer})
    def get(self, request: Request, name: str) -> HttpResponse:
        mesh = get_object_or_404(Mesh.objects.prefetch_related("members", "tests"), name=name)
        # The body is the serializer's output shape (tests/test_grid.py holds them equal), from
        # the mesh's snapshot of the last minute (snapshots.py says why).
        return HttpResponse(grid_body(mesh), content_type="application/json")


class FindingListView(HistoryReadView):
    """Findings, newest first, filtered by path, mesh, metric, state, kind or a time window."""

    @extend_schema(parameters=[FindingQuerySerializer], responses={200: FindingSerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = FindingQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        mesh = None
        if "mesh" in params:
            mesh = Mesh.objects.filter(name=params["mesh"]).first()
            if mesh is None:
                raise ValidationError({"mesh": [f"there is no mesh named {params['mesh']!r}"]})
        chosen = FindingFilter(
            source=params.get("source"),
            destination=params.get("destination"),
            family=params.get("family"),
            metric=params.get("metric"),
            state=params.get("state"),
            kind=params.get("kind"),
            mesh=mesh,
            since=params.get("since"),
            until=params.get("until"),
        )
        rows = [shaping.finding(finding) for finding in list_findings(chosen, params["limit"])]
        return Response(FindingSerializer(rows, many=True).data)


class FindingChangesView(HistoryReadView):
    """What else changed when a finding's change began: the path's other findings, the
    reverse direction's, either host's facts, and paths sharing an agent or a traced router."""

    @extend_schema(responses={200: FindingChangesSerializer})
    def get(self, request: Request, pk: int) -> Response:
        found = finding_changes(pk)
        if found is None:
            raise NotFound(f"there is no finding {pk}")
        return Response(FindingChangesSerializer(found).data)


class PathListView(HistoryReadView):
    """Every path with any run and its current state: RTT and loss of the last hour, the newest
    throughput run against its ceiling, the newest run's age, open alarms (the Paths list)."""

    @extend_schema(parameters=[PathListQuerySerializer], responses={200: PathListSerializer})
    def get(self, request: Request) -> Response:
        query = PathListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        mesh = None
        if "mesh" in query.validated_data:
            name = query.validated_data["mesh"]
            mesh = Mesh.objects.prefetch_related("members").filter(name=name).first()
            if mesh is None:
                raise NotFound(f"there is no mesh named {name!r}")
        # As the grid: the shaped body is the serializer's output (tests/api/test_path_list.py
        # holds them equal), without the serializer's cost at 9,900 rows.
        return Response(shaping.path_list(path_list(mesh, query.validated_data.get("family"))))


class PathSparkView(HistoryReadView):
    """Sparkline series of up to 100 paths: 24 hourly RTT medians and the newest throughput runs."""

    @extend_schema(parameters=[PathSparkQuerySerializer], responses={200: PathSparksSerializer})
    def get(self, request: Request) -> Response:
        query = PathSparkQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        sparks = path_sparks(query.validated_data["pair"])
        return Response(PathSparksSerializer(shaping.path_sparks(sparks)).data)


class PathTimelineView(HistoryReadView):
    """What the path page draws over its history: each throughput run with its ceilings, tuning
    and iperf3 changes, ECMP modes and findings, both directions. The range is checked as the
    history's is (the same query parameters), so the two always answer for the same range."""

    @extend_schema(parameters=[HistoryQuerySerializer], responses={200: PathTimelineSerializer})
    def get(self, request: Request) -> Response:
        now = timezone.now()
        source, destination, start, end, family = path_range(request.query_params.dict(), now)
        try:
            # Refuses what the history refuses: longer than its daily points, older than kept.
            choose_resolution(start, end, now, retention_days())
        except RangeRefused as exc:
            raise ValidationError({"from": [str(exc)]}) from exc
        # Plain dicts, like the history: PathTimelineSerializer is the schema.
        return Response(path_timeline(source, destination, start, end, family))
