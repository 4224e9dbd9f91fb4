from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from meshes.api.serializers import PlanSerializer
from meshes.services import build_plan


class PlanView(APIView):
    """The calling agent's plan; If-None-Match with the current ETag gives 304."""

    authentication_classes = [AgentAuthentication]
    permission_classes = [IsAgent]

    @extend_schema(
        parameters=[OpenApiParameter("If-None-Match", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False)],
        responses={200: PlanSerializer, 304: OpenApiResponse(description="plan unchanged")},
    )
    def get(self, request: Request) -> Response:
        plan = build_plan(request_agent(request))
        etag = f'"{plan.version}"'
        if etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response(plan.as_json())
        response["ETag"] = etag
        response["Cache-Control"] = "no-cache"
        return response
