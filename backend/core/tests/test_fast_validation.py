"""Ingest trusts jsonschema-rs's yes and asks jsonschema why on a no: the two must give the
same verdict on everything an agent can send. Held on every contract example and on every
example with each of its values replaced by a wrong one."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from core import contract

SCHEMA = "result-batch.v1.schema.json"
WRONG_VALUES: list[Any] = [
    None,
    "x",
    "",
    -1,
    0.5,
    1e300,
    2**64,
    -(2**70),
    True,
    [],
    {},
    "2026-02-30T00:00:00Z",
    "2026-11-25T23:59:60Z",
    "2026-11-25t10:00:00z",
    "2026-11-25T10:00:00",
    "0B7E4C1D-2F3A-4B5C-8D9E-0A1B2C3D4E5F",
    "0b7e4c1d2f3a4b5c8d9e0a1b2c3d4e5f",
    "a\u0000b",
]


def batches() -> Iterator[tuple[str, Any]]:
    for path in sorted((contract.EXAMPLES_DIR / "result-batch").rglob("*.json")):
        document = json.loads(path.read_text())
        yield path.name, document.get("batch", document)


# The first items of a list stand for the rest.
FIRST_ITEMS = 3


def leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:FIRST_ITEMS]):
            yield from leaves(value, (*path, index))
    else:
        yield path


def first_items(node: Any) -> Any:
    """The document with every list cut to the items leaves() changes: the reference validator
    then reads a few dozen intervals, not hundreds, for each of the ~2,500 wrong values."""
    if isinstance(node, dict):
        return {key: first_items(value) for key, value in node.items()}
    if isinstance(node, list):
        return [first_items(value) for value in node[:FIRST_ITEMS]]
    return node


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


def agree(document: Any) -> bool:
    slow = contract.validator(SCHEMA).is_valid(document)
    fast = contract.fast_validator(SCHEMA).is_valid(document)
    return bool(slow == fast)


@pytest.mark.parametrize(("name", "batch"), list(batches()))
def test_both_validators_agree_on_the_example_and_on_every_wrong_value_in_it(name: str, batch: Any) -> None:
    assert agree(batch), name
    # Shortened lists where the schema allows them (a minItems may not): the same leaves change.
    short = first_items(batch)
    document = short if contract.validator(SCHEMA).is_valid(short) and agree(short) else batch
    disagreements = [
        (path, value)
        for path in leaves(document)
        for value in WRONG_VALUES
        if path and not agree(replaced(document, path, value))
    ]
    assert not disagreements, disagreements[:5]
