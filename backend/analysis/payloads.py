"""The analysis's JSON payloads held to their one definition, contract/analysis.v1.schema.json.

The services check what they store (a run's ceilings, inputs, interval stats and evidence, a
sweep's modes, a finding's evidence) and the API what it computes for a response. A payload
that breaks the contract is a bug in the analysis: it raises, so it reaches neither a table
nor the UI (the periodic task logs it and goes on with the other runs).
"""

from __future__ import annotations

from typing import Any

from jsonschema.exceptions import best_match

from core import contract

SCHEMA = "analysis.v1.schema.json"


class PayloadError(ValueError):
    """A payload that does not match its definition in the contract."""


def checked(definition: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload itself when it matches $defs/<definition>; PayloadError otherwise."""
    error = best_match(contract.validator(SCHEMA, definition).iter_errors(payload))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise PayloadError(f"{definition} breaks {SCHEMA} at {where}: {error.message}")
    return payload
