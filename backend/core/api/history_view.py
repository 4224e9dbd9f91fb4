"""The base of the read-only views of measurement history: their reads may go to the database's
streaming replica (core/replica.py), and to the primary when the replica fails them."""

from __future__ import annotations

import logging
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.views import APIView

from core.replica import history_reads, leave_out_replica_for_now, replica_configured

log = logging.getLogger(__name__)


class HistoryReadView(APIView):
    """An APIView that only reads what was measured (GET): its history queries may be served by
    the replica. A request the replica fails (it went away since it was last asked) is answered
    again from the primary, which is safe because the view writes nothing."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD") or not replica_configured():
            return super().dispatch(request, *args, **kwargs)
        try:
            with history_reads():
                return super().dispatch(request, *args, **kwargs)
        except (OperationalError, InterfaceError) as error:  # the connection, not the query
            log.warning("a history read failed on the replica (%s): answered from the primary", str(error).strip())
            leave_out_replica_for_now()
            return super().dispatch(request, *args, **kwargs)
