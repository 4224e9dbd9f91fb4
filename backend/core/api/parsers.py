"""The one JSON parser of the API: strict JSON (core.strict_json), bounded nesting, no NUL
characters. Each of those is a 400 here, before any view runs, on every endpoint including
the anonymous enrolment one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core import strict_json


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            return strict_json.loads(stream.read(), encoding)
        except strict_json.StrictJSONError as error:
            raise ParseError(str(error)) from error
