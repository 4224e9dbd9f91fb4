"""GET /metrics for Prometheus: with a personal API token (a read scope is enough) or a
signed-in session, or from an address in FATHOM_METRICS_ALLOW_NETWORKS (a Prometheus that
cannot hold a token). Nobody else: the figures name every host and path."""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any, NoReturn

from django.conf import settings
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4
from rest_framework import exceptions, permissions
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.login_guard import client_address
from core.roles import Role, has_role
from metrics.exposition import render
from metrics.services import scrape


class PrometheusText(BaseRenderer):
    """The exposition as it is; a refusal as one line of text a scrape log can show."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        if isinstance(data, bytes):
            return data
        detail = data.get("detail", data) if isinstance(data, dict) else data
        return f"{detail}\n".encode()


class MayScrape(permissions.BasePermission):
    message = "sign in, send a personal API token, or scrape from an address in FATHOM_METRICS_ALLOW_NETWORKS"

    def has_permission(self, request: Request, view: Any) -> bool:
        return has_role(request.user, Role.VIEWER) or allowed_address(client_address(request._request))


def allowed_address(address: str) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in settings.METRICS_ALLOW_NETWORKS)


class MetricsView(APIView):
    permission_classes = [MayScrape]
    renderer_classes = [PrometheusText]
    schema = None  # not part of the JSON API (docs/metrics.md)

    def permission_denied(self, request: Request, message: str | None = None, code: str | None = None) -> NoReturn:
        # What would let the scraper in, not DRF's "credentials were not provided".
        raise exceptions.PermissionDenied(MayScrape.message)

    def get(self, request: Request) -> Response:
        body = render(scrape())
        return Response(body, content_type=CONTENT_TYPE_PLAIN_0_0_4)  # what every Prometheus 2 reads
