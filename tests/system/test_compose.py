"""docker-compose.yml's structure: the services users expect, every file it and its Dockerfiles
reference exists, every variable it reads is documented in deploy/.env.example, the images
build with the Makefile's own targets, and the hardening of issue 17 item 10 holds (TLS proxy
in front, the web service never published, threaded workers, unprivileged containers, each
given only the secrets it needs, health checks)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from .conftest import ROOT

COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / "deploy" / ".env.example"
AGENT_ENV_EXAMPLE = ROOT / "deploy" / "agent.env.example"
BACKEND_SERVICES = ("web", "worker", "alerts", "beat", "web-2", "worker-2")
GRAFANA_PROFILE = ("prometheus", "grafana")
SCALE_PROFILE = ("web-2", "worker-2", "timescaledb-replica")
SERVER_SECRETS = ("FATHOM_SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD", "FATHOM_EMAIL_PASSWORD")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def default_of(value: str) -> str:
    """What `${VAR:-default}` stands for when VAR is not set."""
    match = re.fullmatch(r"\$\{[A-Z0-9_]+:-([^}]*)\}(.*)", value)
    return match.group(1) + match.group(2) if match else value


def documented_variables() -> set[str]:
    names = set()
    for line in ENV_EXAMPLE.read_text().splitlines():
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]+)=", line)
        if match:
            names.add(match.group(1))
    return names


def test_compose_has_every_service(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {
        "proxy",
        "timescaledb",
        "redis",
        "web",
        "worker",
        "alerts",
        "beat",
        "agent",
    } | set(GRAFANA_PROFILE) | set(SCALE_PROFILE)
    # Prometheus and Grafana (docs/metrics.md) start only with `--profile grafana`, the second
    # replicas and the database's read replica only with `--profile scale` (docs/scaling.md).
    for name in GRAFANA_PROFILE:
        assert compose["services"][name]["profiles"] == ["grafana"], name
    for name in SCALE_PROFILE:
        assert compose["services"][name]["profiles"] == ["scale"], name
    # A second web replica is one more address of the name the proxy sends requests to.
    assert compose["services"]["web-2"]["networks"]["default"]["aliases"] == ["web"]
    assert compose["services"]["web-2"]["command"] == compose["services"]["web"]["command"]
    replica = compose["services"]["timescaledb-replica"]
    assert replica["image"] == compose["services"]["timescaledb"]["image"] and replica["user"] == "postgres"
    assert "timescale/timescaledb:" in compose["services"]["timescaledb"]["image"]
    for name in BACKEND_SERVICES:
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
            source = default_of(volume).split(":", 1)[0]
            if source.startswith((".", "/")):
                assert (ROOT / source).exists(), f"{name}: volume source {source} missing"
        env_file = default_of(service.get("env_file", ""))
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
    # The project's modules; its benchmarks' knobs (bench_*.py) are documented beside them.
    modules = [p for p in (ROOT / "backend" / "fathom").glob("*.py") if not p.name.startswith("bench_")]
    settings_source = "".join(p.read_text() for p in modules)
    read = set(re.findall(r"[\"'](FATHOM_[A-Z0-9_]+)[\"']", settings_source))
    missing = read - documented_variables()
    assert not missing, f"backend settings not documented in deploy/.env.example: {sorted(missing)}"


def test_only_the_tls_proxy_is_published(compose: dict[str, Any]) -> None:
    services = compose["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    # The grafana profile's Grafana answers on the host's loopback alone.
    assert published == {"proxy", "grafana"}
    assert all(default_of(port).startswith("127.0.0.1:") for port in services["grafana"]["ports"])
    assert [port.split(":")[-1] for port in services["proxy"]["ports"]] == ["80", "443"]
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in [default_of(v) for v in services["proxy"]["volumes"]]
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    # Every web replica, found by name (compose's `scale` profile, `--scale web=N`), no affinity.
    assert re.search(r"^\s*dynamic a web 8000", caddyfile, re.MULTILINE)
    assert caddyfile.count("import web_replicas") == 3 and "lb_policy random" in caddyfile
    assert "admin off" in caddyfile
    assert re.search(r"request_buffers \d+MiB", caddyfile), "the proxy must buffer request bodies"
    for timeout in ("read_header", "read_body"):
        assert re.search(rf"^\s*{timeout} \d+s$", caddyfile, re.MULTILINE), f"no {timeout} timeout for clients"
    web = services["web"]
    assert web["environment"]["FATHOM_TRUSTED_PROXIES"] == "1"
    assert web["environment"]["FATHOM_SECURE_COOKIES"] == "1"


def test_web_workers_are_threaded_and_bounded(compose: dict[str, Any]) -> None:
    command = " ".join(compose["services"]["web"]["command"])
    assert "--worker-class gthread" in command and "--threads" in command and "--timeout" in command
    # gunicorn 25.1+ opens a control socket in $HOME by default: the container's user has none.
    assert "--no-control-socket" in command
    dockerfile_cmd = (ROOT / "deploy" / "backend.Dockerfile").read_text()
    assert '"--worker-class", "gthread"' in dockerfile_cmd


def test_every_container_is_unprivileged(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in (*BACKEND_SERVICES, "agent"):
        assert services[name]["user"] == "10001:10001", name
        assert services[name]["cap_drop"] == ["ALL"], name
    for name in BACKEND_SERVICES:
        assert "no-new-privileges:true" in services[name]["security_opt"], name
    # The agent keeps NET_RAW for ping's file capability and NET_BIND_SERVICE for its own (the
    # TWAMP-light reflector's port 862), and nothing else.
    assert services["agent"]["cap_add"] == ["NET_RAW", "NET_BIND_SERVICE"]
    assert services["proxy"]["cap_add"] == ["NET_BIND_SERVICE"]
    for dockerfile in ("backend.Dockerfile", "agent.Dockerfile"):
        text = (ROOT / "deploy" / dockerfile).read_text()
        assert re.search(r"^USER fathom$", text, re.MULTILINE), f"{dockerfile} runs as root"


def test_each_container_gets_only_the_secrets_it_needs(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in BACKEND_SERVICES:
        assert default_of(services[name]["env_file"]) == "deploy/.env"
    assert default_of(services["agent"]["env_file"]) == "deploy/agent.env"
    agent_settings = AGENT_ENV_EXAMPLE.read_text()
    for secret in SERVER_SECRETS:
        assert secret not in agent_settings
        assert secret not in str(services["agent"])
        assert secret not in str(services["proxy"])
    for volume in services["agent"]["volumes"]:
        assert not volume.startswith("./deploy:"), "the agent must not see the server's deploy/.env"


def test_every_long_running_service_has_a_health_check(compose: dict[str, Any]) -> None:
    missing = [
        name
        for name, service in compose["services"].items()
        if name not in ("beat", "agent") and "healthcheck" not in service
    ]
    assert not missing, f"no health check: {missing}"
    assert "/api/v1/health/" in " ".join(compose["services"]["web"]["healthcheck"]["test"])
    assert compose["services"]["proxy"]["depends_on"]["web"]["condition"] == "service_healthy"
