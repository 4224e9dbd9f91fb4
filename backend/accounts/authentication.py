"""Personal API tokens: `Authorization: Bearer fpt_...`, accepted by every user endpoint.

A token acts as its owner with the owner's role, and a read-scoped token only for safe
methods: it is refused here, before any view runs, so no view can forget to check. Tokens
need no CSRF header (a browser never sends them on its own).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.request import Request

from accounts.choices import TokenScope
from accounts.models import ApiToken
from accounts.services import authenticate_api_token

SCHEME = "Bearer"


def _bearer(request: Request) -> bool:
    return get_authorization_header(request).startswith(SCHEME.encode() + b" ")


class SessionOrBearerAuthentication(SessionAuthentication):
    """Django's session (with CSRF), first in the list. DRF answers a refused request with 401
    only when the first class names a scheme: a script that sent a bad token is told 401
    (Bearer), while a browser without a session keeps getting the 403 the UI expects."""

    def authenticate_header(self, request: Request) -> str | None:
        return SCHEME if _bearer(request) else None


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        header = get_authorization_header(request).decode("latin-1")
        scheme, _, value = header.partition(" ")
        if scheme != SCHEME:
            return None
        token = authenticate_api_token(value.strip())
        if token is None:
            raise exceptions.AuthenticationFailed("unknown, expired or revoked API token, or its owner is disabled")
        if token.scope == TokenScope.READ and request.method not in permissions.SAFE_METHODS:
            raise exceptions.PermissionDenied("this API token is read-only")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return SCHEME


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (fpt_...), made under API tokens in the UI. A read token is"
            " refused for anything but GET, HEAD and OPTIONS; either acts with its owner's role.",
        }


class SessionScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "accounts.authentication.SessionOrBearerAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}
