"""The health endpoint: anonymous, 200 with real TimescaleDB and Redis, 503 naming a dead one."""

from __future__ import annotations

from django.test import override_settings

from fathom.testing import FathomTestCase

UNREACHABLE_REDIS = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        # Port 1 on loopback: nothing listens, so the connection is refused at once.
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


class HealthTests(FathomTestCase):
    def test_strangers_get_the_state_of_each_dependency(self) -> None:
        reply = self.client.get("/api/v1/health/")
        assert reply.status_code == 200
        assert reply.json() == {"status": "ok", "database": "ok", "redis": "ok"}

    @override_settings(CACHES=UNREACHABLE_REDIS)
    def test_a_dead_redis_is_a_503_that_names_it(self) -> None:
        reply = self.client.get("/api/v1/health/")
        assert reply.status_code == 503
        assert reply.json() == {"status": "down", "database": "ok", "redis": "down"}

    def test_it_takes_no_writes(self) -> None:
        assert self.client.post("/api/v1/health/", {}, format="json").status_code == 405
