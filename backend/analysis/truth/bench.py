"""`make bench-truth`: Fathom's analysis judged against the labelled lab corpus.

Every recorded run goes through analysis.run_judgement.judge_run, the function the analysis
service calls, with the context the service would have: both hosts' reported facts, loss and
the minimum RTT from the pings taken while no throughput test ran, and the RTT modes of the
flow sweep before the runs. Printed, each figure beside its target:

- the confusion matrix of diagnoses (truth by rows), over the runs the emulator did not set;
- accuracy per run and per path (the consensus label of its runs), and the runs judged apart
  because the emulator sent over 5 % of their packets more than 1 ms late;
- the ceiling error where a window or a buffer binds: |ceiling - rate| / rate, the ceiling
  being the one the run's diagnosis says binds (binding_bps, what the UI shows), judged over
  the runs it held alone (loss recovery took under RECOVERY_SHARE_MAX of the measured time),
  with all runs beside it;
- ECMP members: recall of members with at least 5 % of flows, precision, mode RTT error;
- every wrong path, with the first line of its evidence.

    python -m analysis.truth.bench [--corpus FILE ...] [--wrong]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analysis.ceilings import Limit
from analysis.choices import Diagnosis
from analysis.modes import ModeVerdict, per_flow_modes
from analysis.path_label import path_label
from analysis.run_judgement import JudgedRun, PathContext, judge_run
from analysis.runs import MIN_LOSS_SAMPLES, wilson_lower_bound
from analysis.truth import alarms
from analysis.truth.alarms import path_alarms
from analysis.truth.corpus import LATE_SHARE_LIMIT, RecordedRun, Scenario, read

TARGET_RUN_ACCURACY = 0.95
TARGET_PATH_ACCURACY = 1.0
TARGET_CEILING_ERROR = 0.10
# A run whose retransmits, an RTT each, took more of its measured seconds than this was held
# by loss recovery as well as by its window: its rate says how much loss cost, not whether the
# window's ceiling is right (c022: 72-118 retransmits on a 13-17 ms path, 12-20 % below).
RECOVERY_SHARE_MAX = 0.05
MEMBER_MIN_SHARE = 0.05
TARGET_MODE_ERROR_MS = 0.3
# A found mode matches a configured member within this (the sweep's own timing adds a little).
MATCH_MS = 1.0
WINDOW_LABELS = {Diagnosis.RECEIVE_WINDOW.value: "receive_window", Diagnosis.SEND_BUFFER.value: "send_buffer"}
ORDER = [choice.value for choice in Diagnosis]
# The generator's label for a scenario whose runs meet their loss too rarely for one truth.
AMBIGUOUS = "ambiguous"


def _busy(runs: Sequence[RecordedRun], when: float) -> bool:
    return any(run.started_at <= when < run.ended_at for run in runs)


def context_of(scenario: Scenario) -> PathContext:
    """What the service would know of the path when the runs start: pings taken while no
    throughput test ran (the idle burst stands in for production's 6 h of pings) and the
    modes of the flow sweep before the runs."""
    pings = [rtt for when, rtt in [*scenario.idle_pings, *scenario.pings] if not _busy(scenario.runs, when)]
    sent, lost = len(pings), sum(1 for rtt in pings if rtt is None)
    answered = [rtt for rtt in pings if rtt is not None]
    loss = lost / sent if sent >= MIN_LOSS_SAMPLES else None
    idle_sweeps = [sweep for sweep in scenario.sweeps if not sweep.during_run]
    modes = per_flow_modes(idle_sweeps[0].flows, min_flows=12, min_samples_per_flow=8) if idle_sweeps else None
    ecmp = modes is not None and modes.verdict is ModeVerdict.ECMP
    return PathContext(
        loss_fraction=loss,
        loss_floor=wilson_lower_bound(lost, sent) if loss is not None else None,
        loss_source=f"ping: {lost} of {sent} lost" if loss is not None else f"only {sent} pings",
        ping_min_rtt_ms=min(answered) if answered else None,
        sweep_base_rtt_ms=min((mode.min_rtt_ms for mode in modes.modes), default=None) if modes else None,
        mode_rtts_ms=tuple(mode.rtt_ms for mode in modes.modes) if modes and ecmp else (),
        ecmp_seen=any(
            per_flow_modes(sweep.flows, min_flows=12, min_samples_per_flow=8).verdict is ModeVerdict.ECMP
            for sweep in idle_sweeps
        ),
    )


@dataclass
class PathOutcome:
    scenario: Scenario
    judged: list[tuple[RecordedRun, JudgedRun]] = field(default_factory=list)
    apart: list[tuple[RecordedRun, JudgedRun]] = field(default_factory=list)
    failed_runs: int = 0

    @property
    def consensus(self) -> str | None:
        labels = [judged.diagnosis.label for _, judged in reversed(self.judged)]
        label = path_label(labels)
        return label.diagnosis.value if label else None


def judge(scenario: Scenario) -> PathOutcome:
    outcome = PathOutcome(scenario)
    context = context_of(scenario)
    for run in scenario.runs:
        if not run.ok or not run.rows:
            outcome.failed_runs += 1
            continue
        judged = judge_run(run.summary, run.params, run.rows, scenario.sender, scenario.receiver, context)
        (outcome.apart if run.emulator_bound else outcome.judged).append((run, judged))
    return outcome


# A window truth whose runs went faster than the whole configured buffer allows at the path's
# smallest RTT, by more than this, did not bind: the kernel held the flow to something else.
DISPROVED_MARGIN = 1.1


def disproved(outcome: PathOutcome) -> str | None:
    """Why the runs show that the scenario's window truth cannot hold, or None.

    A window passes at most its whole buffer a round trip. c025 (cubic, MTU 9000, tcp_wmem
    688 KB, 118 ms) ran steady at 62.9 Mbit/s behind a 64 ms standing queue, 1.3 times what
    its whole send buffer allows: not a send-buffer limit, whatever the configuration says.
    """
    scenario = outcome.scenario
    buffer = {
        "send_buffer": scenario.sender.tcp_wmem_max_bytes,
        "receive_window": scenario.receiver.tcp_rmem_max_bytes,
    }.get(scenario.label)
    member_rtts = [float(member["rtt_ms"]) for member in scenario.truth.get("members", [])]
    rates = [judged.diagnosis.rate_bps for _, judged in outcome.judged if judged.diagnosis.rate_bps]
    if not buffer or not member_rtts or not rates:
        return None
    whole = buffer * 8 / (min(member_rtts) / 1000)
    median = statistics.median(rates)
    if median <= DISPROVED_MARGIN * whole:
        return None
    return (
        f"runs at {median / 1e6:.1f} Mbit/s, {median / whole:.1f} times what the whole "
        f"{buffer / 1024:.0f} KiB buffer allows: the kernel did not hold to it"
    )


def unjudged(outcome: PathOutcome) -> str | None:
    """Why a scenario has no single truth to judge against, or None."""
    if outcome.scenario.label == AMBIGUOUS:
        return str(outcome.scenario.truth.get("unclear", "too few loss events a run"))
    return disproved(outcome)


def recovery_share(judged: JudgedRun) -> float:
    """The share of the run's measured seconds its loss recoveries took, an RTT each."""
    stats, rtt_ms = judged.stats, judged.ceilings.at_min_rtt.rtt_ms
    if not stats.retransmits or not rtt_ms or not stats.intervals:
        return 0.0
    return stats.retransmits * rtt_ms / 1000 / stats.intervals


@dataclass
class Members:
    wanted: int = 0
    found: int = 0
    modes: int = 0
    matching: int = 0
    errors_ms: list[float] = field(default_factory=list)  # each found mode against the member it lies on
    lone_errors_ms: list[float] = field(default_factory=list)  # those of members no other is within MATCH_MS of
    member_errors_ms: list[float] = field(default_factory=list)  # each member >= 5 %: its nearest mode
    offsets_ms: list[float] = field(default_factory=list)
    pooled_wanted: int = 0
    pooled_found: int = 0


def member_figures(scenarios: Sequence[Scenario]) -> Members:
    """Each idle sweep's modes against the configured members (with their flow shares).

    A sweep's RTTs sit a common offset above the configured delays (the hosts' own stack and
    the echo responder, about 0.2-0.3 ms here), the same for every member: the mode error is
    measured after taking out that sweep's median offset, which is reported on its own."""
    figures = Members()
    for scenario in scenarios:
        members = [(float(m["rtt_ms"]), float(m["share"])) for m in scenario.truth.get("members", [])]
        for sweep in scenario.sweeps:
            if sweep.during_run or sweep.late_share > LATE_SHARE_LIMIT or not sweep.flows:
                continue
            found = [mode.rtt_ms for mode in per_flow_modes(sweep.flows, min_flows=12, min_samples_per_flow=8).modes]
            pairs = [(mode, min(members, key=lambda m: abs(m[0] - mode))[0]) for mode in found]
            matched = [(mode, member) for mode, member in pairs if abs(mode - member) <= MATCH_MS]
            offset = statistics.median(mode - member for mode, member in matched) if matched else 0.0
            figures.offsets_ms.append(offset)
            figures.modes += len(found)
            figures.matching += len(matched)
            for mode, member in matched:
                error = abs(mode - offset - member)
                figures.errors_ms.append(error)
                if all(abs(other - member) > MATCH_MS for other, _ in members if other != member):
                    figures.lone_errors_ms.append(error)
            for rtt, share in members:
                if share < MEMBER_MIN_SHARE:
                    continue
                figures.wanted += 1
                near = [mode for mode in found if abs(mode - rtt) <= MATCH_MS]
                if near:
                    figures.found += 1
                    figures.member_errors_ms.append(min(abs(mode - offset - rtt) for mode in near))
        # The scenario's idle sweeps pooled, as the path page pools the sweeps of an hour.
        idle = [flow for sweep in scenario.sweeps if not sweep.during_run for flow in sweep.flows]
        pooled = [mode.rtt_ms for mode in per_flow_modes(idle, min_flows=12, min_samples_per_flow=8).modes]
        for rtt, share in members:
            if share >= MEMBER_MIN_SHARE:
                figures.pooled_wanted += 1
                figures.pooled_found += any(abs(mode - rtt) <= MATCH_MS for mode in pooled)
    return figures


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%} ({part}/{whole})" if whole else "n/a"


