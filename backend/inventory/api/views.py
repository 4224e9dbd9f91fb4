from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from inventory import services
from inventory.api.serializers import (
    AgentSerializer,
    EnrollmentTokenCreateSerializer,
    EnrollmentTokenSerializer,
    EnrollRequestSerializer,
    EnrollResponseSerializer,
    HostFactsResponseSerializer,
    HostFactsSerializer,
    IssuedTokenSerializer,
)
from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from inventory.models import Agent, EnrollmentToken


class EnrollmentTokenViewSet(
    mixins.ListModelMixin, mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet[EnrollmentToken]
):
    """Enrolment tokens: staff create them (the secret is shown once), list them, revoke them."""

    permission_classes = [permissions.IsAdminUser]
    serializer_class = EnrollmentTokenSerializer

    def get_queryset(self) -> QuerySet[EnrollmentToken]:
        return EnrollmentToken.objects.select_related("used_by")

    @extend_schema(request=EnrollmentTokenCreateSerializer, responses={201: IssuedTokenSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        params = EnrollmentTokenCreateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        creator = request.user if isinstance(request.user, User) else None
        data = params.validated_data
        try:
            issued = services.create_enrollment_token(
                data["expires_in_s"], data["note"], creator, agent_name=data["agent_name"], rekey=data["rekey"]
            )
        except services.TokenRequestError as exc:
            raise ValidationError({"agent_name": [str(exc)]}) from exc
        token = issued.token
        body = {
            "id": token.pk,
            "token": issued.plaintext,
            "prefix": token.prefix,
            "note": token.note,
            "agent_name": token.agent_name,
            "rekey": token.rekey_agent_id is not None,
            "created_at": token.created_at,
            "expires_at": token.expires_at,
        }
        return Response(IssuedTokenSerializer(body).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.revoke_enrollment_token(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


class EnrollView(APIView):
    """Exchanges a single-use enrolment token for a per-agent credential."""

    authentication_classes: list[type[Any]] = []
    permission_classes = [permissions.AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "enroll"

    @extend_schema(
        request=EnrollRequestSerializer,
        responses={
            201: EnrollResponseSerializer,
            400: OpenApiResponse(description="malformed request, or an address agents may not register"),
            403: OpenApiResponse(
                description="unknown, used, expired or revoked token; a token for another name; an enrolled or"
                " revoked agent's name without a re-key token for it; a re-key at another address"
            ),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        params = EnrollRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        try:
            enrollment = services.enroll_agent(data["token"], data["name"], data["address"], data["agent_version"])
        except services.InvalidAddress as exc:
            raise ValidationError({"address": [str(exc)]}) from exc
        except services.EnrollmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        body = {"agent_id": enrollment.agent.pk, "name": enrollment.agent.name, "credential": enrollment.credential}
        return Response(EnrollResponseSerializer(body).data, status=status.HTTP_201_CREATED)


class AgentViewSet(viewsets.ReadOnlyModelViewSet[Agent]):
    """Agents with their status, last contact and latest host facts."""

    serializer_class = AgentSerializer
    queryset = Agent.objects.all()

    @extend_schema(request=None, responses={200: AgentSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAdminUser])
    def revoke(self, request: Request, pk: str | None = None) -> Response:
        agent = self.get_object()
        services.revoke_agent(agent)
        return Response(AgentSerializer(agent).data)


class HostFactsView(APIView):
    """The agent reports its host facts; history keeps a row per change."""

    authentication_classes = [AgentAuthentication]
    permission_classes = [IsAgent]

    @extend_schema(request=HostFactsSerializer, responses={200: HostFactsResponseSerializer})
    def put(self, request: Request) -> Response:
        params = HostFactsSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        facts = dict(params.validated_data)
        collected_at = facts["collected_at"]
        # Stored as JSON: keep the wire form of the timestamp.
        facts["collected_at"] = collected_at.isoformat()
        changed = services.record_host_facts(request_agent(request), facts, collected_at)
        return Response({"changed": changed})
