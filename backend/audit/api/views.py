from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.serializers import AuditEntrySerializer, AuditQuerySerializer
from audit.models import AuditEntry
from core.api.permissions import AdminOnly


def filtered_entries(params: dict[str, object]) -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.all()
    for field, lookup in (
        ("object_type", "object_type"),
        ("object_key", "object_key"),
        ("action", "action"),
        ("actor", "actor_name"),
        ("q", "object_repr__icontains"),
        ("since", "at__gte"),
        ("until", "at__lt"),
        ("before_id", "id__lt"),
    ):
        if field in params:
            entries = entries.filter(**{lookup: params[field]})
    return entries.order_by("-id")


class AuditLogView(APIView):
    """The audit log, newest first: every change with who, when, how and its diff (admins)."""

    permission_classes = [AdminOnly]

    @extend_schema(parameters=[AuditQuerySerializer], responses={200: AuditEntrySerializer(many=True)})
    def get(self, request: Request) -> Response:
        query = AuditQuerySerializer(data=request.query_params)
        if not query.is_valid():
            raise ValidationError(query.errors)
        params = query.validated_data
        entries = filtered_entries(params)[: params["limit"]]
        return Response(AuditEntrySerializer(entries, many=True).data)
