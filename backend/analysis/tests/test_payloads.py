"""The analysis payloads against contract/analysis.v1.schema.json: what the pure modules really
produce matches it, what breaks it is refused, and its enums are the analysis's own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest

from analysis.ceilings import Limit
from analysis.changes.episodes import Episode, Point
from analysis.changes.loss import loss_rule
from analysis.changes.policer_rate import RampPoint, policer_rate_rule
from analysis.changes.routes import route_changes
from analysis.changes.rtt import RttStatistic, rtt_cusum
from analysis.changes.throughput import throughput_fast_rule, throughput_slow_rule
from analysis.changes.windows import RttWindow
from analysis.choices import Diagnosis, RttModeVerdict
from analysis.diagnosis import diagnose
from analysis.intervals import interval_stats
from analysis.modes import FlowRtts, ModeVerdict, TimeModeKind, per_flow_modes, time_separated_modes
from analysis.payloads import SCHEMA, PayloadError, checked
from analysis.runs import RunFacts, RunInputs, run_ceilings
from analysis.tests.test_diagnosis import grnet_default, host, steady_rows
from analysis.tuning import HostTuning
from core import contract

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DEFS: dict[str, Any] = contract.load(SCHEMA)["$defs"]
EXAMPLES = contract.EXAMPLES_DIR / "analysis"
SOURCES = {"sender_facts": "host facts of 2026-01-01", "receiver_facts": "none", "loss": "ping", "modes": "none"}


def enum(name: str) -> list[str]:
    return list(DEFS[name]["enum"])


def test_the_contract_enums_are_the_analysis_enums() -> None:
    assert enum("Limit") == [limit.value for limit in Limit]
    assert enum("TermName") == [limit.value for limit in Limit if limit is not Limit.UNKNOWN]
    assert list(DEFS["CeilingTerms"]["properties"]) == enum("TermName")
    assert enum("Diagnosis") == list(Diagnosis.values)
    assert enum("ModeVerdict") == list(RttModeVerdict.values) == [verdict.value for verdict in ModeVerdict]
    assert enum("TimeModeKind") == [kind.value for kind in TimeModeKind]
    assert enum("RttStatistic") == list(get_args(RttStatistic))


def test_every_object_is_closed_and_requires_what_it_always_has() -> None:
    for name, definition in DEFS.items():
        if definition.get("type") != "object":
            continue
        assert definition["additionalProperties"] is False, name
        optional = set(definition["properties"]) - set(definition["required"])
        # Only evidence has keys that come later: why a finding was cleared, what the service
        # adds to a rule's evidence (how many runs it judged on a slower ECMP member), and the
        # span of a loss step pooled over hours (findings stored before it have no such key).
        assert optional <= {"cleared", "cleared_by_change_at", "member_scaled", "pooled_s"}, name


def test_host_tuning_has_every_field_of_the_dataclass() -> None:
    assert list(DEFS["HostTuning"]["properties"]) == list(HostTuning.__dataclass_fields__)


@pytest.mark.parametrize(
    "facts",
    [
        grnet_default(),
        grnet_default(mode_rtts_ms=(), run_mean_rtt_ms=None, loss_fraction=1e-4, window_request_bytes=8 * 2**20),
        RunFacts(streams=1, sender=HostTuning(), receiver=HostTuning()),  # nothing known: every term unknown
    ],
    ids=["two-modes", "one-mode", "unknown"],
)
def test_run_payloads_validate(facts: RunFacts) -> None:
    ceilings = run_ceilings(facts)
    stats = interval_stats(steady_rows(3.05e9, snd_wnd=3_300_000, snd_cwnd=5_000_000), facts.mss_bytes)
    checked("RunCeilings", ceilings.to_dict())
    checked("IntervalStats", stats.to_dict())
    checked("IntervalStats", interval_stats([], None).to_dict())
    checked("RunEvidence", diagnose(ceilings, stats, facts).to_dict())
    checked("RunInputs", RunInputs(facts, SOURCES).to_dict())
    now = {**ceilings.to_dict(), "inputs": RunInputs(facts, SOURCES).to_dict(), "options_of_run": str(uuid.uuid4())}
    checked("CeilingsNow", now)
    for mode in ceilings.per_mode:
        checked("CeilingSet", mode.to_dict())


def flows(bases_ms: list[float]) -> list[FlowRtts]:
    rng = np.random.default_rng(7)
    return [
        FlowRtts(index, 40000 + index, tuple(base + rng.exponential(0.1, 10))) for index, base in enumerate(bases_ms)
    ]


def test_sweep_and_time_mode_payloads_validate() -> None:
    for bases in ([7.8] * 8 + [11.9] * 8, [7.8] * 16, [7.8] * 3):
        checked("SweepAnalysis", per_flow_modes(flows(bases), min_flows=12).to_dict())
    hour = timedelta(hours=1)
    for levels in ([8.0] * 6, [8.0] * 3 + [12.0] * 3, [8.0, 8.0, 12.0, 8.0, 8.0, 12.0, 8.0, 8.0], [1.0]):
        modes = time_separated_modes([(T0 + index * hour, level) for index, level in enumerate(levels)])
        checked("TimeModes", modes.to_dict())


def rule_episodes() -> dict[str, list[Episode]]:
    """One episode or more from every rule, open and cleared."""
    six_hours = timedelta(hours=6)
    drop = [1e9 * (1 + 0.01 * (index % 3)) for index in range(40)] + [0.6e9] * 5 + [1.02e9] * 5
    fast = throughput_fast_rule([Point(T0 + index * six_hours, rate) for index, rate in enumerate(drop)])
    step = [1e9 * (1 + 0.01 * (index % 3)) for index in range(60)] + [0.8e9] * 30 + [1e9] * 30
    slow = throughput_slow_rule([Point(T0 + index * six_hours, rate) for index, rate in enumerate(step)])
    minute = timedelta(minutes=5)
    rtts = [8.0 + 0.01 * (index % 3) for index in range(100)] + [10.0] * 20 + [8.0] * 10
    windows = [RttWindow(T0 + i * minute, T0 + (i + 1) * minute, 300, 0, v, v, v) for i, v in enumerate(rtts)]
    lost = [0] * 50 + [9] * 5 + [0] * 10 + [12] * 3
    losses = [RttWindow(T0 + i * minute, T0 + (i + 1) * minute, 300, n, 8.0, 8.0, 8.0) for i, n in enumerate(lost)]
    sets = [{"a", "b"}] * 10 + [{"c"}] * 10 + [{"a"}] * 3
    traces = [(T0 + index * minute, frozenset(prints)) for index, prints in enumerate(sets)]
    sawing = [40e6, 30e6, 36e6, 25e6, 38e6, 28e6, 33e6, 41e6, 27e6, 35e6, 24e6, 30e6, 45e6]
    tcp = [Point(T0 + index * six_hours, rate) for index, rate in enumerate(sawing)]
    ramps = [RampPoint(T0 + index * six_hours, rate) for index, rate in ((2, 50e6), (11, 37e6), (12, 49e6))]
    return {
        "ThroughputFastEvidence": fast,
        "ThroughputSlowEvidence": slow,
        "PolicerRampEvidence": policer_rate_rule(ramps, tcp),
        "RttCusumEvidence": rtt_cusum(windows, baseline_s=3600),
        "LossEvidence": loss_rule(losses),
        "RouteEvidence": route_changes(traces),
    }


def test_every_rule_s_evidence_validates_as_finding_evidence() -> None:
    found = rule_episodes()
    for definition, episodes in found.items():
        assert episodes, f"no {definition} episode to check"
        for episode in episodes:
            checked(definition, episode.evidence)
            checked("FindingEvidence", episode.evidence)
            checked("FindingEvidence", {**episode.evidence, "cleared": "no rule confirms it on the current data"})
    assert any(episode.cleared_at for episode in found["ThroughputFastEvidence"])
    assert any("cleared_by_change_at" in episode.evidence for episode in found["ThroughputSlowEvidence"])
    assert all(episode.cleared_at for episode in found["PolicerRampEvidence"])


def test_an_extra_key_a_wrong_enum_or_a_missing_key_is_refused() -> None:
    evidence = diagnose(run_ceilings(grnet_default()), interval_stats(steady_rows(3e9), 8948), grnet_default())
    good = checked("RunEvidence", evidence.to_dict())
    with pytest.raises(PayloadError, match=r"RunEvidence breaks analysis\.v1\.schema\.json at the top level"):
        checked("RunEvidence", {**good, "confidence": 0.9})
    with pytest.raises(PayloadError, match="at label: 'slow_host' is not one of"):
        checked("RunEvidence", {**good, "label": "slow_host"})
    with pytest.raises(PayloadError, match="'not_converged' is a required property"):
        checked("RunEvidence", {key: value for key, value in good.items() if key != "not_converged"})
    ceilings = run_ceilings(grnet_default()).to_dict()
    with pytest.raises(PayloadError, match="at at_min_rtt/limit"):
        checked("RunCeilings", {**ceilings, "at_min_rtt": {**ceilings["at_min_rtt"], "limit": "cpu"}})
    terms = {**ceilings["per_mode"][0]["terms"], "pacing": {"rate_bps": 1e9, "reason": ""}}
    with pytest.raises(PayloadError, match="at per_mode/0/terms"):
        checked("RunCeilings", {**ceilings, "per_mode": [{**ceilings["per_mode"][0], "terms": terms}]})
    with pytest.raises(PayloadError, match="FindingEvidence"):
        checked("FindingEvidence", {})
    with pytest.raises(PayloadError, match="FindingEvidence"):
        checked("FindingEvidence", {**rule_episodes()["LossEvidence"][0].evidence, "note": "extra"})
    with pytest.raises(PayloadError):
        checked("TimeModes", {"kind": "flapping", "levels_ms": [], "change_times": [], "reason": ""})
    with pytest.raises(PayloadError):
        checked("RunInputs", {**RunInputs(grnet_default(sender=host(None)), SOURCES).to_dict(), "streams": 0})


def example_files(kind: str) -> list[Path]:
    return sorted((EXAMPLES / kind).glob("*.json"))


@pytest.mark.parametrize("path", example_files("valid"), ids=lambda path: path.name)
def test_valid_examples_validate(path: Path) -> None:
    """contract/examples/analysis/valid/<Definition>[.<case>].json, real outputs of the analysis."""
    checked(path.name.split(".")[0], contract.example(f"analysis/valid/{path.name}"))


@pytest.mark.parametrize("path", example_files("invalid"), ids=lambda path: path.name)
def test_invalid_examples_are_refused(path: Path) -> None:
    with pytest.raises(PayloadError):
        checked(path.name.split(".")[0], contract.example(f"analysis/invalid/{path.name}"))


def test_there_are_examples_of_every_payload_the_api_shows() -> None:
    shown = {"RunCeilings", "RunEvidence", "RunInputs", "IntervalStats", "CeilingsNow", "TimeModes", "FindingEvidence"}
    assert shown <= {path.name.split(".")[0] for path in example_files("valid")}
    assert example_files("invalid")
