"""The admin site reads; it never writes. Every change to an audited model goes through its
app's API and services, which check it and write the audit log; the admin site did neither
(it could un-revoke an agent, reuse a used enrolment token or reset a password unrecorded)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


class ReadOnlyAdmin:
    """Mixed in before ModelAdmin: lists and pages, no add, change or delete."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
