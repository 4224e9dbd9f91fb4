"""People, their roles and their API tokens: plain functions the views call."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from accounts.choices import TokenScope
from accounts.models import ApiToken
from core.roles import Role, apply_role, flag_role, role_of

API_TOKEN_PREFIX = "fpt_"  # noqa: S105 - a marker, not a secret
# last_used_at is written at most this often per token, not on every request.
LAST_USED_RESOLUTION_S = 60


class AccountError(ValueError):
    """A change to people or tokens that is refused; field names the input it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedApiToken:
    token: ApiToken
    plaintext: str


def create_api_token(user: User, name: str, scope: TokenScope, expires_at: datetime | None) -> IssuedApiToken:
    now = timezone.now()
    if expires_at is not None and expires_at <= now:
        raise AccountError("expires_at", "must be in the future")
    longest = now + timedelta(days=settings.API_TOKEN_MAX_DAYS)
    if expires_at is not None and expires_at > longest + timedelta(days=1):
        raise AccountError(
            "expires_at", f"at most {settings.API_TOKEN_MAX_DAYS} days ahead (this site's FATHOM_API_TOKEN_MAX_DAYS)"
        )
    # None is the longest allowed; a day past it (a browser's clock ahead of ours) is that too.
    expires_at = longest if expires_at is None else min(expires_at, longest)
    plaintext = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        token_sha256=token_digest(plaintext),
        prefix=plaintext[:12],
        scope=scope,
        created_at=now,
        expires_at=expires_at,
    )
    return IssuedApiToken(token, plaintext)


def revoke_api_token(token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def authenticate_api_token(plaintext: str, now: datetime | None = None) -> ApiToken | None:
    """The usable token with this text whose owner is active, or None."""
    if not plaintext.startswith(API_TOKEN_PREFIX) or len(plaintext) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(token_sha256=token_digest(plaintext)).first()
    now = now or timezone.now()
    if token is None or not token.is_usable(now) or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > timedelta(seconds=LAST_USED_RESOLUTION_S):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def person_snapshot(user: User) -> dict[str, Any]:
    """A person as the audit log keeps them: never a password or its hash."""
    return {"username": user.username, "email": user.email, "role": flag_role(user), "is_active": user.is_active}


def _check_keeps_an_admin(user: User, new_role: Role | None, active: bool) -> None:
    """Refuses the change that would leave no active admin: nobody could manage people."""
    if role_of(user) != Role.ADMIN:
        return
    if new_role == Role.ADMIN and active:
        return
    # Counted under a lock on the admins, so two admins demoting each other at once cannot both pass.
    admins = list(User.objects.select_for_update().filter(is_active=True, is_superuser=True).values_list("pk"))
    if len(admins) <= 1:
        field = "is_active" if not active else "role"
        raise AccountError(field, "this is the last active admin: make another person admin first")


@transaction.atomic
def create_person(username: str, password: str, role: Role, email: str = "") -> User:
    if User.objects.filter(username__iexact=username).exists():
        raise AccountError("username", "a person with this username exists")
    user = User(username=username, email=email)
    user.set_password(password)
    apply_role(user, role)
    user.save()
    return user


@transaction.atomic
def update_person(
    user: User,
    role: Role | None = None,
    is_active: bool | None = None,
    email: str | None = None,
    password: str | None = None,
) -> User:
    new_role = role if role is not None else flag_role(user)
    active = is_active if is_active is not None else user.is_active
    _check_keeps_an_admin(user, new_role, active)
    if role is not None:
        apply_role(user, role)
    if is_active is not None:
        user.is_active = is_active
    if email is not None:
        user.email = email
    if password is not None:
        user.set_password(password)
    user.save()
    if not user.is_active or password is not None:
        # A disabled person's scripts stop too, and so do the scripts of one whose password
        # was reset: whoever had the old one may have made tokens with it.
        ApiToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
    return user
