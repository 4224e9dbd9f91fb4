"""One sync of Fathom's tasks with the nodes at a time. The beat's sync and a mesh edit's
share it, and a node's removal takes it too: a sync running meanwhile could otherwise create
a task on the node after the removal deleted the ones it knew of, and leave it there."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache

SYNC_LOCK = "perfsonar-sync-lock"
# Longer than any sync takes (each call to a node has its timeout), so a crashed holder's
# lock expires by itself.
HOLD_S = 300
POLL_S = 0.2


@contextmanager
def sync_lock(wait_s: float = 0.0) -> Iterator[bool]:
    """Holds the lock for the block, waiting up to `wait_s` for a running sync; yields
    whether it got it (the caller decides whether to go on without it)."""
    deadline = time.monotonic() + wait_s
    held = cache.add(SYNC_LOCK, "1", timeout=HOLD_S)
    while not held and time.monotonic() < deadline:
        time.sleep(POLL_S)
        held = cache.add(SYNC_LOCK, "1", timeout=HOLD_S)
    try:
        yield held
    finally:
        if held:
            cache.delete(SYNC_LOCK)
