"""The contract's JSON Schemas as OpenAPI components, so the API schema shows the payloads it
embeds (the analysis's ceilings and evidence) instead of "any JSON".

The contract is JSON Schema draft 2020-12; drf-spectacular writes OpenAPI 3.0, whose schema
objects are an older dialect: no type lists (a nullable type is `nullable: true`), no `const`,
no `$defs` (definitions live under #/components/schemas), and no siblings next to `$ref`.
`openapi_schema` converts one schema and refuses any keyword it does not know how to carry
over, so a schema change that OpenAPI 3.0 cannot say fails when the schema is generated
rather than silently describing something else.
"""

from __future__ import annotations

from typing import Any

from core import contract

DEFS_PREFIX = "#/$defs/"
COMPONENTS_PREFIX = "#/components/schemas/"
# Keywords whose value is carried over as it is.
PLAIN = frozenset(
    {
        "type",
        "format",
        "description",
        "title",
        "enum",
        "default",
        "required",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "multipleOf",
        "readOnly",
        "writeOnly",
        "deprecated",
    }
)
# Keywords that only identify or annotate a document.
DROPPED = frozenset({"$schema", "$id", "$comment"})
NULL = {"type": "null"}


def _ref(ref: str) -> str:
    if not ref.startswith(DEFS_PREFIX):
        raise ValueError(f"only references to this document's $defs become components, not {ref!r}")
    return COMPONENTS_PREFIX + ref.removeprefix(DEFS_PREFIX)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    # OpenAPI 3.0 ignores everything next to a $ref, nullable included: wrap it in allOf.
    if "$ref" in schema:
        return {"allOf": [{"$ref": schema["$ref"]}], "nullable": True}
    return {**schema, "nullable": True}


def openapi_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """One JSON Schema 2020-12 schema as an OpenAPI 3.0 schema object."""
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        if key in DROPPED:
            continue
        if key == "$ref":
            out["$ref"] = _ref(value)
        elif key == "type" and isinstance(value, list):
            types = [kind for kind in value if kind != "null"]
            if len(types) != 1:
                raise ValueError(f"OpenAPI 3.0 has no type union {value!r}")
            out["type"], nullable = types[0], len(types) < len(value)
        elif key == "const":
            out["enum"] = [value]
        elif key in ("anyOf", "oneOf"):
            branches = [branch for branch in value if branch != NULL]
            nullable = len(branches) < len(value)
            if len(branches) == 1:
                out.update(openapi_schema(branches[0]))
            else:
                out[key] = [openapi_schema(branch) for branch in branches]
        elif key in ("allOf",):
            out[key] = [openapi_schema(branch) for branch in value]
        elif key in ("items", "not"):
            out[key] = openapi_schema(value)
        elif key == "properties":
            out[key] = {name: openapi_schema(property_schema) for name, property_schema in value.items()}
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else openapi_schema(value)
        elif key in PLAIN:
            out[key] = value
        else:
            raise ValueError(f"no OpenAPI 3.0 equivalent for the keyword {key!r}")
    if "$ref" in out and len(out) > 1:
        # A $ref with a description (or a branch merged into a described property).
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return _nullable(out) if nullable else out


def openapi_components(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every $defs entry of a contract document as an OpenAPI component schema of the same name."""
    return {name: openapi_schema(schema) for name, schema in document.get("$defs", {}).items()}


def contract_components(name: str) -> dict[str, dict[str, Any]]:
    """The components of contract/<name>, for SPECTACULAR_SETTINGS["APPEND_COMPONENTS"]["schemas"]."""
    return openapi_components(contract.load(name))
