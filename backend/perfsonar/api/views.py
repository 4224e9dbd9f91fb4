from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core import strict_json
from core.api.permissions import OperatorOnly, OperatorWrites
from perfsonar.api.serializers import (
    ArchiveResultSerializer,
    ArchiveTokenSerializer,
    NodeCreateSerializer,
    NodeSerializer,
    NodeTaskSerializer,
    NodeUpdateSerializer,
)
from perfsonar.intake import RunRefused, store_run, store_subscribed_run, task_of_run
from perfsonar.mapping import MappingError, result_id, run_from_archive
from perfsonar.models import Node, Task
from perfsonar.nodes import (
    NodeError,
    check_node,
    node_snapshot,
    note_error,
    register_node,
    request_removal,
    update_node,
    with_task_counts,
)
from perfsonar.reconcile import ARCHIVE_PATH
from perfsonar.tokens import archive_token, authorization_header, node_of_token


def nodes() -> QuerySet[Node]:
    """The nodes in service, and those being removed (until a worker has deleted their tasks)."""
    being_removed = Q(removal_requested_at__isnull=False, removal_finished_at__isnull=True)
    return with_task_counts(
        Node.objects.select_related("agent").filter(Q(agent__decommissioned_at__isnull=True) | being_removed)
    )


def node_named(name: str) -> Node:
    return get_object_or_404(nodes(), agent__name=name)


class NodeListView(APIView):
    """perfSONAR nodes: everyone reads; operators register them."""

    permission_classes = [OperatorWrites]

    @extend_schema(responses=NodeSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(NodeSerializer(nodes(), many=True).data)

    @extend_schema(
        request=NodeCreateSerializer,
        responses={201: NodeSerializer, 400: OpenApiResponse(description="field errors: name, api_url, address, TLS")},
    )
    def post(self, request: Request) -> Response:
        params = NodeCreateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            node = register_node(actor=Actor.of(request), **params.validated_data)
        except NodeError as error:
            raise ValidationError({error.field: [str(error)]}) from error
        node = check_node(node)
        return Response(NodeSerializer(node).data, status=status.HTTP_201_CREATED)


class NodeDetailView(APIView):
    permission_classes = [OperatorWrites]

    @extend_schema(responses=NodeSerializer)
    def get(self, request: Request, name: str) -> Response:
        return Response(NodeSerializer(node_named(name)).data)

    @extend_schema(request=NodeUpdateSerializer, responses={200: NodeSerializer, 400: OpenApiResponse()})
    def patch(self, request: Request, name: str) -> Response:
        node = node_named(name)
        params = NodeUpdateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            node = update_node(node, dict(params.validated_data), Actor.of(request))
        except NodeError as error:
            raise ValidationError({error.field: [str(error)]}) from error
        return Response(NodeSerializer(check_node(node)).data)

    @extend_schema(responses={202: NodeSerializer})
    def delete(self, request: Request, name: str) -> Response:
        """Decommissions the node at once (its results stay); a worker then deletes its tasks
        from it, and the node is listed as being removed (`removing_since`) until then."""
        node = node_named(name)
        if node.removal_requested_at is not None:
            return Response(NodeSerializer(node).data, status=status.HTTP_202_ACCEPTED)
        request_removal(node, Actor.of(request))
        return Response(NodeSerializer(node_named(name)).data, status=status.HTTP_202_ACCEPTED)


class NodeCheckView(APIView):
    permission_classes = [OperatorOnly]

    @extend_schema(request=None, responses=NodeSerializer)
    def post(self, request: Request, name: str) -> Response:
        return Response(NodeSerializer(check_node(node_named(name))).data)


class NodeTasksView(APIView):
    permission_classes = [OperatorWrites]

    @extend_schema(responses=NodeTaskSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        node = node_named(name)
        tasks = (
            Task.objects.filter(node=node)
            .select_related("source", "destination", "mesh_test__mesh")
            .order_by("-created_at")[:500]
        )
        return Response(NodeTaskSerializer(tasks, many=True).data)


class ArchiveTokenView(APIView):
    """The token a node's http archive sends: operators read it (to configure a node that
    subscribes to an exported template) and rotate it."""

    permission_classes = [OperatorOnly]

    def _answer(self, node: Node) -> Response:
        return Response(
            {
                "token": archive_token(node),
                "authorization": authorization_header(node),
                "archive_url": settings.PUBLIC_URL + ARCHIVE_PATH,
            }
        )

    @extend_schema(responses=ArchiveTokenSerializer)
    def get(self, request: Request, name: str) -> Response:
        return self._answer(node_named(name))

    @extend_schema(request=None, responses=ArchiveTokenSerializer)
    def post(self, request: Request, name: str) -> Response:
        """Rotates the token: tasks Fathom made are re-made with the new one at the next sync."""
        node = node_named(name)
        with transaction.atomic():
            before = node_snapshot(node)
            node.token_generation += 1
            node.save(update_fields=["token_generation"])
            record(
                Actor.of(request),
                AuditAction.REKEY,
                AuditObject.AGENT,
                node.pk,
                node.agent.name,
                before=before,
                after={**node_snapshot(node), "archive_token_generation": node.token_generation},
            )
        return self._answer(node)


class ArchiveView(APIView):
    """What a node's pScheduler http archiver pushes (POST or PUT, perfSONAR's configs use
    put): one run's record, authenticated by the node's archive token. Idempotent on the
    run: a retried delivery answers "duplicate"."""

    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]
    # No parser: the view reads the body itself, so malformed JSON gets its own answer.
    parser_classes: list[Any] = []
    throttle_classes: list[Any] = []

    @extend_schema(
        request={"application/json": {"type": "object"}},
        responses={
            200: ArchiveResultSerializer,
            400: OpenApiResponse(description="not JSON, not a pScheduler run record, or a run that does not map"),
            401: OpenApiResponse(description="no or a wrong archive token"),
            404: OpenApiResponse(description="a run of no task Fathom made on this node"),
            413: OpenApiResponse(description="body over FATHOM_PERFSONAR_MAX_BODY_BYTES"),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        node = node_of_token(token.strip()) if scheme.lower() == "bearer" else None
        if node is None:
            return Response(
                {"detail": "an archive token is required: Authorization: Bearer fps_..."},
                status=status.HTTP_401_UNAUTHORIZED,
                headers={"WWW-Authenticate": "Bearer"},
            )
        now = timezone.now()
        try:
            body = strict_json.loads(request.body)
            run = run_from_archive(body)
        except (ValueError, UnicodeDecodeError) as error:
            message = f"not a pScheduler archive record: {error}"[:1000]
            note_error(node, f"push refused: {message}", now)
            return Response({"detail": message}, status=status.HTTP_400_BAD_REQUEST)
        task = task_of_run(node, run)
        try:
            outcome = store_run(task, run, now) if task is not None else store_subscribed_run(node, run, now)
        except (MappingError, RunRefused) as error:
            note_error(node, f"push refused: {error}", now)
            return Response({"detail": str(error)[:2000]}, status=status.HTTP_400_BAD_REQUEST)
        if outcome is None:
            message = (
                f"run {run.href or '(no href)'} belongs to no task Fathom made on {node.agent.name}"
                " and to no path of a mesh it subscribes to"
            )
            note_error(node, f"push refused: {message}", now)
            return Response({"detail": message}, status=status.HTTP_404_NOT_FOUND)
        Node.objects.filter(pk=node.pk).update(last_push_at=now)
        return Response({"status": outcome, "result_id": str(result_id(run.href))})

    @extend_schema(exclude=True)
    def put(self, request: Request) -> Response:
        return self.post(request)
