from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core.api.permissions import OperatorOnly, OperatorWrites
from inventory import services
from inventory.addresses import AddressError
from inventory.api.serializers import (
    AgentChangeSerializer,
    AgentSerializer,
    EnrollmentTokenCreateSerializer,
    EnrollmentTokenSerializer,
    EnrollRequestSerializer,
    EnrollResponseSerializer,
    HostFactsResponseSerializer,
    HostFactsSerializer,
    IssuedTokenSerializer,
    agent_snapshot,
    token_snapshot,
)
from inventory.authentication import AgentAuthentication, IsAgent, request_agent
from inventory.models import Agent, EnrollmentToken


class EnrollmentTokenViewSet(
    mixins.ListModelMixin, mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet[EnrollmentToken]
):
    """Enrolment tokens: operators create them (the secret is shown once), list them, revoke them."""

    permission_classes = [OperatorOnly]
    serializer_class = EnrollmentTokenSerializer

    def get_queryset(self) -> QuerySet[EnrollmentToken]:
        return EnrollmentToken.objects.select_related("used_by")

    @extend_schema(
        request=EnrollmentTokenCreateSerializer,
        responses={
            201: IssuedTokenSerializer,
            400: OpenApiResponse(
                description="bad lifetime or name; agent_name enrolled without rekey, unknown or revoked for a"
                " re-key, or the name of a decommissioned agent"
            ),
        },
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        params = EnrollmentTokenCreateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        creator = request.user if isinstance(request.user, User) else None
        data = params.validated_data
        with transaction.atomic():
            try:
                issued = services.create_enrollment_token(
                    data["expires_in_s"], data["note"], creator, agent_name=data["agent_name"], rekey=data["rekey"]
                )
            except services.TokenRequestError as exc:
                raise ValidationError({"agent_name": [str(exc)]}) from exc
            token = issued.token
            verb = AuditAction.REKEY if token.rekey_agent_id is not None else AuditAction.CREATE
            record(
                Actor.of(request), verb, AuditObject.ENROLLMENT_TOKEN, token.pk, str(token), after=token_snapshot(token)
            )
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
        found = self.get_object()
        with transaction.atomic():
            token = EnrollmentToken.objects.select_for_update().get(pk=found.pk)
            before = token_snapshot(token)
            if services.revoke_enrollment_token(token):
                record(
                    Actor.of(request),
                    AuditAction.REVOKE,
                    AuditObject.ENROLLMENT_TOKEN,
                    token.pk,
                    str(token),
                    before=before,
                    after=token_snapshot(token),
                )
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
            enrollment = services.enroll_agent(
                data["token"], data["name"], data["address"], data["agent_version"], data["other_addresses"]
            )
        except services.InvalidAddress as exc:
            raise ValidationError({"address": [str(exc)]}) from exc
        except services.EnrollmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        body = {"agent_id": enrollment.agent.pk, "name": enrollment.agent.name, "credential": enrollment.credential}
        return Response(EnrollResponseSerializer(body).data, status=status.HTTP_201_CREATED)


class AgentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Agent]):
    """Agents with their status, last contact and latest host facts. Operators rename, revoke
    and decommission them; every change is in the audit log."""

    permission_classes = [OperatorWrites]
    serializer_class = AgentSerializer
    queryset = Agent.objects.all()

    def _change(self, request: Request, verb: AuditAction, change: Callable[[Agent], bool]) -> Response:
        """Applies `change` to the locked agent and records it, in one transaction; a change
        that changed nothing (a second revoke) records nothing."""
        found = self.get_object()
        with transaction.atomic():
            agent = Agent.objects.select_for_update().get(pk=found.pk)
            before = agent_snapshot(agent)
            if change(agent):
                record(
                    Actor.of(request),
                    verb,
                    AuditObject.AGENT,
                    agent.pk,
                    agent.name,
                    before=before,
                    after=agent_snapshot(agent),
                )
        return Response(AgentSerializer(agent).data)

    @extend_schema(
        request=AgentChangeSerializer,
        responses={
            200: AgentSerializer,
            400: OpenApiResponse(
                description="an invalid or taken name (a decommissioned agent's too), an address agents may not"
                " have, a decommissioned agent, or an unknown field: {field: [messages]}"
            ),
        },
    )
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Renames the agent (same id, results, memberships and credential) or moves it to a new
        address (its host moved; peers take it up at their next plan poll)."""
        params = AgentChangeSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data

        def change(agent: Agent) -> bool:
            changed = False
            if "name" in data:
                try:
                    changed |= services.rename_agent(agent, data["name"])
                except services.AgentNameError as exc:
                    raise ValidationError({"name": [str(exc)]}) from exc
            if "address" in data or "other_addresses" in data:
                try:
                    changed |= services.move_agent(agent, data.get("address"), data.get("other_addresses"))
                except AddressError as exc:
                    raise ValidationError({"address": [str(exc)]}) from exc
            return changed

        verb = AuditAction.RENAME if set(data) == {"name"} else AuditAction.UPDATE
        return self._change(request, verb, change)

    @extend_schema(request=None, responses={200: AgentSerializer})
    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, pk: str | None = None) -> Response:
        """Refuses the agent's credential from now on; it can be re-keyed no more. Idempotent."""
        return self._change(request, AuditAction.REVOKE, services.revoke_agent)

    @extend_schema(request=None, responses={200: AgentSerializer})
    @action(detail=True, methods=["post"])
    def decommission(self, request: Request, pk: str | None = None) -> Response:
        """Retires the agent: revoked, out of every mesh and plan, its name never reused; its
        results and history stay. Idempotent."""
        return self._change(request, AuditAction.DECOMMISSION, services.decommission_agent)


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
