"""A person's role, read from and written to Django's own flags.

admin = superuser, operator = staff, viewer = neither: the Django admin site, `createsuperuser`
and `ensure_admin` keep meaning what they meant, and no second copy of the role can drift
from the flags that Django itself checks.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User

from accounts.choices import ROLE_RANK, Role


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
