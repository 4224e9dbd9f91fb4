"""Read-only analysis API for logged-in users: one path in depth, a mesh as a grid, findings."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.api import shaping
from analysis.api.serializers import (
    FindingQuerySerializer,
    FindingSerializer,
    MeshGridSerializer,
    PathAnalysisSerializer,
    PathQuerySerializer,
)
from analysis.services.finding_list import FindingFilter, list_findings
from analysis.services.grid import mesh_grid
from analysis.services.paths import path_report
from inventory.api.lookups import path_agents
from meshes.models import Mesh


class PathAnalysisView(APIView):
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
        )
        return Response(PathAnalysisSerializer(shaping.path_analysis(source, destination, report)).data)


class MeshGridView(APIView):
    """Every src -> dst of a mesh: throughput against its ceiling, loss and RTT median, RTT
    modes, the newest run and its age (stale or not), open findings; and the mesh's
    thresholds, as they apply."""

    @extend_schema(responses={200: MeshGridSerializer})
    def get(self, request: Request, name: str) -> Response:
        mesh = get_object_or_404(Mesh.objects.prefetch_related("members", "tests"), name=name)
        # The shaped body is already the serializer's output (tests/test_grid.py holds them
        # equal); at 100 agents the serializer would add 0.8 s to 9,900 cells.
        return Response(shaping.mesh_grid(mesh_grid(mesh)))


class FindingListView(APIView):
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
            metric=params.get("metric"),
            state=params.get("state"),
            kind=params.get("kind"),
            mesh=mesh,
            since=params.get("since"),
            until=params.get("until"),
        )
        rows = [shaping.finding(finding) for finding in list_findings(chosen, params["limit"])]
        return Response(FindingSerializer(rows, many=True).data)
