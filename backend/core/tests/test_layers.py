"""The backend's apps stand in layers and import only downwards (docs/architecture.md):

    fathom (the roof: settings, URLs, Celery, the test kit)
    metrics -> alerts -> analysis -> perfsonar -> meshes -> history -> measurements -> inventory
    -> accounts -> audit -> core (the ground floor)

An app may import from its own layer and those below; nothing but the roof imports the
roof (tests may use its test kit, fathom.testing); no app imports another app's views; and
outside an app's `api/` nothing imports another app's `api/` (the roof wires URLs and the
schema, so it may): services, commands and tasks share domain modules, not API modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BACKEND = Path(__file__).resolve().parents[2]
# Lowest first.
LAYERS = (
    "core",
    "audit",
    "accounts",
    "inventory",
    "measurements",
    "history",
    "meshes",
    "perfsonar",
    "analysis",
    "alerts",
    "metrics",
    "fathom",
)
TEST_KIT = "fathom.testing"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            # "from meshes.api import views" imports a views module too.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def violations(path: Path) -> list[str]:
    relative = path.relative_to(BACKEND)
    app = relative.parts[0]
    is_test = "tests" in relative.parts
    in_api = "api" in relative.parts[1:]
    found = []
    for line, module in imported_modules(path):
        target = module.split(".")[0]
        if target not in LAYERS or target == app:
            continue
        where = f"{relative}:{line} imports {module}"
        if is_test and (module == TEST_KIT or module.startswith(TEST_KIT + ".")):
            continue
        if LAYERS.index(target) > LAYERS.index(app):
            found.append(f"{where}: {app} is below {target}")
        elif module.split(".")[-1] == "views" or ".views." in module or ".api.views" in module:
            found.append(f"{where}: another app's views")
        elif not (in_api or is_test or app == "fathom") and module.split(".")[1:2] == ["api"]:
            found.append(f"{where}: another app's API outside {app}'s api/")
    return found


def backend_modules() -> list[Path]:
    return sorted(path for app in LAYERS for path in (BACKEND / app).rglob("*.py") if "migrations" not in path.parts)


def test_every_app_is_in_a_layer() -> None:
    apps = {path.parent.name for path in BACKEND.glob("*/apps.py")}
    assert apps <= set(LAYERS), f"add {sorted(apps - set(LAYERS))} to LAYERS and docs/architecture.md"


def test_apps_import_only_downwards() -> None:
    found = [message for path in backend_modules() for message in violations(path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("app", "source", "expected"),
    [
        ("measurements", "from meshes.services import record_slot_outcomes\n", "measurements is below meshes"),
        ("core", "import inventory.models\n", "core is below inventory"),
        ("inventory", "from fathom.testing import FathomTestCase\n", "inventory is below fathom"),
        ("analysis", "from meshes.api import views\n", "another app's views"),
        ("analysis", "from meshes.api.views import PlanView\n", "another app's views"),
        ("perfsonar", "from meshes.api.serializers import MeshSerializer\n", "another app's API outside perfsonar's"),
        ("perfsonar", "from core.api import parsers\n", "another app's API outside perfsonar's"),
    ],
)
def test_the_check_sees_a_back_edge(
    tmp_path: Path, app: str, source: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / app / "module.py"
    module.parent.mkdir()
    module.write_text(source)
    monkeypatch.setattr(__import__(__name__, fromlist=["BACKEND"]), "BACKEND", tmp_path)
    assert any(expected in message for message in violations(module))


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("perfsonar/api/views.py", "from meshes.api.serializers import MeshSerializer\n"),
        ("fathom/urls.py", "from perfsonar.api.psconfig import PublishedPsconfigView\n"),
        ("meshes/services/writes.py", "from meshes.documents import MeshSerializer\n"),
        ("alerts/tests/test_api.py", "from meshes.api.serializers import MeshSerializer\n"),
    ],
)
def test_api_modules_the_roof_and_tests_may_use_another_apps_api(
    tmp_path: Path, path: str, source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / path
    module.parent.mkdir(parents=True)
    module.write_text(source)
    monkeypatch.setattr(__import__(__name__, fromlist=["BACKEND"]), "BACKEND", tmp_path)
    assert violations(module) == []
