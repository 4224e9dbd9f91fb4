"""Personal API tokens for scripts. Only a SHA-256 digest of each token is kept: a token is
256 random bits, so a slow password hash would add nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

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
    # The end its creator asked for (None: none); the site's API_TOKEN_MAX_DAYS caps it (ends_at).
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    def ends_at(self) -> datetime:
        """When the token stops working: the end asked for, at most API_TOKEN_MAX_DAYS after
        its creation (a limit lowered later ends older tokens too)."""
        longest = self.created_at + timedelta(days=settings.API_TOKEN_MAX_DAYS)
        return longest if self.expires_at is None else min(self.expires_at, longest)

    def is_usable(self, now: datetime | None = None) -> bool:
        return self.revoked_at is None and self.ends_at() > (now or timezone.now())

    def state(self, now: datetime | None = None) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.ends_at() <= (now or timezone.now()):
            return "expired"
        return "active"
