"""Changes of a path's ECMP members, from its flow sweeps: a member moving, appearing or
vanishing, and the share of flows per member shifting.

Pure. A flow sweep hashes its flows afresh each time, so what one sweep shows is a draw: a
member of share 1/4 gets fewer than the two flows a mode needs in 6% of 16-flow sweeps, and
a member of 1 in 128 shows in fewer than 1%. Every rule therefore asks how likely chance
alone makes what it sees, and confirms over several sweeps:

- members are learned from the sweeps of the first `baseline_s` (the modes of every sweep
  clustered by RTT; a member's spread is 1.4826 x MAD of its sightings, and its reach the
  farthest of them: a mode within reach of a member is that member's);
- `ecmp_member_moved`: a sweep shows as many modes as there are members, paired in RTT
  order, each mode its own member's or no member's, and one lies more than max(0.5 ms, 5%,
  4 spreads, reach + spread) from its member, in 2 such sweeps in a row on the same side;
- `ecmp_member_appeared`: beside every member, a mode no member explains, at one RTT, in 3
  of the last 4 sweeps (a 1-in-128 member the baseline missed does that about once a century);
- `ecmp_member_vanished`: a member missing from consecutive sweeps in which everything
  seen matched other members, until the chance of that, the product over those sweeps of
  P(fewer than 2 of the sweep's flows on a member of its share), is below 1e-6;
- `ecmp_weights_shifted`: over the last 32 sweeps, one member's share of the flows in modes
  differs from its baseline share by at least 15 percentage points with a binomial
  two-sided p below 1e-4, in 2 evaluations in a row.

An episode clears after 3 sweeps in a row without its condition; while open, its level is
the latest sweeps'. Sweeps with no flows, and
modes whose RTT is not a positive finite number or whose flows are not positive or exceed
the sweep's, are skipped (counted in the evidence as `skipped_sweeps`).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from analysis.changes.episodes import MAD_TO_SIGMA, Direction, Episode, Metric, iso, mad

SPREAD_FLOOR_MS = 0.05
CLEAR_SWEEPS = 3


@dataclass(frozen=True)
class ModeObservation:
    """One RTT mode of a sweep: its RTT and how many of the sweep's flows lay on it."""

    rtt_ms: float
    flows: int


@dataclass(frozen=True)
class SweepObservation:
    """One flow sweep: when, how many flows it used, and its modes (any order)."""

    time: datetime
    flows: int
    modes: tuple[ModeObservation, ...]


@dataclass(frozen=True)
class Member:
    rtt_ms: float
    spread_ms: float
    share: float  # of the flows in modes over the baseline
    sightings: int
    # The farthest sighting from rtt_ms: members a few tenths of a millisecond apart chain
    # into one cluster, and a later sweep that shows only one of them is no new member.
    reach_ms: float = 0.0


@dataclass
class _Open:
    rule: str
    key: int  # member index (or -1 for a new member)
    started: int
    detected: int
    direction: Direction
    baseline: float
    current: float
    magnitude: float
    evidence: dict[str, object]
    quiet: int = 0


@dataclass
class _Tracker:
    """One rule's state: the open episode per key, and the episodes already closed."""

    opened: dict[int, _Open] = field(default_factory=dict)
    closed: list[tuple[_Open, int]] = field(default_factory=list)

    def seen(self, key: int, make: _Open) -> None:
        """Opens the episode, or keeps it open with its level as the latest sweeps show it."""
        current = self.opened.get(key)
        if current is None:
            self.opened[key] = make
        else:
            current.quiet = 0
            current.current, current.magnitude, current.evidence = make.current, make.magnitude, make.evidence

    def quiet(self, key: int, index: int) -> None:
        current = self.opened.get(key)
        if current is None:
            return
        current.quiet += 1
        if current.quiet >= CLEAR_SWEEPS:
            self.closed.append((current, index - CLEAR_SWEEPS + 1))
            del self.opened[key]


def _clean(sweeps: Sequence[SweepObservation]) -> tuple[list[SweepObservation], int]:
    usable: list[SweepObservation] = []
    skipped = 0
    for sweep in sorted(sweeps, key=lambda s: s.time):
        modes = tuple(
            sorted(
                (m for m in sweep.modes if math.isfinite(m.rtt_ms) and m.rtt_ms > 0 and m.flows > 0),
                key=lambda m: m.rtt_ms,
            )
        )
        if sweep.flows <= 0 or not modes or any(m.flows > sweep.flows for m in modes):
            skipped += 1
            continue
        usable.append(SweepObservation(sweep.time, sweep.flows, modes))
    return usable, skipped


def _tolerance(member: Member, min_ms: float, fraction: float, sigmas: float) -> float:
    return max(min_ms, fraction * member.rtt_ms, sigmas * member.spread_ms, member.reach_ms + member.spread_ms)


