"""Agent look-ups the other apps' API views share."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError

from inventory.models import Agent


def path_agents(params: dict[str, Any]) -> tuple[Agent, Agent]:
    """The source and destination agents a path query names; 400 when either is unknown."""
    agents = Agent.objects.in_bulk([params["source"], params["destination"]])
    for key in ("source", "destination"):
        if params[key] not in agents:
            raise ValidationError({key: [f"unknown agent {params[key]}"]})
    return agents[params["source"]], agents[params["destination"]]
