"""The registry of choice sets the UI renders with their labels and colours.

Each app registers its own sets in its choices module, so no app has to know every other
app's choices (NetBox's ChoiceSet registry); the choices endpoint lists what is registered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import TextChoices


@dataclass(frozen=True)
class ChoiceSet:
    choices: type[TextChoices]
    colors: Mapping[Any, str]


_REGISTRY: dict[str, ChoiceSet] = {}


def register(name: str, choices: type[TextChoices], colors: Mapping[Any, str]) -> None:
    """Adds a choice set; every member needs a colour, and a name is registered once."""
    missing = [member.value for member in choices if member not in colors]
    if missing:
        raise ValueError(f"choice set {name!r} has no colour for {', '.join(missing)}")
    existing = _REGISTRY.get(name)
    if existing is not None and existing.choices is not choices:
        raise ValueError(f"choice set {name!r} is already registered by {existing.choices.__module__}")
    _REGISTRY[name] = ChoiceSet(choices, colors)


def names() -> list[str]:
    return sorted(_REGISTRY)


def all_choices() -> dict[str, list[dict[str, str]]]:
    return {
        name: [
            {"value": member.value, "label": member.label, "color": _REGISTRY[name].colors[member]}
            for member in _REGISTRY[name].choices
        ]
        for name in names()
    }
