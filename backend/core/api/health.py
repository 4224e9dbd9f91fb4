"""Liveness and readiness for load balancers, container health checks and monitoring.

Anonymous on purpose (a health check carries no credentials) and cheap: one `SELECT 1`
(bounded at 2 s) and one read of the shared cache, and nothing about the deployment beyond
"ok" or "down" per dependency, so a stranger learns no more than that Fathom is there.
"""

from __future__ import annotations

import logging
from typing import Literal

from django.core.cache import cache
from django.db import connection, transaction
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

log = logging.getLogger(__name__)

State = Literal["ok", "down"]
STATES = ["ok", "down"]


def database_state() -> State:
    try:
        # SET LOCAL holds only inside a transaction; in autocommit it would bound nothing.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = 2000")
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:  # any failure is "down"; the reason goes to the log
        log.warning("health: the database does not answer", exc_info=True)
        return "down"
    return "ok"


def redis_state() -> State:
    try:
        # The shared cache is Redis (throttles, sign-in counters); a round trip proves it.
        cache.get("health-probe")
    except Exception:  # as above
        log.warning("health: Redis does not answer", exc_info=True)
        return "down"
    return "ok"


health_body = inline_serializer(
    "Health",
    {
        "status": serializers.ChoiceField(choices=STATES),
        "database": serializers.ChoiceField(choices=STATES),
        "redis": serializers.ChoiceField(choices=STATES),
    },
)


class HealthView(APIView):
    """200 when the web process reaches its database and Redis, 503 naming what is down."""

    authentication_classes: list[type] = []
    permission_classes = [AllowAny]

    @extend_schema(responses={200: health_body, 503: health_body}, auth=[])
    def get(self, request: Request) -> Response:
        parts = {"database": database_state(), "redis": redis_state()}
        healthy = all(state == "ok" for state in parts.values())
        return Response({"status": "ok" if healthy else "down", **parts}, status=200 if healthy else 503)
