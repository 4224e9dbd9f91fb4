"""Reads of measurement history from a streaming replica of the database, where one is configured.

Only the views that show history (a path's pings, runs, routes, rollups, analyses and
findings: `core.api.history_view.HistoryReadView`) read from it, and only their queries of the
history apps' tables. Everything else stays on the primary: sign-in, sessions, users, agents,
meshes, every write and every read inside a transaction, so nothing Fathom decides or
authorises is read from a copy a moment behind. A replica that does not answer is left out
for `DATABASE_REPLICA_RETRY_S`, its reads going to the primary meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.utils import Error as DatabaseError

log = logging.getLogger(__name__)

REPLICA = "replica"
# The apps whose tables hold what was measured and what the analysis made of it.
HISTORY_APPS = frozenset({"measurements", "history", "analysis"})

_reading_history: ContextVar[bool] = ContextVar("fathom_reading_history", default=False)
_lock = threading.Lock()
_left_out_until = 0.0  # time.monotonic() before which the replica is not asked


@contextmanager
def history_reads() -> Iterator[None]:
    """Within: reads of the history apps' tables may go to the replica."""
    token = _reading_history.set(True)
    try:
        yield
    finally:
        _reading_history.reset(token)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def replica_answers() -> bool:
    """Whether the replica takes reads now: connected, or connectable, and not left out after a
    failure in the last DATABASE_REPLICA_RETRY_S."""
    if time.monotonic() < _left_out_until:
        return False
    try:
        connections[REPLICA].ensure_connection()
    except DatabaseError as error:
        leave_out_replica_for_now()
        # One line, not a traceback: every process says this once a retry period while it lasts.
        log.warning(
            "the database replica does not answer (%s): history reads go to the primary for %s s",
            str(error).strip(),
            settings.DATABASE_REPLICA_RETRY_S,
        )
        return False
    return True


def leave_out_replica_for_now() -> None:
    """Leaves the replica out as if it had not answered (a query on it failed)."""
    global _left_out_until
    with _lock:
        _left_out_until = time.monotonic() + settings.DATABASE_REPLICA_RETRY_S


class ReplicaRouter:
    """Django's database router: history reads to the replica, the rest to the primary."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str | None:
        if not _reading_history.get() or model._meta.app_label not in HISTORY_APPS or not replica_configured():
            return None
        # Inside a transaction the primary's own view of what it just wrote is the one to read.
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return None
        return REPLICA if replica_answers() else None

    def db_for_write(self, model: type[Any], **hints: Any) -> str | None:
        return None  # always the primary

    def allow_relation(self, first: Any, second: Any, **hints: Any) -> bool | None:
        # The replica is a copy of the primary: rows read from either relate to each other.
        databases = {first._state.db, second._state.db}
        return True if databases <= {DEFAULT_DB_ALIAS, REPLICA} else None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return False if db == REPLICA else None
