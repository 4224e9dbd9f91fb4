"""Who may do what, by role: one permission class per rule, used by every user endpoint.

Reading needs `read_role`, changing needs `write_role`. An API token's scope is enforced
where it authenticates (accounts.authentication), so a read-only token never gets this far
with an unsafe method.
"""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from core.roles import Role, has_role


class RolePermission(permissions.BasePermission):
    read_role: Role = Role.VIEWER
    write_role: Role = Role.VIEWER
    message = "your role does not allow this"

    def has_permission(self, request: Request, view: Any) -> bool:
        needed = self.read_role if request.method in permissions.SAFE_METHODS else self.write_role
        return has_role(request.user, needed)


class SignedIn(RolePermission):
    """Any person signed in (the default): viewers and up, never an agent."""


class OperatorWrites(RolePermission):
    """Everyone reads; operators and admins change."""

    write_role = Role.OPERATOR


class AdminWrites(RolePermission):
    """Everyone reads; admins change."""

    write_role = Role.ADMIN


class OperatorOnly(RolePermission):
    read_role = Role.OPERATOR
    write_role = Role.OPERATOR


class AdminOnly(RolePermission):
    read_role = Role.ADMIN
    write_role = Role.ADMIN
