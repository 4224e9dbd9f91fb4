"""A scrape (metrics.services) as Prometheus metric families: per path, per agent, and Fathom
itself. docs/metrics.md lists every family with its labels and how many series it makes.

Paths carry `source`, `destination` (agent names) and `family`; a path's meshes are joined
through `fathom_path_mesh_info` (one series per mesh the pair is in), so a path in two meshes
is one series, not two that sum double. Units are Prometheus's base units: seconds, bytes
per second, ratios.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from alerts.choices import ChannelKind
from analysis.choices import FindingMetric
from core import metrics
from inventory.choices import AgentStatus
from measurements.choices import TestType
from metrics.services import PathFigures, Scrape

PREFIX = "fathom_"
PATH_LABELS = ["source", "destination", "family"]


def render(scrape: Scrape) -> bytes:
    """The whole exposition: the paths' families written here, the rest by prometheus_client."""
    paths = write_text([*path_families(scrape.paths), mesh_info(scrape.meshes)])
    held = CollectorRegistry(auto_describe=False)  # a new one per request: nothing outlives it
    held.register(ScrapeCollector(scrape))
    return paths.encode() + generate_latest(held)


class ScrapeCollector(Collector):
    """The agents' and Fathom's own families: few rows, in prometheus_client's types."""

    def __init__(self, scrape: Scrape) -> None:
        self.scrape = scrape

    def collect(self) -> Iterable[Metric]:
        yield from agent_families(self.scrape)
        yield from own_families(self.scrape)


def _gauge(name: str, documentation: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, documentation, labels=labels)


@dataclass(frozen=True)
class TextFamily:
    """A family written straight to text. The paths' families have a row per path and
    finding metric (tens of thousands at 500 agents), and prometheus_client's per-sample
    label checks and escaping took most of a scrape's second (bench-load, 2026-12-04): a
    path's labels are escaped once here, and every row reuses them."""

    name: str
    documentation: str
    rows: list[tuple[str, float]]  # (the row's label set as written, its value)
    type: str = "gauge"


def label_set(names: Iterable[str], values: Iterable[str]) -> str:
    """`{a="x",b="y"}` with the values escaped as the text format asks."""
    pairs = (f'{name}="{_escape(value)}"' for name, value in zip(names, values, strict=True))
    return "{" + ",".join(pairs) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def write_text(families: Iterable[TextFamily]) -> str:
    """The families in Prometheus's text format 0.0.4."""
    out: list[str] = []
    for family in families:
        name = PREFIX + family.name
        documentation = family.documentation.replace("\\", "\\\\").replace("\n", "\\n")
        out.append(f"# HELP {name} {documentation}\n# TYPE {name} {family.type}\n")
        out.extend(f"{name}{labels} {_number(value)}\n" for labels, value in family.rows)
    return "".join(out)


