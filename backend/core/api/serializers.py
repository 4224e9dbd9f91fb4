"""Response shapes of the ground floor's own endpoint: the registered choice sets."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import choices
from core.serializers import ChoiceSerializer


def choices_serializer() -> type[serializers.Serializer[Any]]:
    """One list field per registered choice set, so the OpenAPI schema names every set."""
    fields: dict[str, Any] = {name: ChoiceSerializer(many=True) for name in choices.names()}
    return type("ChoicesSerializer", (serializers.Serializer,), fields)
