"""Agent authentication: `Authorization: Agent <agent_id>:<secret>`.

Agent endpoints use only this class and user endpoints only sessions, so an agent's
credential never opens the UI's API and a browser session never speaks for an agent.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request
from rest_framework.views import APIView

from inventory.models import Agent
from inventory.services import authenticate_agent, touch_last_seen

SCHEME = "Agent"


class AgentPrincipal:
    """request.user for an authenticated agent: authenticated, never staff."""

    is_authenticated = True
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def __str__(self) -> str:
        return f"agent {self.agent.name}"


class AgentAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[AgentPrincipal, Agent] | None:
        header = get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        if scheme != SCHEME:
            return None
        agent_id, sep, secret = value.strip().partition(":")
        if not sep or not agent_id or not secret:
            raise exceptions.AuthenticationFailed("malformed Agent credentials: expected 'Agent <agent_id>:<secret>'")
        agent = authenticate_agent(agent_id, secret)
        if agent is None:
            raise exceptions.AuthenticationFailed(
                "unknown agent, wrong credential, or a revoked or decommissioned agent"
            )
        touch_last_seen(agent, timezone.now(), request.META)
        return AgentPrincipal(agent), agent

    def authenticate_header(self, request: Request) -> str:
        return SCHEME


class IsAgent(permissions.BasePermission):
    message = "agent credentials required"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, Agent)


def request_agent(request: Request) -> Agent:
    """The authenticated agent of a view guarded by IsAgent."""
    agent: Any = request.auth
    assert isinstance(agent, Agent)
    return agent
