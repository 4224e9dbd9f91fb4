from __future__ import annotations

from dataclasses import asdict

from django.db.models import Q, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from audit.api.serializers import AuditEntrySerializer
from audit.services import Actor
from core.api.permissions import OperatorWrites
from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from meshes.api.serializers import (
    MeshDraftSerializer,
    MeshPreviewSerializer,
    MeshRevertSerializer,
    PlanSerializer,
    SlotQuerySerializer,
    SlotSerializer,
    UtilizationSerializer,
)
from meshes.documents import MeshSerializer
from meshes.models import Mesh, Slot
from meshes.preview import draft_mesh, preview_mesh
from meshes.services.issued_plans import record_issued_plan
from meshes.services.plans import build_plan
from meshes.services.utilization import exclusive_utilization
from meshes.services.writes import delete_mesh, mesh_history, revert_mesh, save_mesh


class PlanView(APIView):
    """The calling agent's plan; If-None-Match with the current ETag gives 304."""

    authentication_classes = [AgentAuthentication]
    permission_classes = [IsAgent]

    @extend_schema(
        parameters=[OpenApiParameter("If-None-Match", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False)],
        responses={200: PlanSerializer, 304: OpenApiResponse(description="plan unchanged")},
    )
    def get(self, request: Request) -> Response:
        agent = request_agent(request)
        plan = build_plan(agent)
        record_issued_plan(agent, plan)
        etag = f'"{plan.version}"'
        if etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response(plan.as_json())
        response["ETag"] = etag
        response["Cache-Control"] = "no-cache"
        return response


class MeshViewSet(viewsets.ModelViewSet[Mesh]):
    """Meshes with their members and tests. A change that would overbook an agent's exclusive
    time is refused (400 {"tests": [...]}); an accepted one re-plans the mesh's exclusive
    slots at once and is recorded in the audit log."""

    serializer_class = MeshSerializer
    permission_classes = [OperatorWrites]
    lookup_field = "name"

    def get_queryset(self) -> QuerySet[Mesh]:
        return Mesh.objects.prefetch_related("members__agent", "tests")

    def perform_create(self, serializer: BaseSerializer[Mesh]) -> None:
        assert isinstance(serializer, MeshSerializer)
        save_mesh(serializer, Actor.of(self.request))

    def perform_update(self, serializer: BaseSerializer[Mesh]) -> None:
        assert isinstance(serializer, MeshSerializer)
        save_mesh(serializer, Actor.of(self.request))

    def perform_destroy(self, instance: Mesh) -> None:
        delete_mesh(instance, Actor.of(self.request))

    @extend_schema(
        request=MeshDraftSerializer,
        responses={
            200: MeshPreviewSerializer,
            400: OpenApiResponse(description="field errors of the mesh, as saving it would give them"),
        },
    )
    @action(detail=False, methods=["post"])
    def preview(self, request: Request) -> Response:
        """What saving a mesh would do to the exclusive plan: each agent's slots and share of
        its time, and the runs that would find no slot. Writes nothing."""
        params = MeshDraftSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        replaces = params.validated_data["replaces"]
        mesh = MeshSerializer(replaces, data=params.validated_data["mesh"])
        mesh.is_valid(raise_exception=True)
        result = preview_mesh(draft_mesh(mesh.validated_data, replaces), replaces)
        return Response(
            MeshPreviewSerializer(
                {
                    "ok": result.ok,
                    "horizon_s": result.horizon_s,
                    "agents": [asdict(row) for row in result.agents],
                    "conflicts": [asdict(conflict) for conflict in result.conflicts],
                }
            ).data
        )

    @extend_schema(responses={200: AuditEntrySerializer(many=True)})
    @action(detail=True, methods=["get"])
    def history(self, request: Request, name: str) -> Response:
        """Every recorded change of the mesh, newest first, each with its diff."""
        return Response(AuditEntrySerializer(mesh_history(self.get_object()), many=True).data)

    @extend_schema(
        request=MeshRevertSerializer,
        responses={200: MeshSerializer, 400: OpenApiResponse(description='{"entry": ["why it cannot be restored"]}')},
    )
    @action(detail=True, methods=["post"])
    def revert(self, request: Request, name: str) -> Response:
        """Restores the mesh as it was before one of its audit entries (recorded as a revert)."""
        params = MeshRevertSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        mesh = revert_mesh(self.get_object(), params.validated_data["entry"], Actor.of(request))
        return Response(MeshSerializer(self.get_queryset().get(pk=mesh.pk)).data)


class SlotListView(APIView):
    """Planned exclusive slots and what became of them: planned, ok, failed, missed or
    unschedulable, each with its reason."""

    @extend_schema(parameters=[SlotQuerySerializer], responses={200: SlotSerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = SlotQuerySerializer(data=request.query_params)
        if not query.is_valid():
            raise ValidationError(query.errors)
        params = query.validated_data
        slots = Slot.objects.select_related("source", "destination", "mesh_test__mesh").order_by("start_at")
        if "agent" in params:
            slots = slots.filter(Q(source__name=params["agent"]) | Q(destination__name=params["agent"]))
        if "state" in params:
            slots = slots.filter(state=params["state"])
        if "start" in params:
            slots = slots.filter(start_at__gte=params["start"])
        if "end" in params:
            slots = slots.filter(start_at__lt=params["end"])
        return Response(SlotSerializer(slots[: params["limit"]], many=True).data)


class UtilizationView(APIView):
    """Each agent's exclusive (throughput) time in the planned horizon, to size a mesh."""

    @extend_schema(responses={200: UtilizationSerializer})
    def get(self, request: Request) -> Response:
        now, until, rows = exclusive_utilization()
        horizon_s = (until - now).total_seconds()
        return Response(
            UtilizationSerializer(
                {
                    "now": now,
                    "planned_until": until,
                    "horizon_s": horizon_s,
                    "agents": [
                        {
                            "agent": row.agent.name,
                            "planned_exclusive_s": round(row.planned_s, 1),
                            "utilization": round(row.planned_s / horizon_s, 4) if horizon_s else 0.0,
                            "demand": round(row.demand, 4),
                            "slots_planned": row.slots_planned,
                        }
                        for row in rows
                    ],
                }
            ).data
        )
