"""docker-compose.yml cannot run here (no Docker engine), so its structure is checked instead:
the services users expect, every file it and its Dockerfiles reference exists, every variable
it reads is documented in deploy/.env.example, and the images build with the Makefile's own
targets."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from .conftest import ROOT

COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / "deploy" / ".env.example"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def documented_variables() -> set[str]:
    names = set()
    for line in ENV_EXAMPLE.read_text().splitlines():
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]+)=", line)
        if match:
            names.add(match.group(1))
    return names


def test_compose_has_every_service(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"timescaledb", "redis", "web", "worker", "alerts", "beat", "agent"}
    assert compose["services"]["timescaledb"]["image"].startswith("timescale/timescaledb:")
    for name in ("web", "worker", "alerts", "beat"):
        service = compose["services"][name]
        assert service["build"]["dockerfile"] == "deploy/backend.Dockerfile"
        assert service["depends_on"]["timescaledb"]["condition"] == "service_healthy"
    assert compose["services"]["agent"]["build"]["dockerfile"] == "deploy/agent.Dockerfile"


def test_every_referenced_file_exists(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        build = service.get("build")
        if build:
            context = ROOT / build["context"]
            assert (context / build["dockerfile"]).is_file(), f"{name}: missing {build['dockerfile']}"
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith((".", "/")):
                assert (ROOT / source).exists(), f"{name}: volume source {source} missing"
        env_file = service.get("env_file")
        if env_file:
            # Users copy the example; the example itself must exist.
            assert (ROOT / f"{env_file}.example").is_file() or (ROOT / env_file).is_file()


def test_dockerfiles_copy_only_existing_paths_and_use_make_targets() -> None:
    makefile_targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.MULTILINE))
    for dockerfile in (ROOT / "deploy").glob("*.Dockerfile"):
        text = dockerfile.read_text()
        for match in re.finditer(r"^COPY (?!--from)(.+)$", text, re.MULTILINE):
            *sources, _destination = match.group(1).split()
            for source in sources:
                assert (ROOT / source).exists(), f"{dockerfile.name}: COPY source {source} missing"
        for target in re.findall(r"^RUN .*\bmake ([a-z][a-z-]*)", text, re.MULTILINE):
            assert target in makefile_targets, f"{dockerfile.name}: make {target} is not a Makefile target"
        assert re.search(r"^RUN .*\bmake ", text, re.MULTILINE), f"{dockerfile.name} does not build with the Makefile"


def test_every_compose_variable_is_documented() -> None:
    used = set(re.findall(r"\$\{([A-Z][A-Z0-9_]+)", COMPOSE.read_text()))
    missing = used - documented_variables()
    assert not missing, f"not documented in deploy/.env.example: {sorted(missing)}"


def test_every_backend_setting_is_documented() -> None:
    settings_source = "".join(p.read_text() for p in (ROOT / "backend" / "fathom").glob("*.py"))
    read = set(re.findall(r"[\"'](FATHOM_[A-Z0-9_]+)[\"']", settings_source))
    missing = read - documented_variables()
    assert not missing, f"backend settings not documented in deploy/.env.example: {sorted(missing)}"
