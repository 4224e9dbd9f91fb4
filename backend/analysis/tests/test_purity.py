"""The analysis's rules stay pure: no database, no settings, no other app, no service.

They take plain values and are tested without a database (docs/architecture.md); the
services read and write around them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1]
RULES = (
    "advice.py",
    "capacity.py",
    "ceilings.py",
    "diagnosis.py",
    "intervals.py",
    "members.py",
    "modes.py",
    "policer.py",
    "run_judgement.py",
    "runs.py",
    "streams.py",
    "tuning.py",
)
PURE = sorted(
    [*(ANALYSIS / "changes").glob("*.py"), *(ANALYSIS / "truth").glob("*.py"), *(ANALYSIS / name for name in RULES)]
)
# analysis.choices holds enums (Django TextChoices, for their labels), no queries.
FORBIDDEN = ("django", "analysis.models", "analysis.services", "analysis.api", "analysis.tasks", "core", "fathom")
FORBIDDEN_APPS = ("accounts", "inventory", "measurements", "meshes")
# Plain helpers with no Django in them.
ALLOWED = ("core.units",)


def imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


@pytest.mark.parametrize("path", PURE, ids=lambda path: str(path.relative_to(ANALYSIS)))
def test_pure_modules_import_no_database_code(path: Path) -> None:
    bad = [
        module
        for module in imports(path)
        if module not in ALLOWED
        and any(module == name or module.startswith(name + ".") for name in (*FORBIDDEN, *FORBIDDEN_APPS))
    ]
    assert not bad, f"{path.name} imports {bad}"
