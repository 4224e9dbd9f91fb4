"""deploy/prometheus/: the rules a NOC's Prometheus loads pass promtool's checks and its unit
tests (fathom-rules.test.yml), and every metric they name is one /metrics serves."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from metrics.exposition import render
from metrics.services import Scrape

RULES = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian's prometheus) is not installed")


def promtool(*args: str) -> str:
    assert PROMTOOL is not None
    run = subprocess.run([PROMTOOL, *args], cwd=RULES, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@needs_promtool
def test_the_rules_pass_promtools_check() -> None:
    assert "SUCCESS" in promtool("check", "rules", "fathom-rules.yml")


@needs_promtool
def test_the_rules_pass_their_unit_tests() -> None:
    assert "SUCCESS" in promtool("test", "rules", "fathom-rules.test.yml")


def test_every_metric_the_rules_name_is_served() -> None:
    empty = Scrape(at=datetime.now(UTC), paths=[], meshes=[], agents=[], outbox={}, queues={}, own={})
    families = text_string_to_metric_families(render(empty).decode())
    served = {family.name + ("_total" if family.type == "counter" else "") for family in families}
    named = set(re.findall(r"\bfathom_[a-z_]+", (RULES / "fathom-rules.yml").read_text()))
    assert named <= served, named - served


@needs_promtool
def test_the_compose_profiles_prometheus_config_passes_promtools_check(tmp_path: Path) -> None:
    """deploy/prometheus/compose.yml with its mounts (docker-compose.yml's profile grafana)
    where promtool can read them."""
    (tmp_path / "fathom-rules.yml").write_text((RULES / "fathom-rules.yml").read_text())
    (tmp_path / "token").mkdir()
    (tmp_path / "token" / "fathom.token").write_text("fpt_a-read-scope-token\n")
    config = tmp_path / "prometheus.yml"
    config.write_text((RULES / "compose.yml").read_text().replace("/etc/prometheus/", f"{tmp_path}/"))
    assert "SUCCESS" in promtool("check", "config", str(config))
