"""The labelled lab corpus, read back: scenarios with their truth and what the agents reported.

`make lab-corpus` (tests/lab/lab_corpus.py) writes one gzipped JSON line per scenario into
corpus/; this module turns each line into the plain values the analysis takes: both hosts'
tuning (HostTuning.from_facts, as the service reads stored host facts), each run's iperf3
options, summary and interval rows (as ingest stores a throughput result), the flow sweeps'
per-flow RTTs, the pings with the times Fathom's own runs loaded the path, and, where
`lab_corpus --ramps` recorded them (corpus/ramps/, the same file names), the paced UDP ramps
Fathom would run through a policed path.

Pure: no Django settings, no database.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from analysis.intervals import IntervalRow
from analysis.modes import FlowRtts
from analysis.policer import RampStep, ramp_steps
from analysis.tuning import HostTuning

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
RAMPS_DIR = CORPUS_DIR / "ramps"
# A run whose emulator sent more than this share of its packets over 1 ms late was shaped by
# the emulator's CPU, not by the configured network: it is judged apart.
LATE_SHARE_LIMIT = 0.05


def params_and_summary(throughput: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What ingest stores of a throughput section as the run's params and summary
    (measurements.kinds.throughput.params_and_summary; a test holds the two together)."""
    details = {key: value for key, value in throughput.items() if key not in ("options", "intervals", "summary")}
    return dict(throughput.get("options") or {}), {**(throughput.get("summary") or {}), **details}


def interval_rows(throughput: dict[str, Any]) -> list[IntervalRow]:
    return [
        IntervalRow(
            stream=item["stream"],
            start_s=item["start_s"],
            end_s=item["end_s"],
            omitted=item["omitted"],
            sender=item["sender"],
            bytes=item["bytes"],
            bits_per_s=item["bits_per_s"],
            retransmits=item.get("retransmits"),
            snd_cwnd_bytes=item.get("snd_cwnd"),
            snd_wnd_bytes=item.get("snd_wnd"),
            rtt_us=item.get("rtt_us"),
            pmtu=item.get("pmtu"),
        )
        for item in throughput.get("intervals") or []
    ]


def _time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True)
class RecordedRun:
    started_at: float  # unix seconds
    ended_at: float
    ok: bool
    error: str
    params: dict[str, Any]
    summary: dict[str, Any]
    rows: list[IntervalRow]
    late_share: float  # of the emulator's departures over the run, over 1 ms late

    @property
    def emulator_bound(self) -> bool:
        return self.late_share > LATE_SHARE_LIMIT


@dataclass(frozen=True)
class RecordedSweep:
    started_at: float
    flows: list[FlowRtts]
    during_run: bool
    late_share: float


@dataclass(frozen=True)
class RecordedRamp:
    started_at: float
    steps: list[RampStep]
    late_share: float

    @property
    def emulator_bound(self) -> bool:
        return self.late_share > LATE_SHARE_LIMIT


@dataclass(frozen=True)
class Scenario:
    name: str
    truth: dict[str, Any]
    draw: dict[str, Any]
    error: str
    sender: HostTuning  # tx: the data flows tx -> rx whichever end is iperf3's client
    receiver: HostTuning
    runs: list[RecordedRun]
    sweeps: list[RecordedSweep]
    pings: list[tuple[float, float | None]]  # (unix time, RTT ms or None: lost)
    idle_pings: list[tuple[float, float | None]]
    ramps: list[RecordedRamp] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.truth["label"])

    @property
    def accepted(self) -> set[str]:
        return {self.label, *self.truth.get("also", [])}


def _late(item: dict[str, Any]) -> float:
    return float((item.get("lab_lateness") or {}).get("share_over_1ms") or 0.0)


def _run(result: dict[str, Any]) -> RecordedRun:
    section = result.get("throughput") or {}
    params, summary = params_and_summary(section)
    return RecordedRun(
        started_at=_time(result["started_at"]),
        ended_at=_time(result["ended_at"]),
        ok=result.get("status") == "ok",
        error=str(result.get("error") or ""),
        params=params,
        summary=summary,
        rows=interval_rows(section),
        late_share=_late(result),
    )


def _sweep(result: dict[str, Any]) -> RecordedSweep:
    by_flow: dict[tuple[int, int], list[float]] = defaultdict(list)
    for sample in (result.get("flowsweep") or {}).get("samples") or []:
        answered = by_flow[(sample["flow"], sample["src_port"])]
        if sample.get("rtt_ms") is not None:
            answered.append(float(sample["rtt_ms"]))
    flows = [FlowRtts(flow, port, tuple(rtts)) for (flow, port), rtts in sorted(by_flow.items())]
    return RecordedSweep(_time(result["started_at"]), flows, bool(result.get("during_run")), _late(result))


def _pings(section: dict[str, Any] | None) -> list[tuple[float, float | None]]:
    return [(float(when), None if rtt is None else float(rtt)) for when, rtt in (section or {}).get("samples") or []]


def _ramp(result: dict[str, Any]) -> RecordedRamp | None:
    if result.get("status") != "ok":
        return None
    _, summary = params_and_summary(result.get("throughput") or {})  # the steps sit beside the summary
    steps = ramp_steps(summary)
    return RecordedRamp(_time(result["started_at"]), steps, _late(result)) if steps else None


def _ramps_of(path: Path) -> dict[str, list[RecordedRamp]]:
    """The ramps recorded for the scenarios of a corpus file, by scenario name."""
    ramps_path = RAMPS_DIR / path.name
    if not ramps_path.exists():
        return {}
    found: dict[str, list[RecordedRamp]] = {}
    with gzip.open(ramps_path, "rt") as lines:
        for line in lines:
            if line.strip():
                entry = json.loads(line)
                found[entry["name"]] = [ramp for result in entry.get("ramps") or [] if (ramp := _ramp(result))]
    return found


def scenario(entry: dict[str, Any], ramps: Sequence[RecordedRamp] = ()) -> Scenario:
    facts = entry.get("host_facts") or {}
    addresses = entry.get("addresses") or {}
    return Scenario(
        name=entry["name"],
        truth=entry["truth"],
        draw=entry.get("draw") or {},
        error=str(entry.get("error") or ""),
        sender=HostTuning.from_facts(facts.get("tx"), addresses.get("tx")),
        receiver=HostTuning.from_facts(facts.get("rx"), addresses.get("rx")),
        runs=[_run(result) for result in entry.get("runs") or []],
        sweeps=[_sweep(result) for result in entry.get("sweeps") or []],
        pings=_pings(entry.get("pings")),
        idle_pings=_pings(entry.get("idle_pings")),
        ramps=list(ramps),
    )


def read(paths: Sequence[Path] | None = None) -> Iterator[Scenario]:
    """Every scenario of the corpus files (all of corpus/ by default), in file order."""
    for path in paths if paths is not None else sorted(CORPUS_DIR.glob("*.jsonl.gz")):
        ramps = _ramps_of(path)
        with gzip.open(path, "rt") as lines:
            try:
                for line in lines:
                    if line.strip():
                        entry = json.loads(line)
                        yield scenario(entry, ramps.get(entry["name"], ()))
            except EOFError:
                # A corpus still being recorded (.partial) ends at its last whole scenario.
                if not path.name.endswith(".partial"):
                    raise