def path_families(paths: list[PathFigures]) -> list[TextFamily]:
    def family(name: str, documentation: str) -> TextFamily:
        return TextFamily(name, documentation, [])

    rtt = [
        family("path_rtt_min_seconds", "RTT minimum of the path's last hour of pings."),
        family("path_rtt_median_seconds", "RTT median (of the minutes' medians) of the path's last hour of pings."),
        family(
            "path_rtt_p90_seconds", "RTT 90th percentile (median of the minutes') of the path's last hour of pings."
        ),
    ]
    loss = family("path_loss_ratio", "Pings lost of those sent in the path's last hour.")
    one_way = family(
        "path_one_way_loss_ratio",
        "Latency test packets lost from source to destination in the last hour (Fathom's own load left out).",
    )
    # Bytes, Prometheus's base unit (promtool's lint): x 8 for the bit/s a NOC reads.
    rate = family(
        "path_throughput_bytes_per_second",
        "Steady rate of the path's newest analysed throughput run of the last month (x 8: bit/s).",
    )
    ceiling = family(
        "path_ceiling_bytes_per_second",
        "The ceiling that binds that run (x 8: bit/s), labelled with what limits it (the run's diagnosis).",
    )
    ratio = family("path_throughput_ceiling_ratio", "That run's rate over its binding ceiling.")
    measured = family("path_throughput_timestamp_seconds", "When that run started (Unix time): its age.")
    members = family("path_ecmp_members", "RTT modes (ECMP members) of the flow sweep whose modes stand now.")
    findings = family("path_open_findings", "Open findings of the path, by metric (0 for each without).")
    listed = {(path.source, path.destination) for path in paths}
    for path in paths:
        pairs = label_set(PATH_LABELS, (path.source, path.destination, path.family))
        labels, inner = pairs, pairs[1:-1]
        for stat, value in zip(rtt, path.rtt_ms, strict=True):
            if value is not None:
                stat.rows.append((labels, value / 1000))
        state = path.state
        if state.loss_fraction is not None:
            loss.rows.append((labels, state.loss_fraction))
        if state.forward_loss_fraction is not None:
            one_way.rows.append((labels, state.forward_loss_fraction))
        if state.backward_loss_fraction is not None and (path.destination, path.source) not in listed:
            # The way back of a pair whose reverse has no run of its own: its sessions say it.
            back = label_set(PATH_LABELS, (path.destination, path.source, path.family))
            one_way.rows.append((back, state.backward_loss_fraction))
        if state.rate_bps is not None:
            rate.rows.append((labels, state.rate_bps / 8))
            if state.measured_at is not None:
                measured.rows.append((labels, _unix(state.measured_at)))
        if state.ceiling_bps:
            limit = _escape(state.diagnosis or "unknown")
            ceiling.rows.append((f'{{{inner},limit="{limit}"}}', state.ceiling_bps / 8))
        if (fraction := state.fraction_of_ceiling) is not None:
            ratio.rows.append((labels, fraction))
        if path.ecmp_members is not None:
            members.rows.append((labels, path.ecmp_members))
        for metric in FindingMetric.values:
            findings.rows.append((f'{{{inner},metric="{metric}"}}', path.open_findings.get(metric, 0)))
    return [*rtt, loss, one_way, rate, ceiling, ratio, measured, members, findings]


def mesh_info(pairs: list[tuple[str, str, str, str]]) -> TextFamily:
    labels = ("mesh", *PATH_LABELS)
    return TextFamily(
        "path_mesh_info",
        "1 for each mesh a path is planned in: join on source, destination and family for a mesh's paths.",
        [(label_set(labels, pair), 1) for pair in pairs],
    )


def agent_families(scrape: Scrape) -> Iterator[Metric]:
    up = _gauge("agent_up", "1 if the agent was seen within FATHOM_AGENT_OFFLINE_AFTER_S, else 0.", ["agent"])
    age = _gauge("agent_last_seen_age_seconds", "Seconds since the agent last reached the server.", ["agent"])
    info = _gauge(
        "agent_info", "The agent's kind, version and status (always 1).", ["agent", "kind", "version", "status"]
    )
    offset = _gauge(
        "agent_clock_offset_seconds",
        "The agent's clock less the server's when last seen (less the request's one-way delay).",
        ["agent"],
    )
    spooled = _gauge("agent_spool_results", "Results waiting in the agent's spool when last seen.", ["agent"])
    spooled_bytes = _gauge("agent_spool_bytes", "The bytes the agent's spooled results take.", ["agent"])
    for agent in scrape.agents:
        if agent.status in (AgentStatus.REVOKED, AgentStatus.DECOMMISSIONED):
            continue  # gone for good: no series to alert on
        up.add_metric([agent.name], 1 if agent.status == AgentStatus.ONLINE else 0)
        if agent.last_seen_age_s is not None:
            age.add_metric([agent.name], agent.last_seen_age_s)
        info.add_metric([agent.name, agent.kind, agent.version, agent.status], 1)
        # Only what the agent said: an older agent, or a perfSONAR node, has no series.
        if agent.clock_offset_s is not None:
            offset.add_metric([agent.name], agent.clock_offset_s)
        if agent.spool_results is not None and agent.spool_bytes is not None:
            spooled.add_metric([agent.name], agent.spool_results)
            spooled_bytes.add_metric([agent.name], agent.spool_bytes)
    yield from (up, age, info, offset, spooled, spooled_bytes)


