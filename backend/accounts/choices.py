"""Choice sets of the accounts app: the scopes of personal API tokens."""

from django.db import models

from core import choices as registry


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


# What an API token's `state` says (not a registered choice set: the UI shows it as text).
API_TOKEN_STATES = ("active", "expired", "revoked")

TOKEN_SCOPE_COLORS = {TokenScope.READ: "#6e7781", TokenScope.WRITE: "#9a6700"}

registry.register("token_scope", TokenScope, TOKEN_SCOPE_COLORS)
