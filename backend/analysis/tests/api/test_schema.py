"""The analysis API's OpenAPI schema shows every field: its JSON payloads are the contract's."""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular.generators import SchemaGenerator

from analysis.payloads import SCHEMA
from core import contract

# The analysis responses and the contract $defs behind each of their JSON fields.
CONTRACT_FIELDS = {
    ("RunAnalysis", "ceilings"): "RunCeilings",
    ("RunAnalysis", "evidence"): "RunEvidence",
    ("RunAnalysis", "inputs"): "RunInputs",
    ("RunAnalysis", "interval_stats"): "IntervalStats",
    ("PathAnalysis", "ceilings_now"): "CeilingsNow",
    ("RttMode", "ceiling"): "CeilingSet",
    ("PathModes", "time_modes"): "TimeModes",
    ("Finding", "evidence"): "FindingEvidence",
}
RESPONSES = ("PathAnalysis", "RunAnalysis", "PathModes", "RttMode", "Dip", "Finding", "MeshGrid", "GridCell")


@cache
def components() -> dict[str, Any]:
    generator = SchemaGenerator()  # type: ignore[no-untyped-call]  # drf-spectacular ships no annotations here
    schema: dict[str, Any] = generator.get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    return dict(schema["components"]["schemas"])


def referenced(property_schema: dict[str, Any]) -> str | None:
    """The component a property points at, directly or through allOf (nullable, described)."""
    ref = property_schema.get("$ref") or next(
        (branch["$ref"] for branch in property_schema.get("allOf", []) if "$ref" in branch), None
    )
    return ref.removeprefix("#/components/schemas/") if ref else None


def test_every_contract_definition_is_a_component_as_converted() -> None:
    definitions = contract.load(SCHEMA)["$defs"]
    assert set(definitions) <= set(components())
    assert components()["CeilingTerm"]["properties"]["rate_bps"] == {"type": "number", "minimum": 0, "nullable": True}


def test_json_fields_point_at_their_contract_definitions() -> None:
    for (component, field), definition in CONTRACT_FIELDS.items():
        assert referenced(components()[component]["properties"][field]) == definition, (component, field)
    nullable = components()["PathAnalysis"]["properties"]["ceilings_now"]
    assert nullable["nullable"] is True and nullable["description"]


def test_no_analysis_response_field_is_untyped() -> None:
    for component in RESPONSES:
        for field, schema in components()[component]["properties"].items():
            shown = {key for key in schema if key not in ("description", "nullable", "readOnly")}
            assert shown, f"{component}.{field} says nothing about its shape"
