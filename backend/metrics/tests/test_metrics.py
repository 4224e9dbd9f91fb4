"""GET /metrics: who may scrape, the figures against the Paths list's (the same tables), Fathom's
own counters as ingest and delivery move them, a Redis that does not answer, and promtool's
lint of the exposition."""

from __future__ import annotations

import math
import shutil
import subprocess
import uuid
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from accounts.choices import TokenScope
from accounts.services import create_api_token
from analysis.choices import FindingKind
from analysis.models import Finding
from analysis.services.run_analyses import analyze_recent
from analysis.tests.services.fixtures import (
    MIB,
    T0,
    facts,
    flow_sweep,
    latency_sessions,
    pings,
    snapshot,
    throughput_run,
)
from core import metrics
from core.shared_redis import shared_redis
from fathom.testing import FathomTestCase, load_example
from history.backfill import mark_range
from history.refresh import refresh
from inventory.models import Agent
from measurements.models import PathLatestRun, Run
from metrics.exposition import TextFamily, label_set, write_text

NOW = T0 + timedelta(minutes=5)
URL = "/metrics"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parsed(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def latest(source: Agent, destination: Agent, test_type: str, at: Any) -> None:
    """What ingest keeps for a path's newest run (the fixtures write runs only)."""
    PathLatestRun.objects.create(
        source=source, destination=destination, test_type=test_type, run_id=uuid.uuid4(), started_at=at, status="ok"
    )


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


class MetricsTests(FathomTestCase):
    def setUp(self) -> None:
        metrics.clear()
        self.addCleanup(metrics.clear)

    def scrape(self, client: Any = None, **extra: Any) -> Any:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            return (client or self.user_client(self.outsider)).get(URL, **extra)

    def samples(self) -> Samples:
        reply = self.scrape()
        assert reply.status_code == 200, reply.content
        assert reply["Content-Type"].startswith("text/plain; version=0.0.4")
        return parsed(reply.content.decode())


class ScrapeAccessTests(MetricsTests):
    def test_nobody_without_a_token_a_session_or_an_allowed_address(self) -> None:
        reply = self.client.get(URL)
        assert reply.status_code == 403
        assert b"FATHOM_METRICS_ALLOW_NETWORKS" in reply.content and b"fathom_" not in reply.content

    def test_a_read_scope_token_scrapes(self) -> None:
        issued = create_api_token(self.outsider, "prometheus", TokenScope.READ, None)
        reply = self.client.get(URL, HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
        assert reply.status_code == 200 and b"fathom_agent_up" in reply.content

    def test_a_wrong_token_is_refused_clearly(self) -> None:
        reply = self.client.get(URL, HTTP_AUTHORIZATION="Bearer fpt_not-a-token")
        assert reply.status_code == 401 and b"fathom_" not in reply.content
        assert reply.content.strip(), "the refusal says why"

    def test_an_agent_credential_is_not_a_scrape(self) -> None:
        reply = self.agent_client(self.athens, self.athens_credential).get(URL)
        assert reply.status_code in (401, 403) and b"fathom_" not in reply.content

    @override_settings(METRICS_ALLOW_NETWORKS=(__import__("ipaddress").ip_network("198.51.100.0/24"),))
    def test_an_allowed_address_scrapes_without_a_token(self) -> None:
        assert self.client.get(URL, REMOTE_ADDR="198.51.100.7").status_code == 200
        assert self.client.get(URL, REMOTE_ADDR="198.51.101.7").status_code == 403
        # X-Forwarded-For counts only through trusted proxies (none here).
        assert self.client.get(URL, REMOTE_ADDR="203.0.113.1", HTTP_X_FORWARDED_FOR="198.51.100.7").status_code == 403

    def test_writes_are_refused_and_change_nothing(self) -> None:
        client = self.user_client(self.owner)
        for method in (client.post, client.put, client.delete):
            assert method(URL).status_code == 405
        assert Run.objects.count() == 0


class PathFigureTests(MetricsTests):
    """The same figures the Paths list shows, from the same rows."""

    def setUp(self) -> None:
        super().setUp()
        # A lab address of the IPv6 benchmarking block (enrolment would want it allow-listed).
        self.vienna = Agent.objects.create(name="vienna", address="2001:2::3", credential_sha256="0" * 64)
        snapshot(self.athens, T0 - timedelta(days=1), facts(6 * MIB))
        snapshot(self.frankfurt, T0 - timedelta(days=1), facts(6 * MIB))
        pings(self.athens, self.frankfurt, T0 - timedelta(minutes=50), 90, 7.9, every_s=30)
        mark_range(T0 - timedelta(hours=2), NOW, NOW)
        refresh(NOW)
        throughput_run(self.athens, self.frankfurt, T0 - timedelta(minutes=20), 3.05e9)
        latest(self.athens, self.frankfurt, "throughput", T0 - timedelta(minutes=20))
        latest(self.athens, self.vienna, "ping", T0 - timedelta(minutes=1))
        flow_sweep(self.athens, self.frankfurt, T0 - timedelta(minutes=10), 7.8, 11.9)
        analyze_recent(now=NOW)
        for metric in ("rtt", "throughput"):
            Finding.objects.create(
                source=self.athens, destination=self.frankfurt, metric=metric, started_at=T0, detected_at=T0,
                direction="up", baseline=7.9, current=12.0, magnitude=0.5, unit="relative", kind=FindingKind.ALARM,
            )  # fmt: skip

    def paths_list(self) -> dict[str, Any]:
        with mock.patch("django.utils.timezone.now", return_value=NOW):
            reply = self.user_client(self.outsider).get(reverse("analysis-paths"))
        assert reply.status_code == 200, reply.content
        rows = reply.json()["paths"]
        (row,) = [row for row in rows if (row["source"]["name"], row["destination"]["name"]) == ("athens", "frankfurt")]
        return dict(row)

    def test_a_path_reads_as_the_paths_list_shows_it(self) -> None:
        samples, row = self.samples(), self.paths_list()
        path = {"source": "athens", "destination": "frankfurt", "family": "ipv4"}
        assert value(samples, "fathom_path_rtt_median_seconds", **path) == pytest.approx(row["rtt_median_ms"] / 1000)
        assert value(samples, "fathom_path_rtt_min_seconds", **path) == pytest.approx(0.0079)
        assert value(samples, "fathom_path_loss_ratio", **path) == pytest.approx(row["loss_fraction"])
        assert value(samples, "fathom_path_throughput_bytes_per_second", **path) == pytest.approx(row["rate_bps"] / 8)
        ceiling = value(samples, "fathom_path_ceiling_bytes_per_second", **path, limit=row["diagnosis"])
        assert ceiling == pytest.approx(row["ceiling_bps"] / 8)
        assert value(samples, "fathom_path_throughput_ceiling_ratio", **path) == pytest.approx(
            row["rate_bps"] / row["ceiling_bps"]
        )
        assert value(samples, "fathom_path_ecmp_members", **path) == 2
        assert value(samples, "fathom_path_open_findings", **path, metric="rtt") == 1
        assert value(samples, "fathom_path_open_findings", **path, metric="throughput") == 1
        assert value(samples, "fathom_path_open_findings", **path, metric="loss") == 0
        assert value(samples, "fathom_path_mesh_info", **path, mesh="default") == 1

    def test_one_way_loss_each_way_as_the_paths_list_reads_it(self) -> None:
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=30), 20, forward_lost=6, backward_lost=3)
        latency_sessions(self.athens, self.frankfurt, NOW - timedelta(minutes=8), 5, forward_lost=300, own_load=True)
        samples, row = self.samples(), self.paths_list()
        forward = {"source": "athens", "destination": "frankfurt", "family": "ipv4"}
        assert row["forward_loss_fraction"] == pytest.approx(6 / 600)
        assert value(samples, "fathom_path_one_way_loss_ratio", **forward) == row["forward_loss_fraction"]
        # frankfurt -> athens has no run of its own: athens' sessions give its way back.
        back = {"source": "frankfurt", "destination": "athens", "family": "ipv4"}
        assert value(samples, "fathom_path_one_way_loss_ratio", **back) == pytest.approx(3 / 594)
        assert not [labels for name, labels in samples if name == "fathom_path_one_way_loss_ratio"
                    and dict(labels)["destination"] == "vienna"]  # fmt: skip

    def test_an_ipv6_destination_is_its_own_family(self) -> None:
        samples = self.samples()
        families = {dict(labels).get("family") for name, labels in samples if name == "fathom_path_mesh_info"}
        assert families == {"ipv4", "ipv6"}

    def test_agents_are_up_with_their_version(self) -> None:
        self.athens.last_seen_at = NOW - timedelta(seconds=30)
        self.athens.agent_version = "1.2.3"
        self.athens.save()
        samples = self.samples()
        assert value(samples, "fathom_agent_up", agent="athens") == 1
        assert value(samples, "fathom_agent_up", agent="frankfurt") == 0  # never seen
        assert value(samples, "fathom_agent_last_seen_age_seconds", agent="athens") == pytest.approx(30)
        assert value(samples, "fathom_agent_info", agent="athens", kind="fathom", version="1.2.3", status="online") == 1

    def test_an_agents_clock_and_spool_are_what_it_last_said(self) -> None:
        self.athens.last_seen_at = NOW - timedelta(seconds=30)
        self.athens.clock_offset_s, self.athens.spool_results, self.athens.spool_bytes = -2.5, 340, 1_200_000
        self.athens.save()
        samples = self.samples()
        assert value(samples, "fathom_agent_clock_offset_seconds", agent="athens") == -2.5
        assert value(samples, "fathom_agent_spool_results", agent="athens") == 340
        assert value(samples, "fathom_agent_spool_bytes", agent="athens") == 1_200_000
        # frankfurt said nothing of itself: no series, rather than a zero that reads as "fine".
        assert value(samples, "fathom_agent_spool_results", agent="frankfurt") is None

    def test_the_number_of_queries_does_not_grow_with_paths(self) -> None:
        client = self.user_client(self.outsider)
        with CaptureQueriesContext(connection) as few:
            self.scrape(client)
        for index in range(5):
            other, _ = self.enroll(f"extra{index}", f"198.18.9.{index + 1}")
            throughput_run(self.athens, other, T0 - timedelta(minutes=19), 1e9)
            latest(self.athens, other, "throughput", T0 - timedelta(minutes=19))
        analyze_recent(now=NOW)
        with CaptureQueriesContext(connection) as more:
            samples = parsed(self.scrape(client).content.decode())
        assert sum(1 for name, _ in samples if name == "fathom_path_throughput_bytes_per_second") == 6
        assert len(more.captured_queries) == len(few.captured_queries)


