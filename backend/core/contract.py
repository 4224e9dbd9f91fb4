"""The JSON Schemas the agent, the backend and the UI share (the repository's contract/).

The backend validates with them: result batches at ingest, test options when a mesh is
saved, host facts when an agent reports them, analysis payloads before they are stored.
Schemas are read once and compiled with format checking on (a bad date is a 400, not a 500).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

# backend/core/contract.py -> the repository root; the image copies contract/ beside backend/.
CONTRACT_DIR = Path(os.environ.get("FATHOM_CONTRACT_DIR") or Path(__file__).resolve().parents[2] / "contract")
EXAMPLES_DIR = CONTRACT_DIR / "examples"


@cache
def load(name: str) -> dict[str, Any]:
    """The schema document contract/<name>, e.g. "result-batch.v1.schema.json"."""
    schema: dict[str, Any] = json.loads((CONTRACT_DIR / name).read_text())
    return schema


@cache
def _registry() -> Registry[Any]:
    """Every schema of the contract under its $id, so documents can $ref each other."""
    resources = []
    for path in sorted(CONTRACT_DIR.rglob("*.schema.json")):
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


@cache
def validator(name: str, definition: str | None = None) -> Draft202012Validator:
    """A validator for a whole schema document, or for one of its $defs."""
    document = load(name)
    schema: dict[str, Any] = document if definition is None else {"$ref": f"{document['$id']}#/$defs/{definition}"}
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())


def example(relative: str) -> Any:
    """One example file under contract/examples/."""
    return json.loads((EXAMPLES_DIR / relative).read_text())
