"""Ingest knows every test kind of the contract, each by its result section."""

from __future__ import annotations

from core import contract
from measurements.choices import TestType as Kind
from measurements.kinds import REGISTRY


def test_the_registry_has_one_entry_per_contract_test_kind() -> None:
    kinds = contract.load("plan.v1.schema.json")["$defs"]["TestKind"]["enum"]
    assert sorted(REGISTRY) == sorted(kinds) == sorted(Kind.values)


def test_each_kind_reads_the_result_section_the_contract_gives_it() -> None:
    result = contract.load("result-batch.v1.schema.json")["$defs"]["result"]["properties"]
    assert all(kind.section in result for kind in REGISTRY.values())
