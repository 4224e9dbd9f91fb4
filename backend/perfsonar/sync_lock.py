"""One sync of Fathom's tasks with the nodes at a time. The beat's sync and a mesh edit's
share it, and a node's removal takes it too: a sync running meanwhile could otherwise create
a task on the node after the removal deleted the ones it knew of, and leave it there.

The lock is owned: it holds a random token, and only the holder's token releases it (Redis
compares and deletes in one script), so a holder that outlived the lock's expiry never frees
the lock a later sync has since taken. Every sync ends by SYNC_DEADLINE_S (each call to a node
is bounded in total, not per read: client.py), well inside the lock's HOLD_S.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache as django_cache
from redis.exceptions import LockNotOwnedError

from core.shared_redis import shared_redis

SYNC_LOCK = "perfsonar-sync-lock"
# A sync stops starting calls to nodes after this (what is left waits for the next sync)...
SYNC_DEADLINE_S = 240.0
# ...and its last call ends within CALL_TOTAL_S of it (client.py), so a crashed holder's lock
# expires by itself well after any live holder is done.
HOLD_S = 300
POLL_S = 0.2

log = logging.getLogger(__name__)


@contextmanager
def sync_lock(wait_s: float = 0.0) -> Iterator[bool]:
    """Holds the lock for the block, waiting up to `wait_s` for a running sync; yields
    whether it got it (the caller decides whether to go on without it)."""
    lock = shared_redis().lock(
        django_cache.make_key(SYNC_LOCK), timeout=HOLD_S, sleep=POLL_S, blocking=wait_s > 0, blocking_timeout=wait_s
    )
    held = lock.acquire()
    try:
        yield held
    finally:
        if held:
            try:
                lock.release()
            except LockNotOwnedError:
                log.warning("the perfSONAR sync lock expired while held: another sync may have overlapped this one")


def deadline(seconds: float = SYNC_DEADLINE_S) -> float:
    """The monotonic time by which a sync that starts now stops starting calls."""
    return time.monotonic() + seconds
