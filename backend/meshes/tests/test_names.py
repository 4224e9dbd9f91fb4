"""The one rule for mesh and test names (meshes/names.py)."""

from __future__ import annotations

import pytest

from meshes.models import Mesh, MeshTest
from meshes.names import NAME_MAX, RESERVED_MESH_NAMES, name_from, unique_name, valid_name


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("lhc-one_2", True),
        ("x" * NAME_MAX, True),
        ("x" * (NAME_MAX + 1), False),
        ("", False),
        ("two words", False),
        ("dots.are.not", False),
        ("trailing\n", False),
        (None, False),
        (42, False),
    ],
)
def test_a_name_is_a_slug_of_at_most_63_characters(value: object, valid: bool) -> None:
    assert valid_name(value) is valid


def test_the_models_take_the_same_length() -> None:
    for model in (Mesh, MeshTest):
        assert model._meta.get_field("name").max_length == NAME_MAX


@pytest.mark.parametrize(
    ("text", "made"),
    [
        ("LHCONE Europe: RTT", "LHCONE-Europe-RTT"),
        ("--ps/mesh--", "ps-mesh"),
        ("***", "fallback"),
        ("a" * 70 + " b", "a" * NAME_MAX),
    ],
)
def test_a_name_made_from_other_text_is_valid(text: str, made: str) -> None:
    assert name_from(text, "fallback") == made
    assert valid_name(made)


def test_a_unique_name_skips_taken_and_reserved_names_and_keeps_the_length() -> None:
    taken = set(RESERVED_MESH_NAMES) | {"mesh"}
    assert unique_name("preview", taken) == "preview-2"
    assert unique_name("mesh", taken) == "mesh-2"
    assert unique_name("mesh", taken) == "mesh-3"
    long = "m" * NAME_MAX
    assert unique_name(long, {long}) == "m" * (NAME_MAX - 2) + "-2"
