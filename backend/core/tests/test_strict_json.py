"""The strict JSON parser and the contract's date-time format, on their own."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import ParseError

from core.api.parsers import check_document
from core.contract import FORMATS


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-11-24T18:00:00Z", True),
        ("2026-11-24t18:00:00z", True),
        ("2026-11-24T18:00:00.123456789+02:00", True),
        ("2026-11-24T18:00:00.5-05:30", True),
        ("2026-13-01T00:00:00Z", False),
        ("2026-11-24T24:00:00Z", False),
        ("2026-11-24T18:00:00", False),
        ("2026-11-24", False),
        ("", False),
    ],
)
def test_date_time_format(value: str, ok: bool) -> None:
    assert FORMATS.conforms(value, "date-time") is ok


def test_depth_is_counted_in_containers() -> None:
    check_document({"a": [{"b": [1, 2, {"c": "d"}]}]}, max_depth=5)
    with pytest.raises(ParseError):
        check_document({"a": [{"b": [1, 2, {"c": "d"}]}]}, max_depth=4)
