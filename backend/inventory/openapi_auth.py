"""Describes the agent authentication scheme in the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema


class AgentAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "inventory.authentication.AgentAuthentication"
    name = "agentCredential"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Per-agent credential from enrolment: `Agent <agent_id>:<credential>`.",
        }
