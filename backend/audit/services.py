"""Recording changes. Every write path calls `record` inside the transaction of its change,
so a change and its audit row commit together or not at all."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from rest_framework.request import Request

from audit.choices import AuditAction, AuditObject
from audit.models import AuditEntry

# Values under these keys never reach the log, whatever object they sit in.
SECRET_KEYS = frozenset({"password", "secret", "token", "credential", "config", "webhook_secret", "signing_secret"})
REDACTED = "(redacted)"


@dataclass(frozen=True)
class Actor:
    user: User | None
    name: str
    via: str

    @classmethod
    def of(cls, request: Request) -> Actor:
        """The person behind an API request, and whether a session or which token spoke."""
        user = request.user if isinstance(request.user, User) else None
        prefix = getattr(request.auth, "prefix", None)
        via = f"token {prefix}" if prefix else "session"
        return cls(user, user.get_username() if user else "anonymous", via)

    @classmethod
    def command(cls, name: str | None = None) -> Actor:
        """A change made from the server's shell (a management command): by `name`, or by the
        system user who ran it (the one behind sudo, where it was used)."""
        return cls(None, name or os.environ.get("SUDO_USER") or getpass.getuser(), "command")


def plain(value: Any) -> Any:
    """The value as JSON stores it (dates as ISO text, UUIDs as text), secrets redacted."""
    if isinstance(value, dict):
        return {str(k): (REDACTED if str(k) in SECRET_KEYS else plain(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return DjangoJSONEncoder().default(value)


def changes(before: Any, after: Any, prefix: str = "") -> dict[str, list[Any]]:
    """{dotted field: [old, new]} for every leaf that differs; lists compare whole. An object
    created or deleted (None on one side) lists each of its fields."""
    if isinstance(before, dict) and after is None:
        after = {}
    if isinstance(after, dict) and before is None:
        before = {}
    if isinstance(before, dict) and isinstance(after, dict):
        diff: dict[str, list[Any]] = {}
        for key in sorted(set(before) | set(after), key=str):
            diff.update(changes(before.get(key), after.get(key), f"{prefix}{key}."))
        return diff
    if before == after:
        return {}
    return {prefix.rstrip(".") or "value": [before, after]}


def record(
    actor: Actor,
    action: AuditAction,
    object_type: AuditObject,
    object_key: Any,
    object_repr: str,
    before: Any = None,
    after: Any = None,
) -> AuditEntry | None:
    """Writes one audit row; an update that changed nothing leaves none."""
    old, new = plain(before), plain(after)
    diff = changes(old, new)
    if action == AuditAction.UPDATE and not diff:
        return None
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record runs inside the transaction of the change it records")
    return AuditEntry.objects.create(
        actor=actor.user,
        actor_name=actor.name[:150],
        via=actor.via[:40],
        action=action,
        object_type=object_type,
        object_key=str(object_key)[:64],
        object_repr=object_repr[:200],
        before=old,
        after=new,
        changes=diff,
    )
