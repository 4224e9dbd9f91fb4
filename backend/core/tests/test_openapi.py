"""JSON Schema 2020-12 from the contract turned into OpenAPI 3.0 components."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core import contract
from core.openapi import contract_components, openapi_components, openapi_schema


def test_a_nullable_type_list_becomes_nullable() -> None:
    assert openapi_schema({"type": ["number", "null"], "minimum": 0}) == {
        "type": "number",
        "nullable": True,
        "minimum": 0,
    }
    assert openapi_schema({"type": ["string"]}) == {"type": "string"}


def test_references_point_at_components_and_keep_their_siblings_in_all_of() -> None:
    assert openapi_schema({"$ref": "#/$defs/CeilingSet"}) == {"$ref": "#/components/schemas/CeilingSet"}
    assert openapi_schema({"$ref": "#/$defs/Limit", "description": "the smallest term"}) == {
        "allOf": [{"$ref": "#/components/schemas/Limit"}],
        "description": "the smallest term",
    }


def test_a_reference_or_null_becomes_a_nullable_all_of() -> None:
    nullable_ref = {"anyOf": [{"$ref": "#/$defs/CeilingSet"}, {"type": "null"}]}
    assert openapi_schema(nullable_ref) == {"allOf": [{"$ref": "#/components/schemas/CeilingSet"}], "nullable": True}
    assert openapi_schema({**nullable_ref, "description": "at the RTT under load"}) == {
        "allOf": [{"$ref": "#/components/schemas/CeilingSet"}],
        "description": "at the RTT under load",
        "nullable": True,
    }
    assert openapi_schema({"oneOf": [{"type": "string"}, {"type": "null"}]}) == {"type": "string", "nullable": True}


def test_unions_const_and_nesting_are_converted_all_the_way_down() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["terms", "kind"],
        "properties": {
            "terms": {"type": "array", "items": {"type": ["integer", "null"]}},
            "kind": {"const": "route"},
            "extra": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Term"}},
            "either": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        },
    }
    assert openapi_schema(schema) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["terms", "kind"],
        "properties": {
            "terms": {"type": "array", "items": {"type": "integer", "nullable": True}},
            "kind": {"enum": ["route"]},
            "extra": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/Term"}},
            "either": {"anyOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]},
        },
    }


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": ["string", "number"]}, "type union"),
        ({"$ref": "other.v1.schema.json#/$defs/X"}, "only references to this document"),
        ({"type": "number", "exclusiveMinimum": 0}, "exclusiveMinimum"),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
        ({"properties": {"deep": {"unevaluatedProperties": False}}}, "unevaluatedProperties"),
    ],
)
def test_what_openapi_3_0_cannot_say_is_refused(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        openapi_schema(schema)


def test_a_document_s_defs_become_components_of_the_same_name() -> None:
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://fathom.invalid/contract/x.v1.schema.json",
        "$defs": {"Term": {"type": "object", "$comment": "dropped", "properties": {"rate_bps": {"type": "number"}}}},
    }
    assert openapi_components(document) == {"Term": {"type": "object", "properties": {"rate_bps": {"type": "number"}}}}
    assert openapi_components({"type": "object"}) == {}


def test_the_analysis_contract_converts_completely() -> None:
    document = contract.load("analysis.v1.schema.json")
    components = contract_components("analysis.v1.schema.json")
    assert list(components) == list(document["$defs"])
    text = json.dumps(components)
    assert '"$defs' not in text and '"null"' not in text and '"const":' not in text
    refs = {line.split('"')[0] for line in text.split('"$ref": "#/components/schemas/')[1:]}
    assert refs <= set(components)