class OwnFigureTests(MetricsTests):
    def test_ingest_counts_results_and_their_delay_and_refusals(self) -> None:
        client = self.agent_client(self.athens, self.athens_credential)
        batch = load_example("valid/ping-loss-duplicate.json")
        with self.captureOnCommitCallbacks(execute=True):
            assert client.post("/api/v1/agent/results/", batch, format="json").status_code == 200
        assert client.post("/api/v1/agent/results/", {"schema_version": 1}, format="json").status_code == 400
        samples = self.samples()
        assert value(samples, "fathom_results_ingested_total", kind="ping") == len(batch["results"])
        assert value(samples, "fathom_ingest_delay_seconds_count") == len(batch["results"])
        assert value(samples, "fathom_ingest_delay_seconds_bucket", le="+Inf") == len(batch["results"])
        assert value(samples, "fathom_batches_refused_total", reason="schema") == 1
        assert value(samples, "fathom_metrics_store_up") == 1

    def test_every_family_is_declared_before_its_first_value(self) -> None:
        names = {family.name for family in text_string_to_metric_families(self.scrape().content.decode())}
        assert {f"fathom_{family.name}" for family in metrics.FAMILIES} <= names
        assert {"fathom_alert_outbox", "fathom_celery_queue_length", "fathom_agent_up"} <= names

    def test_counters_with_known_labels_start_from_zero(self) -> None:
        """So that rate() and a dashboard's panels have a series before the first event."""
        samples = self.samples()
        assert value(samples, "fathom_batches_refused_total", reason="plan") == 0
        assert value(samples, "fathom_alert_deliveries_total", channel_kind="email", outcome="retrying") == 0
        assert value(samples, "fathom_results_ingested_total", kind="trace") == 0
        assert value(samples, "fathom_perfsonar_syncs_total", outcome="cut_short") == 0

    def test_a_label_a_family_does_not_take_is_a_bug_not_a_series(self) -> None:
        with pytest.raises(ValueError, match="takes labels"):
            metrics.count(metrics.RESULTS_INGESTED, reason="nope")

    def test_a_redis_that_does_not_answer_is_reported_not_a_failed_scrape(self) -> None:
        # The one client every counter and queue length goes through, pointed at a dead port.
        shared_redis.cache_clear()
        try:
            with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
                metrics.count(metrics.RESULTS_INGESTED, kind="ping")  # dropped with a warning, not raised
                samples = self.samples()
        finally:
            shared_redis.cache_clear()
        assert value(samples, "fathom_metrics_store_up") == 0
        assert "fathom_celery_queue_length" not in {name for name, _labels in samples}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus) is not installed")
