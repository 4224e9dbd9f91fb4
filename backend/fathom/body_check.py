"""Caddy's forward_auth before it holds a request body (deploy/Caddyfile): 204 when the request
carries a valid credential of any kind, 401 otherwise. A body claiming credentials is buffered
only once they are checked, so a stranger who adds "Authorization: Agent x" or a made-up
session cookie to a large upload is refused without its body ever being read.

The request that follows authenticates again, fully (scopes, roles, CSRF): this says only
that the sender is somebody, so the proxy may hold their body.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from accounts.services import authenticate_api_token
from inventory.services import authenticate_agent
from perfsonar.tokens import node_of_token


def has_credential(request: HttpRequest) -> bool:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    value = value.strip()
    if scheme == "Agent":
        agent_id, _, secret = value.partition(":")
        return bool(agent_id and secret) and authenticate_agent(agent_id, secret) is not None
    if scheme == "Bearer":
        return node_of_token(value) is not None or authenticate_api_token(value) is not None
    return bool(request.user.is_authenticated)


@require_GET
def body_check(request: HttpRequest) -> HttpResponse:
    return HttpResponse(status=204 if has_credential(request) else 401)
