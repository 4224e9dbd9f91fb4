"""Strict JSON: what PostgreSQL and Python accept whole, refused with a clear message otherwise.

json.loads lets through what PostgreSQL or Python then fail on: NaN and Infinity (not JSON;
jsonb refuses them), numbers beyond a double's range (1e400, which Python reads as
infinity), NUL characters (text and jsonb refuse them) and nesting deep enough to exhaust
the decoder's recursion. The API's parser (core.api.parsers) and every file Fathom reads
(pSConfig templates) go through `loads`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

# Deeper than any payload of the contract (a result batch nests about 8 levels).
MAX_DEPTH = 32


class StrictJSONError(ValueError):
    """The text is not strict JSON; the message says why, after "JSON parse error - "."""


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(f"JSON parse error - {name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"JSON parse error - {text[:40]} is beyond the range of a double")
    return value


def check_document(document: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raises StrictJSONError when the document nests deeper than max_depth or holds a NUL."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                raise StrictJSONError("JSON parse error - strings must not contain NUL (\\u0000) characters")
            continue
        if not isinstance(node, (dict, list)):
            continue
        if depth > max_depth:
            raise StrictJSONError(f"JSON parse error - nested deeper than {max_depth} levels")
        if isinstance(node, Mapping):
            stack.extend((key, depth) for key in node)
            stack.extend((value, depth + 1) for value in node.values())
        else:
            stack.extend((item, depth + 1) for item in node)


def loads(data: bytes | str, encoding: str = "utf-8") -> Any:
    """The document in `data`, or StrictJSONError."""
    try:
        text = data.decode(encoding) if isinstance(data, bytes) else data
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except StrictJSONError:
        raise
    except RecursionError as exc:
        raise StrictJSONError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise StrictJSONError(f"JSON parse error - {exc}") from exc
    check_document(document)
    return document
