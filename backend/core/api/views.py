from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core import choices
from core.api.serializers import choices_serializer


class ChoicesView(APIView):
    """Labels and colours of every choice set the UI shows."""

    @extend_schema(responses={200: choices_serializer()})
    def get(self, request: Request) -> Response:
        return Response(choices.all_choices())
