"""The one JSON parser of the API: strict JSON, bounded nesting, no NUL characters.

DRF's JSONParser lets through what PostgreSQL or Python then fail on with a 500: NaN and
Infinity (not JSON; jsonb refuses them), numbers beyond a double's range (1e400, which Python
reads as infinity), NUL characters (text and jsonb refuse them) and nesting deep enough to
exhaust the decoder's recursion. Each is a 400 here, before any view
runs, on every endpoint including the anonymous enrolment one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Deeper than any payload of the contract (a result batch nests about 8 levels).
MAX_DEPTH = 32


def _reject_constant(name: str) -> Any:
    raise ParseError(f"JSON parse error - {name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ParseError(f"JSON parse error - {text[:40]} is beyond the range of a double")
    return value


def check_document(document: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raises ParseError when the parsed document nests deeper than max_depth or holds a NUL."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                raise ParseError("JSON parse error - strings must not contain NUL (\\u0000) characters")
            continue
        if not isinstance(node, (dict, list)):
            continue
        if depth > max_depth:
            raise ParseError(f"JSON parse error - nested deeper than {max_depth} levels")
        if isinstance(node, Mapping):
            stack.extend((key, depth) for key in node)
            stack.extend((value, depth + 1) for value in node.values())
        else:
            stack.extend((item, depth + 1) for item in node)


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", "utf-8")
        try:
            text = stream.read().decode(encoding)
            document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        except RecursionError as exc:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        check_document(document)
        return document