def learn_members(sweeps: Sequence[SweepObservation], *, min_ms: float = 0.5, fraction: float = 0.05) -> list[Member]:
    """The members the sweeps show: their modes clustered by RTT (a new cluster where the
    gap to the previous sighting exceeds max(min_ms, fraction x RTT)), fastest first."""
    sightings = sorted((m.rtt_ms, m.flows) for sweep in sweeps for m in sweep.modes)
    clusters: list[list[tuple[float, int]]] = []
    for rtt, flows in sightings:
        if clusters and rtt - clusters[-1][-1][0] <= max(min_ms, fraction * rtt):
            clusters[-1].append((rtt, flows))
        else:
            clusters.append([(rtt, flows)])
    total = sum(flows for _, flows in sightings) or 1
    members: list[Member] = []
    for cluster in clusters:
        rtts = [rtt for rtt, _ in cluster]
        center = statistics.median(rtts)
        spread = max(MAD_TO_SIGMA * mad(rtts, center), SPREAD_FLOOR_MS)
        reach = max(abs(rtt - center) for rtt in rtts)
        members.append(Member(center, spread, sum(flows for _, flows in cluster) / total, len(cluster), reach))
    return members


def _match(
    modes: Sequence[ModeObservation], members: Sequence[Member], tolerances: Sequence[float]
) -> list[int | None]:
    """Per mode, the member within its tolerance nearest to it (None: no member explains it)."""
    found: list[int | None] = []
    for mode in modes:
        near = [
            (abs(mode.rtt_ms - m.rtt_ms), i)
            for i, m in enumerate(members)
            if abs(mode.rtt_ms - m.rtt_ms) <= tolerances[i]
        ]
        found.append(min(near)[1] if near else None)
    return found


def _absent_chance(share: float, flows: int) -> float:
    """P(fewer than 2 of `flows` flows hash onto a member of this share): it shows no mode."""
    share = min(max(share, 0.0), 1.0)
    return (1 - share) ** flows + flows * share * (1 - share) ** (flows - 1)


def _binomial_p(successes: int, trials: int, share: float) -> float:
    """Two-sided p of `successes` in `trials` at `share` (normal approximation)."""
    if trials <= 0 or not 0 < share < 1:
        return 1.0
    z = (successes - trials * share) / math.sqrt(trials * share * (1 - share))
    return math.erfc(abs(z) / math.sqrt(2))


