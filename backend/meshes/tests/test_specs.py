"""The server's view of each test kind's options is the contract's (contract/test-options/):
the agent's Go structs are held to the same schemas by agents/internal/contract."""

from __future__ import annotations

from typing import Any

import pytest

from core import contract
from measurements.choices import TestType as Kind
from meshes.specs import OPTIONS, TEST_KINDS, SpecError, normalize_spec


def schema_of(kind: str) -> dict[str, Any]:
    return contract.load(f"test-options/{kind}.v1.schema.json")


def boundary_values(prop: dict[str, Any]) -> list[tuple[Any, bool]]:
    """(value, valid) at and just beyond the property's bounds and enum."""
    step = 1 if prop.get("type") == "integer" or "integer" in prop.get("type", []) else 1e-3
    ranged = next((alt for alt in prop.get("anyOf", []) if "minimum" in alt), prop)
    zero_allowed = any(alt.get("const") == 0 for alt in prop.get("anyOf", []))
    values: list[tuple[Any, bool]] = []
    if "minimum" in ranged:
        values.append((ranged["minimum"], True))
        below = ranged["minimum"] - step
        values.append((below, zero_allowed and below == 0))
    if "maximum" in ranged:
        values += [(ranged["maximum"], True), (ranged["maximum"] + step, False)]
    values += [(choice, True) for choice in prop.get("enum", [])] + (
        [("not-in-the-contract", False)] * ("enum" in prop)
    )
    return values


def test_test_kinds_are_the_contracts() -> None:
    assert sorted(Kind.values) == sorted(TEST_KINDS)


@pytest.mark.parametrize("kind", TEST_KINDS)
def test_options_fields_and_defaults_are_the_contracts(kind: str) -> None:
    properties = schema_of(kind)["properties"]
    assert set(OPTIONS[kind]) == set(properties)
    settable = {name for name, prop in properties.items() if not prop.get("readOnly")}
    defaults = normalize_spec(kind, {})
    assert set(defaults) == settable
    assert all(defaults[name] == properties[name]["default"] for name in settable)


@pytest.mark.parametrize("kind", TEST_KINDS)
def test_every_bound_and_enum_value_of_the_contract_holds(kind: str) -> None:
    base: dict[str, Any] = {}
    for name, prop in schema_of(kind)["properties"].items():
        if prop.get("readOnly"):
            continue
        for value, valid in boundary_values(prop):
            spec = {**base, name: value}
            if kind == Kind.FLOWSWEEP and spec.get("protocol") == "tcp":
                spec["port"] = spec.get("port") or 22
            try:
                normalize_spec(kind, spec)
                accepted = True
            except SpecError as error:
                accepted = name not in error.errors
            assert accepted == valid, f"{kind}.{name} = {value!r}: accepted {accepted}, contract says {valid}"


@pytest.mark.parametrize(
    ("kind", "spec", "field", "message"),
    [
        ("ping", {"interval_s": 0.1}, "interval_s", "must be between 0.2 and 60"),
        ("ping", {"count": 5.0}, "count", "must be a whole number"),
        ("ping", {"ttl": "64"}, "ttl", "must be a whole number"),
        ("throughput", {"mss": 50}, "mss", "must be between 88 and 65495 (or 0)"),
        ("throughput", {"congestion": "BBR!"}, "congestion", "must be a congestion control name"),
        ("throughput", {"path_rtt_ms": 8}, "path_rtt_ms", "is set by the server, not by a mesh"),
        ("throughput", {"udp": True}, "bitrate_bps", "a UDP test needs a target rate"),
        ("flowsweep", {"protocol": "sctp"}, "protocol", "must be one of udp, tcp"),
        ("trace", {"wait_s": float("nan")}, "wait_s", "must be a number"),
        ("trace", {"src_port_base": 40000}, "src_port_base", "is set by the server"),
        ("trace", {"hops": 3}, "hops", "unknown option for a trace test"),
        ("latency", {"packet_timeout_s": 10, "report_interval_s": 10}, "packet_timeout_s", "shorter than report"),
        ("latency", {"size_bytes": 40}, "size_bytes", "must be between 41 and 1472"),
    ],
)
def test_bad_options_get_a_field_level_message(kind: str, spec: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        normalize_spec(kind, spec)
    assert message in caught.value.errors[field]