class PromtoolTests(MetricsTests):
    def test_promtool_finds_nothing_to_lint(self) -> None:
        metrics.count(metrics.RESULTS_INGESTED, 3, kind="ping")
        metrics.observe(metrics.INGEST_DELAY, [0.5, 20.0])
        text = self.scrape().content
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
        assert lint.returncode == 0, lint.stdout.decode() + lint.stderr.decode()


def test_the_fast_writer_escapes_and_spells_numbers_as_the_text_format_asks() -> None:
    family = TextFamily(
        "x_ratio",
        "A help with a back\\slash\nand a newline.",
        [
            (label_set(["source"], ['a"b\\c\nd']), 0.5),
            (label_set(["source"], ["inf"]), math.inf),
            (label_set(["source"], ["nan"]), math.nan),
            (label_set(["source"], ["int"]), 3),
        ],
    )
    text = write_text([family])
    assert text.splitlines() == [
        "# HELP fathom_x_ratio A help with a back\\\\slash\\nand a newline.",
        "# TYPE fathom_x_ratio gauge",
        'fathom_x_ratio{source="a\\"b\\\\c\\nd"} 0.5',
        'fathom_x_ratio{source="inf"} +Inf',
        'fathom_x_ratio{source="nan"} NaN',
        'fathom_x_ratio{source="int"} 3.0',
    ]
    # prometheus_client's own parser reads back what was written.
    (parsed,) = text_string_to_metric_families(text)
    assert parsed.samples[0].labels["source"] == 'a"b\\c\nd'
