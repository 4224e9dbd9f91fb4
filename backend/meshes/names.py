"""The rule for mesh and test names, in one place: the models, the mesh document, the pSConfig
importer and (through the OpenAPI schema, held to it by a UI test) the mesh form all follow it.

A name is a slug (Django's SlugField: letters, digits, - and _) of at most NAME_MAX characters,
because URLs and plan ids are built from it; a mesh may not take a name that is an endpoint
under /meshes/."""

from __future__ import annotations

import re
from typing import Any

NAME_MAX = 63
NAME_PATTERN = re.compile(r"^[-a-zA-Z0-9_]+\Z")
# /meshes/<these>/ are endpoints, not meshes.
RESERVED_MESH_NAMES = frozenset({"preview"})


def valid_name(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= NAME_MAX and NAME_PATTERN.match(value) is not None


def name_from(text: str, fallback: str) -> str:
    """A valid name made from any text (another tool's name for a mesh or a test)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:NAME_MAX].strip("-")
    return cleaned or fallback


def unique_name(name: str, taken: set[str]) -> str:
    """NAME, or NAME-2, NAME-3... (still at most NAME_MAX long), whichever is not in TAKEN; it
    is added to TAKEN (which starts with RESERVED_MESH_NAMES for mesh names)."""
    candidate, number = name, 2
    while candidate in taken:
        suffix = f"-{number}"
        candidate, number = name[: NAME_MAX - len(suffix)] + suffix, number + 1
    taken.add(candidate)
    return candidate
