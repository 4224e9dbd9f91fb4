"""The server's host-facts serializer accepts what contract/host-facts.v1.schema.json does."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import contract
from inventory.api.serializers import HostFactsSerializer, InterfaceSerializer
from inventory.choices import REPORTED_SYSCTLS


def assert_fields_match(serializer: serializers.Serializer[Any], schema: dict[str, Any]) -> None:
    properties = schema["properties"]
    assert set(serializer.fields) == set(properties)
    for name, field in serializer.fields.items():
        prop = properties[name]
        longest = prop.get("maxItems") if isinstance(field, serializers.ListField) else prop.get("maxLength")
        assert getattr(field, "max_length", None) == longest, name
        ranged = prop if "minimum" in prop or "maximum" in prop else {}
        assert getattr(field, "min_value", None) == ranged.get("minimum"), name
        assert getattr(field, "max_value", None) == ranged.get("maximum"), name
        assert field.required == (name in schema.get("required", [])), name


def test_host_facts_serializer_is_the_contracts() -> None:
    schema = contract.load("host-facts.v1.schema.json")
    assert_fields_match(HostFactsSerializer(), schema)
    assert_fields_match(InterfaceSerializer(), schema["$defs"]["Interface"])
    assert tuple(schema["$defs"]["ReportedSysctl"]["enum"]) == REPORTED_SYSCTLS


def test_the_contract_refuses_what_the_serializer_refuses() -> None:
    validator = contract.validator("host-facts.v1.schema.json")
    good = {"collected_at": "2026-11-24T07:00:00Z", "sysctls": {"net.core.rmem_max": "212992"}, "cpus": 4}
    assert validator.is_valid(good) and HostFactsSerializer(data=good).is_valid()
    bad_facts: list[dict[str, Any]] = [
        {**good, "sysctls": {"net.ipv4.tcp_mem": "1 2 3"}},
        {**good, "cpus": 0},
        {**good, "colour": "blue"},
        {"sysctls": {}},
    ]
    for bad in bad_facts:
        assert not validator.is_valid(bad) and not HostFactsSerializer(data=bad).is_valid(), bad
