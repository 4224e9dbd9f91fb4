"""The strict JSON parser and the contract's date-time format, on their own."""

from __future__ import annotations

import pytest

from core.contract import FORMATS
from core.strict_json import StrictJSONError, check_document, loads


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
    with pytest.raises(StrictJSONError, match="nested deeper than 4 levels"):
        check_document({"a": [{"b": [1, 2, {"c": "d"}]}]}, max_depth=4)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"a": NaN}', "NaN is not JSON"),
        (b'{"a": 1e400}', "1e400 is beyond the range of a double"),
        (b'{"a": "x\\u0000y"}', "must not contain NUL"),
        (b"[" * 5000 + b"]" * 5000, "nested deeper than 32 levels"),
        (b"\xff\xfe", "JSON parse error"),
        (b'{"a": ', "JSON parse error"),
    ],
)
def test_loads_refuses_what_postgresql_or_python_would_fail_on(data: bytes, message: str) -> None:
    with pytest.raises(StrictJSONError, match=message):
        loads(data)


def test_loads_reads_strict_json() -> None:
    assert loads(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    assert loads('{"b": null}') == {"b": None}
