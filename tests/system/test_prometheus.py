"""A real Prometheus (Debian's package) scrapes the real stack with a read-scope API token
while two real agents ping and measure throughput on loopback: PromQL over what it scraped
gives the RTT, loss and throughput the Paths list API gives, promtool finds nothing to lint
in a scrape of real data, and a stopped worker shows as a growing queue and a stale
analysis pass while `up` stays 1, until it is back."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from .conftest import ARTIFACTS, ROOT, Stack, free_port, stop_process, wait_for
from .lab_agents import apply_meshes

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus package is not installed")

PING = {"name": "ping", "test_type": "ping", "interval_s": 10, "spec": {"count": 5, "interval_s": 0.2}}
# The dashboard's ECMP panel wants the path's standing modes.
SWEEP = {"name": "sweep", "test_type": "flowsweep", "interval_s": 20,
         "spec": {"flows": 16, "samples_per_flow": 10, "interval_ms": 5}}  # fmt: skip
DASHBOARD = ROOT / "deploy" / "grafana" / "fathom.json"


def mesh(receiver_port: int) -> dict[str, Any]:
    """sys-a -> sys-b: each agent's iperf3 server has a port of its own here, so one way; paced
    to 100 Mbit/s, as loopback at full speed takes both cores from the lab lane's emulator."""
    throughput = {"name": "tput", "test_type": "throughput", "interval_s": 60, "slip_s": 0,
                  "spec": {"duration_s": 2, "port": receiver_port, "fq_rate_bps": 100_000_000}}  # fmt: skip
    return {
        "name": "prometheus",
        "kind": "disjoint",
        "unidirectional": True,
        "members": [{"agent": "sys-a", "side": "a"}, {"agent": "sys-b", "side": "b"}],
        "tests": [PING, SWEEP, throughput],
    }


SCRAPE_INTERVAL_S = 1


@dataclass
class Prometheus:
    stack: Stack
    url: str
    token: str

    def query(self, promql: str) -> list[dict[str, Any]]:
        reply = requests.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        reply.raise_for_status()
        body = reply.json()
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def value(self, promql: str) -> float | None:
        result = self.query(promql)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    def target_up(self) -> bool:
        reply = requests.get(f"{self.url}/api/v1/targets", timeout=10)
        reply.raise_for_status()
        targets = reply.json()["data"]["activeTargets"]
        return bool(targets) and all(target["health"] == "up" for target in targets)


def read_token(stack: Stack) -> str:
    reply = stack.session().post(
        f"{stack.url}/api/v1/api-tokens/", json={"name": "prometheus", "scope": "read", "expires_at": None}, timeout=10
    )
    assert reply.status_code == 201, reply.text
    token: str = reply.json()["token"]
    return token