def own_families(scrape: Scrape) -> Iterator[Metric]:
    outbox = _gauge("alert_outbox", "Alert deliveries waiting, by status.", ["status"])
    for status, number in sorted(scrape.outbox.items()):
        outbox.add_metric([status], number)
    yield outbox
    queues = _gauge("celery_queue_length", "Tasks waiting in each Celery queue.", ["queue"])
    for queue, length in sorted((scrape.queues or {}).items()):
        queues.add_metric([queue], length)
    yield queues
    store = _gauge("metrics_store_up", "1 if Redis, which holds Fathom's own counters, answered.", [])
    store.add_metric([], 0 if scrape.own is None else 1)
    yield store
    yield from stored_families(scrape.own or {})


# Label values other apps own, for the counters shown from zero (core.metrics.Family.values).
KNOWN_VALUES = {"kind": tuple(TestType.values), "channel_kind": tuple(ChannelKind.values)}


def stored_families(fields: dict[str, float]) -> Iterator[Metric]:
    """core.metrics' families, each declared even before its first value, and counters whose
    label values are all known shown from zero."""
    for family in metrics.FAMILIES:
        mine = {name: value for name, value in fields.items() if name.split(metrics.SEPARATOR, 1)[0] == family.name}
        if family.kind is metrics.FamilyKind.HISTOGRAM:
            yield _histogram(family, mine)
            continue
        made: CounterMetricFamily | GaugeMetricFamily
        if family.kind is metrics.FamilyKind.COUNTER:
            made = CounterMetricFamily(PREFIX + family.name, family.help, labels=list(family.labels))
        else:
            made = GaugeMetricFamily(PREFIX + family.name, family.help, labels=list(family.labels))
        series = {tuple(_label_values(family, name)): value for name, value in mine.items()}
        for labels in _known_combinations(family):
            series.setdefault(labels, 0.0)
        for labels, value in sorted(series.items()):
            made.add_metric(list(labels), value)
        yield made


def _known_combinations(family: metrics.Family) -> list[tuple[str, ...]]:
    if family.kind is not metrics.FamilyKind.COUNTER or not family.labels:
        return []
    known = dict(family.values) | {label: KNOWN_VALUES[label] for label in family.labels if label in KNOWN_VALUES}
    if set(known) != set(family.labels):
        return []
    return list(itertools.product(*(known[label] for label in family.labels)))


def _histogram(family: metrics.Family, fields: dict[str, float]) -> Metric:
    # Unlabelled histograms only (every one core.metrics declares): the fields are
    # "name|le=B" per bucket and "name|sum".
    histogram = HistogramMetricFamily(PREFIX + family.name, family.help, labels=[])
    in_bucket = {
        float(name.split("le=", 1)[1]): value for name, value in fields.items() if f"{metrics.SEPARATOR}le=" in name
    }
    cumulative, buckets = 0.0, []
    for bound in (*family.buckets, math.inf):
        cumulative += in_bucket.get(bound, 0.0)
        buckets.append(("+Inf" if math.isinf(bound) else f"{bound:g}", cumulative))
    histogram.add_metric([], buckets, fields.get(f"{family.name}{metrics.SEPARATOR}sum", 0.0))
    return histogram


def _label_values(family: metrics.Family, name: str) -> list[str]:
    pairs = name.split(metrics.SEPARATOR, 1)[1] if metrics.SEPARATOR in name else ""
    given = dict(pair.split("=", 1) for pair in pairs.split(",") if pair)
    return [given.get(label, "") for label in family.labels]


def _unix(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
