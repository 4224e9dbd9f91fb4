"""One Redis client per process for what Django's cache API cannot do: owned locks
(perfsonar.sync_lock) and the counters of Fathom's own metrics (core.metrics)."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings

# A Redis that stops answering must not hold a request or a task for long.
TIMEOUT_S = 2.0


@cache
def shared_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