def _verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "MISSED")


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def report(outcomes: Sequence[PathOutcome], scenarios: Sequence[Scenario], show_wrong: bool) -> list[str]:
    lines: list[str] = []
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    right_runs = total_runs = apart = apart_right = 0
    errors: dict[str, list[float]] = defaultdict(list)
    alone: dict[str, list[float]] = defaultdict(list)  # runs no loss recovery held as well
    planned: list[float] = []  # the send-buffer term at the planning share, against the rate
    right_paths = total_paths = 0
    wrong: list[str] = []
    reasons = {outcome.scenario.name: unjudged(outcome) for outcome in outcomes}
    ambiguous = [f"{name} ({reason})" for name, reason in reasons.items() if reason]
    for outcome in outcomes:
        if reasons[outcome.scenario.name]:
            continue
        accepted = outcome.scenario.accepted
        for _, judged in outcome.judged:
            label = judged.diagnosis.label.value
            confusion[outcome.scenario.label][label] += 1
            total_runs += 1
            right_runs += label in accepted
            limit = WINDOW_LABELS.get(outcome.scenario.label)
            rate, binding = judged.diagnosis.rate_bps, judged.diagnosis.binding_bps
            if limit and rate and binding and label == outcome.scenario.label:
                errors[limit].append(abs(binding - rate) / rate)
                if recovery_share(judged) < RECOVERY_SHARE_MAX:
                    alone[limit].append(abs(binding - rate) / rate)
                term = judged.ceilings.at_min_rtt.ceilings.terms()[Limit.SEND_BUFFER].rate_bps
                if limit == "send_buffer" and term:
                    planned.append(abs(term - rate) / rate)
        for _, judged in outcome.apart:
            apart += 1
            apart_right += judged.diagnosis.label.value in accepted
        consensus = outcome.consensus
        if consensus is None:
            continue
        total_paths += 1
        if consensus in accepted:
            right_paths += 1
        else:
            first = outcome.judged[-1][1].diagnosis.evidence[0] if outcome.judged else ""
            wrong.append(f"  {outcome.scenario.name}: truth {outcome.scenario.label}, said {consensus}: {first}")
    lines.append("Diagnosis confusion matrix (truth by rows; runs the emulator did not set)")
    shown = [label for label in ORDER if any(confusion[row][label] for row in confusion)]
    lines.append(f"  {'truth':<16}" + "".join(f"{label[:12]:>13}" for label in shown))
    for truth_label in ORDER:
        if confusion[truth_label]:
            lines.append(f"  {truth_label:<16}" + "".join(f"{confusion[truth_label][label]:>13}" for label in shown))
    lines.append("")
    lines.append(f"{'figure':<44}{'measured':>22}{'target':>12}  verdict")

    def row(name: str, measured: str, target: str, met: bool | None) -> None:
        lines.append(f"{name:<44}{measured:>22}{target:>12}  {_verdict(met)}")

    run_share = right_runs / total_runs if total_runs else None
    row("runs labelled right", _share(right_runs, total_runs), ">= 95%",
        None if run_share is None else run_share >= TARGET_RUN_ACCURACY)  # fmt: skip
    path_share = right_paths / total_paths if total_paths else None
    row("paths labelled right (consensus)", _share(right_paths, total_paths), "100%",
        None if path_share is None else path_share >= TARGET_PATH_ACCURACY)  # fmt: skip
    row("runs judged apart (emulator late)", f"{apart} ({apart_right} right)", "-", None)
    row("runs that failed", str(sum(outcome.failed_runs for outcome in outcomes)), "-", None)
    for limit in ("receive_window", "send_buffer"):
        rows = [
            (f"{limit} ceiling error", alone.get(limit, []), True),
            ("  all its runs, loss recovery included", errors.get(limit, []), False),
        ]
        if limit == "send_buffer":
            # The binding rate uses the share of the buffer the run kept in flight; the term
            # at the planning share is what a path that has not shown its own gets.
            rows.append(("  its term at the planning share", planned, False))
        for name, values, judged_here in rows:
            if not values:
                row(name, "no runs", "<= 10%" if judged_here else "-", None)
                continue
            within = sum(1 for value in values if value <= TARGET_CEILING_ERROR)
            measured = f"p50 {statistics.median(values):.1%}, p90 {_quantile(values, 0.9):.1%}"
            row(f"{name} ({_share(within, len(values))} <=10%)", measured, "<= 10%" if judged_here else "-",
                _quantile(values, 0.9) <= TARGET_CEILING_ERROR if judged_here else None)  # fmt: skip
    members = member_figures(scenarios)
    # The target is per hour of sweeps pooled; a scenario holds two idle sweeps, not an hour:
    # both figures are shown for what they are, without a verdict.
    row("ECMP members (>=5% of flows), per 16-flow sweep", _share(members.found, members.wanted), "-", None)
    row("  the scenario's 2 idle sweeps pooled", _share(members.pooled_found, members.pooled_wanted),
        ">=95%/hour", None)  # fmt: skip
    row("ECMP modes that are real members", _share(members.matching, members.modes), "-", None)
    if members.errors_ms:
        # The target is the RTT of the modes Fathom reports: each against the member it lies on.
        # Members a few tenths apart (fifteen RTTs of five members forward and three back) are
        # one mode to a 16-flow sweep; its error is shown per member too, where such a mode
        # counts against every member it merges, without a verdict.
        p50, p90 = statistics.median(members.errors_ms), _quantile(members.errors_ms, 0.9)
        row("ECMP mode RTT error, each mode (offset out)", f"p50 {p50:.2f}, p90 {p90:.2f} ms", "<= 0.3 ms",
            p90 <= TARGET_MODE_ERROR_MS)  # fmt: skip
        if members.lone_errors_ms:
            lone = members.lone_errors_ms
            row(f"  of members >{MATCH_MS:g} ms from any other", f"p50 {statistics.median(lone):.2f}, "
                f"p90 {_quantile(lone, 0.9):.2f} ms", "-", None)  # fmt: skip
        if members.member_errors_ms:
            per = members.member_errors_ms
            row("  per member >=5%, its nearest mode", f"p50 {statistics.median(per):.2f}, "
                f"p90 {_quantile(per, 0.9):.2f} ms", "-", None)  # fmt: skip
        row("sweep RTT offset over the configured delay", f"p50 {statistics.median(members.offsets_ms):.2f} ms", "-",
            None)  # fmt: skip
    if ambiguous:
        lines.append(f"scenarios with no single truth, not judged ({len(ambiguous)}): " + ", ".join(ambiguous))
    broken = [scenario.name for scenario in scenarios if scenario.error]
    if broken:
        lines.append(f"scenarios not recorded ({len(broken)}): {', '.join(broken)}")
    if show_wrong and wrong:
        lines.append("")
        lines.append("Wrong paths:")
        lines.extend(wrong)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, nargs="*", help="corpus files (default: all of analysis/truth/corpus)")
    parser.add_argument("--wrong", action="store_true", help="list every wrong path")
    parser.add_argument("--labels-only", action="store_true", help="leave out the regression rules' series")
    args = parser.parse_args()
    scenarios = list(read(args.corpus))
    recorded = [scenario for scenario in scenarios if not scenario.error]
    outcomes = [judge(scenario) for scenario in recorded]
    runs = sum(len(scenario.runs) for scenario in recorded)
    print(f"bench-truth: {len(recorded)} scenarios, {runs} throughput runs")
    print("\n".join(report(outcomes, scenarios, args.wrong)))
    if args.labels_only:
        return
    judged = [outcome for outcome in outcomes if outcome.scenario.label != AMBIGUOUS]
    paths = [path_alarms(outcome.scenario, [run for _, run in outcome.judged]) for outcome in judged]
    print("\n".join(alarms.report(paths)))


if __name__ == "__main__":
    main()
