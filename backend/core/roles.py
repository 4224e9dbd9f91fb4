"""The roles people hold, read from and written to Django's own flags, and who may what.

admin = superuser, operator = staff, viewer = neither: the Django admin site, `createsuperuser`
and `ensure_admin` keep meaning what they meant, and no second copy of the role can drift
from the flags that Django itself checks. On the ground floor because every app's views ask
it (core.api.permissions), and the audit log below the accounts app names roles too.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import models

from core import choices as registry


class Role(models.TextChoices):
    """What a person may do; each role may do everything the ones before it may."""

    VIEWER = "viewer", "Viewer"  # reads everything
    OPERATOR = "operator", "Operator"  # meshes, agents, acknowledgements and silences
    ADMIN = "admin", "Admin"  # people, API tokens of others, channels, rules, audit


ROLE_RANK = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}

ROLE_COLORS = {Role.VIEWER: "#6e7781", Role.OPERATOR: "#0969da", Role.ADMIN: "#8250df"}

registry.register("role", Role, ROLE_COLORS)


def role_of(user: AbstractBaseUser | AnonymousUser | Any) -> Role | None:
    """The role of a signed-in, active person; None for anyone else (anonymous, an agent)."""
    if not isinstance(user, User) or not user.is_active:
        return None
    return flag_role(user)


def flag_role(user: User) -> Role:
    """The role the flags say, whether or not the user is active."""
    if user.is_superuser:
        return Role.ADMIN
    return Role.OPERATOR if user.is_staff else Role.VIEWER


def has_role(user: Any, needed: Role) -> bool:
    role = role_of(user)
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[needed]


def apply_role(user: User, role: Role) -> None:
    """Sets the flags that mean `role`; the caller saves."""
    user.is_superuser = role == Role.ADMIN
    user.is_staff = role in (Role.ADMIN, Role.OPERATOR)
