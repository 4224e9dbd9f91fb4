"""The server's host-facts serializer accepts what contract/host-facts.v1.schema.json does."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import contract
from inventory.api.serializers import ClockSerializer, HostFactsSerializer, InterfaceSerializer
from inventory.choices import CLOCK_SOURCES, REPORTED_SYSCTLS


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
    assert_fields_match(ClockSerializer(), schema["$defs"]["Clock"])
    assert tuple(schema["$defs"]["ReportedSysctl"]["enum"]) == REPORTED_SYSCTLS
    source = ClockSerializer().fields["source"]
    assert isinstance(source, serializers.ChoiceField)
    assert set(source.choices) == set(CLOCK_SOURCES) == {"kernel", "shared"}


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


CLOCK = {"synchronized": True, "max_error_ms": 0.4, "source": "kernel", "readable": True}


def test_clocks_the_contract_accepts_the_serializer_accepts() -> None:
    validator = contract.validator("host-facts.v1.schema.json")
    clocks: list[dict[str, Any]] = [
        CLOCK,
        {**CLOCK, "max_error_ms": 16000},
        {**CLOCK, "max_error_ms": 0},
        {"synchronized": True, "max_error_ms": 0.001, "source": "shared", "readable": True},
        {"synchronized": False, "max_error_ms": None, "source": "kernel", "readable": False},
    ]
    for clock in clocks:
        facts = {"collected_at": "2026-11-24T07:00:00Z", "clock": clock}
        assert validator.is_valid(facts) and HostFactsSerializer(data=facts).is_valid(), clock


def test_malformed_clocks_are_refused_by_both() -> None:
    validator = contract.validator("host-facts.v1.schema.json")
    clocks: list[Any] = [
        {**CLOCK, "source": "gps"},
        {**CLOCK, "max_error_ms": -1},
        {**CLOCK, "max_error_ms": 16000.5},
        {**CLOCK, "max_error_ms": "0.4"},
        {**CLOCK, "max_error_ms": True},
        {**CLOCK, "synchronized": "yes"},
        {**CLOCK, "synchronized": 1},
        {**CLOCK, "readable": None},
        {**CLOCK, "offset_ms": 3},
        {key: value for key, value in CLOCK.items() if key != "max_error_ms"},
        {key: value for key, value in CLOCK.items() if key != "readable"},
        "synchronized",
        None,
    ]
    for clock in clocks:
        facts = {"collected_at": "2026-11-24T07:00:00Z", "clock": clock}
        assert not validator.is_valid(facts) and not HostFactsSerializer(data=facts).is_valid(), clock
