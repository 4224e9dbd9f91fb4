"""Label matchers, as Alertmanager's: `name op value` with op = != =~ !~, regexes fully
anchored; every matcher of a list must match. A label may hold several values (an alert's
meshes, a path's two agents under "agent"): = and =~ need one to match, != and !~ none."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

OPS = ("=", "!=", "=~", "!~")
LABEL_NAMES = (
    "mesh", "agent", "source", "destination", "path", "metric", "direction", "severity", "rule", "kind", "hop",
)  # fmt: skip
Labels = Mapping[str, str | Sequence[str]]


class MatcherError(ValueError):
    """A matcher list that cannot be used, with a message for the person who wrote it."""


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str
    value: str

    def matches(self, labels: Labels) -> bool:
        raw = labels.get(self.name, "")
        values = [raw] if isinstance(raw, str) else list(raw) or [""]
        if self.op == "=":
            return self.value in values
        if self.op == "!=":
            return self.value not in values
        pattern = _compiled(self.value)
        hit = any(pattern.fullmatch(v) for v in values)
        return hit if self.op == "=~" else not hit


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def parse(raw: Any) -> list[Matcher]:
    """Matchers from their JSON form, or MatcherError saying which one is wrong and why."""
    if not isinstance(raw, list):
        raise MatcherError("matchers must be a list of {name, op, value}")
    found: list[Matcher] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) - {"name", "op", "value"}:
            raise MatcherError(f"matcher {i + 1}: expected an object with name, op and value")
        name, op, value = item.get("name"), item.get("op", "="), item.get("value")
        if name not in LABEL_NAMES:
            raise MatcherError(f"matcher {i + 1}: unknown label {name!r}; one of {', '.join(LABEL_NAMES)}")
        if op not in OPS:
            raise MatcherError(f"matcher {i + 1}: unknown operator {op!r}; one of {' '.join(OPS)}")
        if not isinstance(value, str) or len(value) > 200:
            raise MatcherError(f"matcher {i + 1}: value must be a string of at most 200 characters")
        if op in ("=~", "!~"):
            try:
                _compiled(value)
            except re.error as exc:
                raise MatcherError(f"matcher {i + 1}: {value!r} is not a regular expression ({exc})") from exc
        found.append(Matcher(name, op, value))
    return found


def match_all(matchers: Sequence[Matcher], labels: Labels) -> bool:
    return all(m.matches(labels) for m in matchers)


def matches(raw: Any, labels: Labels) -> bool:
    """Stored matchers (already validated) against labels; an empty list matches everything."""
    return match_all(parse(raw), labels)
