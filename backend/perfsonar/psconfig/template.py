"""pSConfig templates in: read from a file, a URL or a parsed body, checked against pSConfig's
published JSON Schema, and their template variables (`{% address[0] %}`) told apart.

Every failure is a TemplateError whose message says what is wrong and where, so an import
stops before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import urllib3
from django.conf import settings
from jsonschema import Draft4Validator
from jsonschema.exceptions import ValidationError as SchemaError

from core import outbound, strict_json

SCHEMA_PATH = Path(__file__).with_name("schema") / "psconfig-schema.json"
URL_CONNECT_TIMEOUT_S = 5.0
URL_READ_TIMEOUT_S = 15.0
MAX_REDIRECTS = 3
# How many schema errors a message lists; the first few say enough to fix a file.
MAX_SCHEMA_ERRORS = 10


class TemplateError(ValueError):
    """The template cannot be imported: not JSON, too large, unreachable, or not pSConfig."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message if not errors else f"{message}: " + "; ".join(errors))
        self.errors = errors or [message]


@cache
def published_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return schema


def max_template_bytes() -> int:
    """The import endpoint's body limit: a template uploaded, read from a file or fetched from
    a URL is bounded alike."""
    return int(settings.PERFSONAR_MAX_BODY_BYTES)


def parse_template(data: bytes, source: str) -> dict[str, Any]:
    """The template in `data` (strict JSON as the API reads it: no NaN, no NUL, bounded depth)."""
    if len(data) > max_template_bytes():
        raise TemplateError(f"{source} is larger than {max_template_bytes()} bytes, more than Fathom imports")
    try:
        document = strict_json.loads(data)
    except strict_json.StrictJSONError as error:
        raise TemplateError(f"{source} is not JSON ({error})") from error
    return check_template(document, source)


def load_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as stream:
            data = stream.read(max_template_bytes() + 1)
    except OSError as error:
        raise TemplateError(f"cannot read {path}: {error.strerror or error}") from error
    return parse_template(data, str(path))


def load_url(url: str) -> dict[str, Any]:
    """GET the template with timeouts, TLS verified, reading no more than the size limit."""
    if not re.match(r"^https?://", url, re.IGNORECASE):
        raise TemplateError(f"{url!r} is not an http(s) URL")
    # Every connection, each redirect's included, is held to the outbound policy.
    pool = outbound.checked(
        urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=URL_CONNECT_TIMEOUT_S, read=URL_READ_TIMEOUT_S),
            retries=urllib3.Retry(total=MAX_REDIRECTS, connect=0, read=0, status=0, redirect=MAX_REDIRECTS),
        )
    )
    try:
        response = pool.request("GET", url, preload_content=False, headers={"Accept": "application/json"})
        try:
            if response.status != 200:
                raise TemplateError(f"{url} answered HTTP {response.status}, not a template")
            data = response.read(max_template_bytes() + 1)
        finally:
            response.release_conn()
    except urllib3.exceptions.HTTPError as error:
        raise TemplateError(f"cannot fetch {url}: {_reason(error)}") from error
    finally:
        pool.clear()
    return parse_template(data, url)


def _reason(error: urllib3.exceptions.HTTPError) -> str:
    reason = getattr(error, "reason", None)  # MaxRetryError wraps the connection error
    return str(reason or error)


def check_template(document: Any, source: str = "the template") -> dict[str, Any]:
    """The document when it is a pSConfig template by the published schema; TemplateError
    listing where it is not (an unknown key, a missing section, a wrong type)."""
    if not isinstance(document, dict):
        raise TemplateError(f"{source} is not a pSConfig template: it must be a JSON object")
    validator = Draft4Validator(published_schema())
    errors = sorted(validator.iter_errors(document), key=lambda error: [str(part) for part in error.absolute_path])
    if errors:
        raise TemplateError(
            f"{source} does not follow pSConfig's published schema",
            [_schema_message(error) for error in errors[:MAX_SCHEMA_ERRORS]],
        )
    return document


def _schema_message(error: SchemaError) -> str:
    # An object that matches none of the alternatives (a group of each type) explains itself
    # best through the alternative it comes closest to: the one with the fewest errors.
    closest = error
    while closest.context:
        by_alternative: dict[Any, list[SchemaError]] = {}
        for sub in closest.context:
            by_alternative.setdefault(sub.schema_path[0], []).append(sub)
        closest = min(by_alternative.values(), key=len)[0]
    where = ".".join(str(part) for part in closest.absolute_path) or "top level"
    return f"{where}: {closest.message}"


# pSConfig expands `{% NAME %}` (whitespace required on both sides) inside any JSON string.
VARIABLE = re.compile(r"\{%\s+(.+?)\s+%\}")
_INDEXED = re.compile(r"^(address|pscheduler_address|lead_bind_address)\[(\d+)\]$")


@dataclass(frozen=True)
class Variable:
    """One template variable: what it names and whether Fathom can take its meaning."""

    text: str
    # address / pscheduler_address / lead_bind_address with index, or scheduled_by_address,
    # flip, localhost, jq; "" for a name pSConfig does not know.
    kind: str
    index: int | None = None

    @property
    def known(self) -> bool:
        return self.kind != ""

    @property
    def pair_end(self) -> int | None:
        """0 or 1 when the variable stands for one end of the pair (its address or its
        pScheduler's): what Fathom's own source and destination already are."""
        if self.kind in ("address", "pscheduler_address") and self.index in (0, 1):
            return self.index
        return None


def parse_variable(text: str) -> Variable:
    indexed = _INDEXED.match(text)
    if indexed:
        return Variable(text, indexed.group(1), int(indexed.group(2)))
    if text in ("scheduled_by_address", "flip", "localhost"):
        return Variable(text, text)
    if text.startswith("jq "):
        return Variable(text, "jq")
    return Variable(text, "")


def variables_in(value: Any, where: str) -> Iterator[tuple[str, Variable]]:
    """(dotted path, variable) for every template variable inside a JSON value."""
    if isinstance(value, str):
        for match in VARIABLE.finditer(value):
            yield where, parse_variable(match.group(1).strip())
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from variables_in(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from variables_in(item, f"{where}[{index}]")


def sole_variable(value: Any) -> Variable | None:
    """The variable when the value is nothing but one variable ("{% address[1] %}")."""
    if not isinstance(value, str):
        return None
    match = VARIABLE.fullmatch(value.strip())
    return parse_variable(match.group(1).strip()) if match else None


def unknown_variables(template: dict[str, Any]) -> list[str]:
    """Where the template uses a variable pSConfig itself would refuse to expand."""
    return [
        f"{where}: {{% {variable.text} %}} is not a pSConfig template variable"
        for section in ("tests", "archives", "subtasks", "contexts")
        for where, variable in variables_in(template.get(section, {}), section)
        if not variable.known
    ]