@pytest.fixture(scope="module")
def prometheus(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    tmp = tmp_path_factory.mktemp("prometheus")
    token = read_token(stack)
    (tmp / "token").write_text(token)
    target = stack.url.removeprefix("http://")
    (tmp / "prometheus.yml").write_text(
        f"global:\n  scrape_interval: {SCRAPE_INTERVAL_S}s\n  scrape_timeout: {SCRAPE_INTERVAL_S}s\n"
        "scrape_configs:\n  - job_name: fathom\n    metrics_path: /metrics\n"
        f"    authorization:\n      credentials_file: {tmp / 'token'}\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    port = free_port()
    log = (ARTIFACTS / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [str(PROMETHEUS), f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    scraper = Prometheus(stack, f"http://127.0.0.1:{port}", token)
    receiver = next(agent for agent in stack.agents if agent.name == "sys-b")
    try:  # Prometheus stops whatever fails from here (a refused mesh left it running once)
        apply_meshes(stack, tmp, [mesh(receiver.iperf3_port)])
        wait_for("Prometheus scraping Fathom", scraper.target_up, 60)
        ids = dict(stack.query("SELECT name, id::text FROM inventory_agent"))
        wait_for(
            "an analysed sys-a -> sys-b throughput run",
            lambda: stack.query(
                "SELECT 1 FROM analysis_runanalysis WHERE source_id = %s AND destination_id = %s AND rate_bps > 0",
                ids["sys-a"],
                ids["sys-b"],
            ),
            240,
            2,
        )
        # The last hour of pings is summarised by the minute refresh (history.last_hour).
        wait_for(
            "sys-a -> sys-b's last hour of pings in the Paths list",
            lambda: paths_list_row(stack, "sys-a", "sys-b").get("rtt_median_ms") is not None,
            180,
            3,
        )
        yield scraper
    finally:
        stop_process(process)
        log.close()
        apply_meshes(stack, tmp, [{"name": "prometheus", "enabled": False}])


def paths_list_row(stack: Stack, source: str, destination: str) -> dict[str, Any]:
    reply = stack.session().get(f"{stack.url}/api/v1/analysis/paths/", timeout=30)
    reply.raise_for_status()
    rows = [
        row
        for row in reply.json()["paths"]
        if (row["source"]["name"], row["destination"]["name"]) == (source, destination)
    ]
    assert len(rows) == 1, rows
    return dict(rows[0])


FIGURES = {
    # PromQL (seconds, ratios) -> the Paths list's field, in its unit.
    "fathom_path_rtt_median_seconds": ("rtt_median_ms", 1000.0),
    "fathom_path_loss_ratio": ("loss_fraction", 1.0),
    "fathom_path_throughput_bytes_per_second": ("rate_bps", 8.0),
    "fathom_path_throughput_ceiling_ratio": ("fraction_of_ceiling", 1.0),
}


def test_promql_gives_the_figures_the_api_gives(prometheus: Prometheus) -> None:
    """Each figure changes at most once a minute (the last-hour row, the newest run): read the
    API, let Prometheus scrape twice, read the API again; where the two API reads agree, the
    scraped value must be theirs."""
    selector = '{source="sys-a",destination="sys-b",family="ipv4"}'
    compared: dict[str, tuple[float, float]] = {}
    for _ in range(10):
        before = paths_list_row(prometheus.stack, "sys-a", "sys-b")
        time.sleep(2 * SCRAPE_INTERVAL_S + 0.5)
        scraped = {name: prometheus.value(name + selector) for name in FIGURES}
        after = paths_list_row(prometheus.stack, "sys-a", "sys-b")
        for name, (field, scale) in FIGURES.items():
            if before.get(field) == after.get(field) and before.get(field) is not None and name not in compared:
                value = scraped[name]
                assert value is not None, f"{name} missing while the API has {field} = {before[field]}"
                compared[name] = (value * scale, float(before[field]))
        if len(compared) == len(FIGURES):
            break
    (ARTIFACTS / "prometheus-vs-api.txt").write_text(
        "\n".join(f"{name}: PromQL {ours} vs API {theirs}" for name, (ours, theirs) in compared.items())
    )
    assert set(compared) == set(FIGURES), f"the API never held still for {set(FIGURES) - set(compared)}"
    for name, (ours, theirs) in compared.items():
        assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-9), name


def test_promtool_lints_a_scrape_of_real_data(prometheus: Prometheus) -> None:
    assert PROMTOOL is not None
    reply = requests.get(
        f"{prometheus.stack.url}/metrics", headers={"Authorization": f"Bearer {prometheus.token}"}, timeout=30
    )
    reply.raise_for_status()
    (ARTIFACTS / "metrics.txt").write_bytes(reply.content)
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=reply.content, capture_output=True, timeout=30)
    assert lint.returncode == 0, lint.stdout.decode() + lint.stderr.decode()
    # Two agents and their paths, Fathom itself: every family there.
    assert prometheus.value('count(fathom_agent_up{agent=~"sys-a|sys-b"})') == 2
    assert (prometheus.value('sum(fathom_results_ingested_total{kind="ping"})') or 0) > 0

    # The agents' own headers, end to end: a clock on this machine's (within the request's
    # delay) and a spool the uploads keep near empty, as the API records them.
    offset = prometheus.value('fathom_agent_clock_offset_seconds{agent="sys-a"}')
    spooled = prometheus.value('fathom_agent_spool_results{agent="sys-a"}')
    assert offset is not None and abs(offset) < 1.0, offset
    assert spooled is not None and 0 <= spooled < 100, spooled
    agents = prometheus.stack.session().get(f"{prometheus.stack.url}/api/v1/agents/", timeout=10).json()
    sys_a = next(agent for agent in agents if agent["name"] == "sys-a")
    assert sys_a["spool_bytes"] is not None and abs(sys_a["clock_offset_s"]) < 1.0, sys_a


def test_a_stopped_worker_shows_as_a_queue_and_a_stale_pass_until_it_is_back(prometheus: Prometheus) -> None:
    stack = prometheus.stack
    wait_for(
        "an analysis pass in the scrape",
        lambda: prometheus.value("fathom_analysis_pass_end_timestamp_seconds") is not None,
        60,
    )
    stop_process(stack.processes["worker"])
    try:
        # Beat keeps sending analysis (every 10 s here), rollup and planning tasks: they wait,
        # and no pass ends for two of its intervals.
        wait_for(
            "tasks waiting in the celery queue and no analysis pass for 20 s",
            lambda: (
                (prometheus.value('fathom_celery_queue_length{queue="celery"}') or 0) >= 3
                and (prometheus.value("time() - fathom_analysis_pass_end_timestamp_seconds") or 0) > 20
            ),
            90,
        )
        assert prometheus.value('up{job="fathom"}') == 1  # the web process answers throughout
    finally:
        stack.start_worker()
    wait_for(
        "the queue drained and a fresh analysis pass",
        lambda: (
            prometheus.value('fathom_celery_queue_length{queue="celery"}') == 0
            and (prometheus.value("time() - fathom_analysis_pass_end_timestamp_seconds") or 1e9) < 30
        ),
        120,
    )


def dashboard_queries() -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and query variable of the Grafana dashboard, with
    its variables set to this test's path: label_values(selector, label) becomes its selector."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [
        (f"panel {panel['title']!r} {target['refId']}", target["expr"])
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            selector = re.fullmatch(r"label_values\((.*), (\w+)\)", variable["query"]["query"])
            assert selector, variable
            queries.append((f"variable {variable['name']}", selector.group(1)))
    values = {"$mesh": "prometheus", "$source": "sys-a", "$destination": "sys-b", "$__rate_interval": "1m"}
    for name, value in values.items():
        queries = [(where, query.replace(name, value)) for where, query in queries]
    return queries


def test_every_dashboard_query_returns_data(prometheus: Prometheus) -> None:
    """Grafana cannot run here; its dashboard's PromQL can (tests/grafana/check_dashboard.py
    holds the JSON to Grafana's model)."""
    queries = dashboard_queries()
    assert len(queries) >= 20

    def empty() -> list[str]:
        return [f"{where}: {query}" for where, query in queries if not prometheus.query(query)]

    # The flow sweeps' standing modes come a pass after the first sweep; the rest is there.
    with contextlib.suppress(AssertionError):  # the assert says which came back empty
        wait_for("data for every query of the dashboard", lambda: not empty(), 90, 3)
    assert not (missing := empty()), missing


def test_a_scrape_without_the_token_is_refused(prometheus: Prometheus) -> None:
    reply = requests.get(f"{prometheus.stack.url}/metrics", timeout=10)
    assert reply.status_code == 403 and "FATHOM_METRICS_ALLOW_NETWORKS" in reply.text
