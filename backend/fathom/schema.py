"""The OpenAPI schema, served to signed-in users only, built once per process.

drf-spectacular's view is anonymous by default and walks every view and serializer on each
request: a cheap way for a stranger to keep a worker busy. The schema is the same for every
caller until the code changes, so one build per process serves them all.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.permissions import SignedIn


@cache
def built_schema() -> dict[str, Any]:
    schema: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    return schema


class SchemaView(SpectacularAPIView):
    permission_classes = [SignedIn]

    def _get_schema_response(self, request: Request) -> Response:
        return Response(data=built_schema(), headers={"Content-Disposition": 'inline; filename="fathom-api.yaml"'})
