"""Personal API tokens for scripts. Only a SHA-256 digest of each token is kept: a token is
256 random bits, so a slow password hash would add nothing."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.choices import TokenScope


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    token_sha256 = models.CharField(max_length=64, unique=True)
    # The first characters of the token, so its owner can tell tokens apart in lists and logs.
    prefix = models.CharField(max_length=12)
    scope = models.CharField(max_length=8, choices=TokenScope.choices, default=TokenScope.READ)
    created_at = models.DateTimeField(default=timezone.now)
    # None: the token never expires.
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    def is_usable(self, now: datetime | None = None) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > (now or timezone.now())

    def state(self, now: datetime | None = None) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or timezone.now()):
            return "expired"
        return "active"
