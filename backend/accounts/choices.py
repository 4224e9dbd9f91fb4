"""Choice sets of the accounts app: the roles people hold and the scopes of API tokens."""

from django.db import models

from core import choices as registry


class Role(models.TextChoices):
    """What a person may do; each role may do everything the ones before it may."""

    VIEWER = "viewer", "Viewer"  # reads everything
    OPERATOR = "operator", "Operator"  # meshes, agents, acknowledgements and silences
    ADMIN = "admin", "Admin"  # people, API tokens of others, channels, rules, audit


ROLE_RANK = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}

ROLE_COLORS = {Role.VIEWER: "#6e7781", Role.OPERATOR: "#0969da", Role.ADMIN: "#8250df"}


class TokenScope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Read and write"


# What an API token's `state` says (not a registered choice set: the UI shows it as text).
API_TOKEN_STATES = ("active", "expired", "revoked")

TOKEN_SCOPE_COLORS = {TokenScope.READ: "#6e7781", TokenScope.WRITE: "#9a6700"}

registry.register("role", Role, ROLE_COLORS)
registry.register("token_scope", TokenScope, TOKEN_SCOPE_COLORS)
