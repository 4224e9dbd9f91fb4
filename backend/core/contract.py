"""The JSON Schemas the agent, the backend and the UI share (the repository's contract/).

The backend validates with them: result batches at ingest, test options when a mesh is
saved, host facts when an agent reports them, analysis payloads before they are stored.
Schemas are read once and compiled with format checking on (a bad date is a 400, not a 500).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID

import jsonschema_rs
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

# backend/core/contract.py -> the repository root; the image copies contract/ beside backend/.
CONTRACT_DIR = Path(os.environ.get("FATHOM_CONTRACT_DIR") or Path(__file__).resolve().parents[2] / "contract")
EXAMPLES_DIR = CONTRACT_DIR / "examples"


# RFC 3339 date-time, the shape the contract means by "format": "date-time". jsonschema
# checks that format only when an optional package is installed; this checker is ours.
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
FORMATS = FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def is_date_time(value: object) -> bool:
    """A string in RFC 3339 form that is a real moment (no 13th month, no 25th hour)."""
    if not isinstance(value, str):
        return True  # the "type" keyword judges non-strings
    if not RFC3339.match(value):
        return False
    # Python's parser takes at most microseconds; leap seconds (:60) are not moments it knows.
    head, _, rest = value.partition(".")
    if rest:
        digits = re.match(r"\d+", rest)
        assert digits is not None
        value = f"{head}.{digits.group()[:6]}{rest[digits.end() :]}"
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


@cache
def load(name: str) -> dict[str, Any]:
    """The schema document contract/<name>, e.g. "result-batch.v1.schema.json"."""
    schema: dict[str, Any] = json.loads((CONTRACT_DIR / name).read_text())
    return schema


@cache
def _registry() -> Registry[Any]:
    """Every schema of the contract under its $id, so documents can $ref each other."""
    resources = []
    for path in _schema_paths():
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


@cache
def validator(name: str, definition: str | None = None) -> Draft202012Validator:
    """A validator for a whole schema document, or for one of its $defs."""
    document = load(name)
    schema: dict[str, Any] = document if definition is None else {"$ref": f"{document['$id']}#/$defs/{definition}"}
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(schema, registry=_registry(), format_checker=FORMATS)


def _is_format(check: Any) -> Any:
    """One of jsonschema's format checks as the yes/no function jsonschema-rs calls."""

    def holds(value: str) -> bool:
        try:
            return bool(check(value))
        except ValueError:
            return False

    return holds


def _is_uuid(value: str) -> bool:
    """jsonschema's "uuid" check: a UUID in its hyphenated form."""
    UUID(value)
    return all(value[position] == "-" for position in (8, 13, 18, 23))


@cache
def fast_validator(name: str) -> jsonschema_rs.Validator:
    """The document compiled by jsonschema-rs, with the same format checks: a hundred times
    faster on a large batch, but it only says yes or no. Callers run `validator` for the
    errors a person reads when it says no; a test holds the two to the same verdicts."""
    documents = [json.loads(path.read_text()) for path in _schema_paths()]
    return jsonschema_rs.Draft202012Validator(
        load(name),
        registry=jsonschema_rs.Registry([(document["$id"], document) for document in documents]),
        formats={"date-time": _is_format(is_date_time), "uuid": _is_format(_is_uuid)},
        validate_formats=True,
    )


def _schema_paths() -> list[Path]:
    return sorted(CONTRACT_DIR.rglob("*.schema.json"))


def example(relative: str) -> Any:
    """One example file under contract/examples/."""
    return json.loads((EXAMPLES_DIR / relative).read_text())
