from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from meshes.api.serializers import (
    MeshSerializer,
    PlanSerializer,
    SlotQuerySerializer,
    SlotSerializer,
    UtilizationSerializer,
)
from meshes.models import Mesh, Slot
from meshes.services import build_plan, exclusive_utilization, record_issued_plan, replan_mesh


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


class IsStaffOrReadOnly(permissions.BasePermission):
    """Everyone logged in reads; operators (staff) change meshes."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return bool(request.user and request.user.is_authenticated)
        return bool(request.user and request.user.is_staff)


class MeshViewSet(viewsets.ModelViewSet[Mesh]):
    """Meshes with their members and tests. A change re-plans the mesh's exclusive slots at once."""

    serializer_class = MeshSerializer
    permission_classes = [IsStaffOrReadOnly]
    lookup_field = "name"

    def get_queryset(self) -> QuerySet[Mesh]:
        return Mesh.objects.prefetch_related("members__agent", "tests")

    def perform_create(self, serializer: BaseSerializer[Mesh]) -> None:
        with transaction.atomic():
            replan_mesh(serializer.save())

    def perform_update(self, serializer: BaseSerializer[Mesh]) -> None:
        with transaction.atomic():
            replan_mesh(serializer.save())

    def perform_destroy(self, instance: Mesh) -> None:
        instance.delete()  # its tests' future slots go with them (meshes.signals)


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