def ecmp_changes(
    sweeps: Sequence[SweepObservation],
    *,
    baseline_s: float = 86400,
    min_baseline: int = 16,
    move_min_ms: float = 0.5,
    move_fraction: float = 0.05,
    move_sigmas: float = 4.0,
    vanish_p: float = 1e-6,
    shift_window: int = 32,
    shift_min: float = 0.15,
    shift_p: float = 1e-4,
) -> list[Episode]:
    """Every ECMP change the sweeps show after their baseline (see the module's docstring)."""
    usable, skipped = _clean(sweeps)
    if not usable:
        return []
    baseline_end = usable[0].time + timedelta(seconds=baseline_s)
    baseline = [s for s in usable if s.time < baseline_end]
    if len(baseline) < min_baseline:
        return []
    members = learn_members(baseline, min_ms=move_min_ms, fraction=move_fraction)
    tolerances = [_tolerance(m, move_min_ms, move_fraction, move_sigmas) for m in members]
    rest = usable[len(baseline) :]
    times = [s.time for s in rest]
    trackers = {name: _Tracker() for name in ("moved", "appeared", "vanished", "shifted")}
    moved_run: dict[int, list[tuple[int, float]]] = {}
    appeared_recent: deque[float | None] = deque(maxlen=4)
    absent_run: dict[int, tuple[int, float]] = {}
    window: deque[list[int]] = deque(maxlen=shift_window)  # flows per member of fully matched sweeps
    shift_run: dict[int, int] = {}
    base_info = {
        "members_rtt_ms": [m.rtt_ms for m in members],
        "members_share": [m.share for m in members],
        "baseline_sweeps": len(baseline),
        "baseline_from": iso(baseline[0].time),
        "skipped_sweeps": skipped,
    }

    for index, sweep in enumerate(rest):
        matched = _match(sweep.modes, members, tolerances)
        unexplained = [mode for mode, member in zip(sweep.modes, matched, strict=True) if member is None]
        seen = {member for member in matched if member is not None}

        # A member moved: every member shows, one where it should not (RTT order pairs them).
        moved_now: set[int] = set()
        # Paired in RTT order, each mode is its own member's or no member's: a clean move.
        paired = all(owner in (position, None) for position, owner in enumerate(matched))
        if len(members) >= 2 and len(sweep.modes) == len(members) and paired:
            for i, (mode, member) in enumerate(zip(sweep.modes, members, strict=True)):
                delta = mode.rtt_ms - member.rtt_ms
                if abs(delta) > tolerances[i]:
                    run = moved_run.setdefault(i, [])
                    if run and (run[-1][1] > 0) != (delta > 0):
                        run.clear()
                    run.append((index, delta))
                    moved_now.add(i)
                    if len(run) >= 2:
                        current = statistics.median([d for _, d in run]) + member.rtt_ms
                        trackers["moved"].seen(
                            i,
                            _Open(
                                "ecmp_member_moved",
                                i,
                                run[0][0],
                                index,
                                Direction.UP if delta > 0 else Direction.DOWN,
                                member.rtt_ms,
                                current,
                                current - member.rtt_ms,
                                {
                                    "member": i + 1,
                                    "member_rtt_ms": member.rtt_ms,
                                    "member_spread_ms": member.spread_ms,
                                    "tolerance_ms": tolerances[i],
                                    "rtts_ms": [d + member.rtt_ms for _, d in run[-10:]],
                                    "sweeps_moved": len(run),
                                },
                            ),
                        )
            for i in range(len(members)):
                if i not in moved_now:
                    moved_run.pop(i, None)
                    trackers["moved"].quiet(i, index)

        # A member appeared: beside every member, a mode at one new RTT in 3 of the last 4 sweeps.
        new_rtt = unexplained[0].rtt_ms if unexplained and len(seen) == len(members) else None
        appeared_recent.append(new_rtt)
        if new_rtt is not None:
            reach = max(move_min_ms, move_fraction * new_rtt)
            oldest = index - len(appeared_recent) + 1
            near = [
                (oldest + k, rtt)
                for k, rtt in enumerate(appeared_recent)
                if rtt is not None and abs(rtt - new_rtt) <= reach
            ]
            if len(near) >= 3:
                first = near[0][0]
                level = statistics.median([rtt for _, rtt in near])
                trackers["appeared"].seen(
                    -1,
                    _Open(
                        "ecmp_member_appeared",
                        -1,
                        first,
                        index,
                        Direction.UP,
                        float(len(members)),
                        float(len(members) + 1),
                        1.0,
                        {"new_member_rtt_ms": level, "sightings_in_last_4": len(near)},
                    ),
                )
        else:
            trackers["appeared"].quiet(-1, index)

        # A member vanished: missing while all that showed matched others, beyond chance. A
        # mode no member explains may be the missing one moved: the count starts again.
        if unexplained:
            absent_run.clear()
        else:
            for i, member in enumerate(members):
                if i in seen:
                    absent_run.pop(i, None)
                    trackers["vanished"].quiet(i, index)
                    continue
                start, chance = absent_run.get(i, (index, 1.0))
                chance *= _absent_chance(member.share, sweep.flows)
                absent_run[i] = (start, chance)
                if chance < vanish_p and len(members) >= 2:
                    trackers["vanished"].seen(
                        i,
                        _Open(
                            "ecmp_member_vanished",
                            i,
                            start,
                            index,
                            Direction.DOWN,
                            float(len(members)),
                            float(len(members) - 1),
                            -1.0,
                            {
                                "member": i + 1,
                                "member_rtt_ms": member.rtt_ms,
                                "member_share": member.share,
                                "absent_sweeps": index - start + 1,
                                "chance": chance,
                            },
                        ),
                    )

        # The weights shifted: shares over the last sweeps against the baseline's.
        if not unexplained and len(members) >= 2:
            counts = [0] * len(members)
            for mode, owner in zip(sweep.modes, matched, strict=True):
                if owner is not None:
                    counts[owner] += mode.flows
            window.append(counts)
        if len(window) == shift_window and len(members) >= 2:
            totals = [sum(column) for column in zip(*window, strict=True)]
            flows = sum(totals)
            for i, member in enumerate(members):
                share = totals[i] / flows if flows else member.share
                p = _binomial_p(totals[i], flows, member.share)
                if abs(share - member.share) >= shift_min and p < shift_p:
                    shift_run[i] = shift_run.get(i, 0) + 1
                    if shift_run[i] >= 2:
                        trackers["shifted"].seen(
                            i,
                            _Open(
                                "ecmp_weights_shifted",
                                i,
                                index - 1,
                                index,
                                Direction.UP if share > member.share else Direction.DOWN,
                                100 * member.share,
                                100 * share,
                                100 * (share - member.share),
                                {
                                    "member": i + 1,
                                    "member_rtt_ms": member.rtt_ms,
                                    "share_before": member.share,
                                    "share_now": share,
                                    "flows_in_window": flows,
                                    "sweeps_in_window": shift_window,
                                    "p": p,
                                },
                            ),
                        )
                else:
                    shift_run.pop(i, None)
                    trackers["shifted"].quiet(i, index)

    episodes: list[Episode] = []
    for tracker in trackers.values():
        ends: list[tuple[_Open, int | None]] = [(state, cleared) for state, cleared in tracker.closed]
        ends += [(state, None) for state in tracker.opened.values()]
        for state, cleared in ends:
            episodes.append(
                Episode(
                    metric=Metric.ECMP,
                    rule=state.rule,
                    started_at=times[state.started],
                    detected_at=times[state.detected],
                    cleared_at=times[cleared] if cleared is not None else None,
                    direction=state.direction,
                    baseline=state.baseline,
                    current=state.current,
                    magnitude=state.magnitude,
                    evidence={**base_info, **state.evidence},
                )
            )
    return sorted(episodes, key=lambda e: (e.started_at, e.rule))
