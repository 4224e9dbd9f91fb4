"""pSConfig over HTTP: import a template (operators; a body or a URL, with a dry run), read a
mesh as a template (signed in), and the same without sign-in for meshes published to
perfSONAR nodes (`psconfig_published`), at /psconfig/<mesh>.json."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Actor
from core.api.permissions import OperatorOnly, SignedIn
from core.serializers import StrictSerializer
from meshes.models import Mesh
from perfsonar.psconfig.apply import import_template
from perfsonar.psconfig.exporter import export_mesh
from perfsonar.psconfig.template import TemplateError, load_url


class PsconfigImportSerializer(StrictSerializer):
    template = serializers.JSONField(required=False, help_text="the pSConfig template itself (a JSON object)")
    url = serializers.URLField(required=False, max_length=2000, help_text="where to fetch the template (http or https)")
    dry_run = serializers.BooleanField(default=False, help_text="report what the import would do; write nothing")
    register_unknown = serializers.BooleanField(
        default=False, help_text="register addresses no agent or node has as perfSONAR nodes"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("template" in attrs) == ("url" in attrs):
            raise ValidationError({"template": ["give the template or its url, one of the two"]})
        return attrs


class ImportedTestSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    test_type = serializers.CharField()
    interval_s = serializers.IntegerField()
    slip_s = serializers.IntegerField()
    enabled = serializers.BooleanField()


class ImportedMeshSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    group = serializers.CharField(help_text="the pSConfig group it comes from")
    action = serializers.ChoiceField(choices=["create", "update", "unchanged"])
    kind = serializers.CharField()
    members = serializers.ListField(child=serializers.CharField())
    targets = serializers.ListField(child=serializers.CharField())
    tests = ImportedTestSerializer(many=True)


class ImportedNodeSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="the Fathom agent or node (to be) registered")
    address = serializers.CharField()
    action = serializers.ChoiceField(choices=["matched", "register", "unknown"])
    element = serializers.CharField(help_text='the template address, "addresses.<name>"')


class UnmappedSerializer(serializers.Serializer[Any]):
    element = serializers.CharField(help_text='e.g. "tasks.x", "tests.y.spec.ip-version", "groups.g.excludes"')
    reason = serializers.CharField()


class AddressClassSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    element = serializers.CharField(help_text='"address-classes.<name>"')
    selected = serializers.ListField(
        child=serializers.CharField(), help_text="the template addresses (names) the class selects"
    )
    notes = serializers.ListField(
        child=serializers.CharField(), help_text="what Fathom could not evaluate as pSConfig would, and what follows"
    )


class PsconfigReportSerializer(serializers.Serializer[Any]):
    dry_run = serializers.BooleanField()
    meshes = ImportedMeshSerializer(many=True)
    nodes = ImportedNodeSerializer(many=True)
    unmapped = UnmappedSerializer(many=True, help_text="every element that did not map, with why")
    address_classes = AddressClassSerializer(many=True, help_text="what each address class selects")


class PsconfigImportView(APIView):
    """Imports a pSConfig template: addresses become agents or perfSONAR nodes, each group a
    mesh with its tasks as tests; importing again updates those meshes. A template pSConfig
    itself would refuse (its schema, an unknown template variable, a group naming an
    undefined address) is a 400 with the reasons, and nothing is written."""

    permission_classes = [OperatorOnly]

    @extend_schema(
        request=PsconfigImportSerializer,
        responses={
            200: PsconfigReportSerializer,
            400: OpenApiResponse(description='{"template": [reasons]} or {"url": [why it could not be fetched]}'),
        },
    )
    def post(self, request: Request) -> Response:
        params = PsconfigImportSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        try:
            template = load_url(data["url"]) if "url" in data else data["template"]
        except TemplateError as error:
            raise ValidationError({"url": error.errors}) from error
        try:
            report = import_template(template, Actor.of(request), data["dry_run"], data["register_unknown"])
        except TemplateError as error:
            raise ValidationError({"template": error.errors}) from error
        return Response(PsconfigReportSerializer(report.as_json()).data)


def _template_response(mesh: Mesh) -> Response:
    response = Response(export_mesh(mesh))
    response["Content-Disposition"] = f'inline; filename="{mesh.name}.json"'
    response["Cache-Control"] = "no-cache"
    return response


class PsconfigMeshView(APIView):
    """A mesh as a pSConfig template (it validates against pSConfig's published schema)."""

    permission_classes = [SignedIn]

    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="a pSConfig template"), 404: None})
    def get(self, request: Request, mesh: str) -> Response:
        return _template_response(get_object_or_404(Mesh, name=mesh))


class PublishedPsconfigView(APIView):
    """A published mesh as a pSConfig template, without sign-in, for perfSONAR nodes to
    subscribe to (`psconfig remote add`). A mesh not published is a 404, as one that does
    not exist: a stranger learns nothing about it."""

    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]

    # Outside /api/v1/ (a stable URL for `psconfig remote add`), so outside the API's schema
    # too; it serves what GET /api/v1/perfsonar/psconfig/{mesh}.json does (docs/perfsonar.md).
    @extend_schema(exclude=True)
    def get(self, request: Request, mesh: str) -> Response:
        return _template_response(get_object_or_404(Mesh, name=mesh, psconfig_published=True))
