"""ECMP members in the regression rules: a run judged against the member its flow took, and
a ping level that moved from one member's RTT to another's.

Pure. On a path with ECMP members at 23 and 31 ms and buffers that cap the window, a flow on
the slower member gets about 74% of the fast member's rate while running at its own ceiling
(seed 000's bimodal throughput); compared with the fast runs it would read as a regression.
The rules therefore see rate / scale, where scale is the member's ceiling over the fastest
member's (analysis.runs.RunMember), and the ceiling of the fastest member as the prior.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analysis.changes.episodes import Point
from analysis.changes.windows import RttWindow


def member_scale(ceilings: object) -> float:
    """The stored run's member scale (analysis.runs.RunMember.scale); 1.0 where there is none."""
    member = ceilings.get("member") if isinstance(ceilings, dict) else None
    scale = member.get("scale") if isinstance(member, dict) else None
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not math.isfinite(scale):
        return 1.0
    return float(scale) if 0 < scale <= 1 else 1.0


# What binds these runs is the same on every member: their rate is not scaled by the member's.
UNSCALED_DIAGNOSES = frozenset({"capacity", "policer"})


def run_scale(ceilings: object, diagnosis: str) -> float:
    """The member scale a stored run is judged with: its member's (member_scale), except where a
    bottleneck or a policer held it, which every member shares."""
    return 1.0 if diagnosis in UNSCALED_DIAGNOSES else member_scale(ceilings)


# A run within this share of the window's ceiling at its own RTT ran at that RTT's ceiling.
AT_OWN_CEILING = 0.8


def on_unseen_member(ceilings: object, rate_bps: float) -> bool:
    """The run may have taken an ECMP member no flow sweep has shown (analysis.runs.FlowAbovePath).

    Its flow's own minimum RTT lay far above every RTT the path is known to have, and it ran
    at the window's ceiling at that RTT: exactly what a run on a 1-in-128 member looks like.
    A capacity cut that builds a queue looks the same, so such runs are not ignored: they
    confirm a drop through the fast rule's 3-run test instead of its 2-run one.
    """
    above = ceilings.get("flow_above_path") if isinstance(ceilings, dict) else None
    window = above.get("window_ceiling_bps") if isinstance(above, dict) else None
    if isinstance(window, bool) or not isinstance(window, int | float) or not math.isfinite(window) or window <= 0:
        return False
    return math.isfinite(rate_bps) and rate_bps >= AT_OWN_CEILING * window


def judged_point(
    time: Any, rate_bps: float, ceiling_bps: float | None, scale: float, *, ambiguous: bool = False
) -> Point:
    """A run as the throughput rules see it: its rate and ceiling in fastest-member terms."""
    return Point(time, rate_bps / scale, ceiling_bps / scale if ceiling_bps else None, ambiguous)


@dataclass(frozen=True)
class MemberLevel:
    """An ECMP mode as ping windows are compared within it: its RTT (the median of its flows'
    minima) and the lowest of those minima. Members a few tenths of a millisecond apart share
    one mode (five members forward and three back make fifteen RTTs), so a ping may sit
    anywhere from the low end up."""

    rtt_ms: float
    low_ms: float


Modes = Sequence[float | MemberLevel]


# Levels this close are one member seen by several sweeps (one sweep's modes are further apart).
SAME_MEMBER_MS = 0.3


def member_levels(modes: Modes) -> list[MemberLevel]:
    """The usable levels, fastest first, a member seen by several sweeps once (a plain RTT is a
    mode with no spread)."""
    levels = [mode if isinstance(mode, MemberLevel) else MemberLevel(mode, mode) for mode in modes]
    usable = sorted(
        (
            MemberLevel(level.rtt_ms, min(level.low_ms, level.rtt_ms))
            for level in levels
            if level.rtt_ms > 0 and math.isfinite(level.rtt_ms) and math.isfinite(level.low_ms)
        ),
        key=lambda level: level.rtt_ms,
    )
    distinct: list[MemberLevel] = []
    for level in usable:
        if distinct and level.rtt_ms - distinct[-1].rtt_ms <= SAME_MEMBER_MS:
            distinct[-1] = MemberLevel(distinct[-1].rtt_ms, min(distinct[-1].low_ms, level.low_ms))
        else:
            distinct.append(level)
    return distinct


def _distance(rtt_ms: float, level: MemberLevel) -> float:
    return max(level.low_ms - rtt_ms, rtt_ms - level.rtt_ms, 0.0)


def _mode_of(rtt_ms: float, levels: Sequence[MemberLevel]) -> int | None:
    """The index of the level rtt_ms lies on: from 0.3 ms below its lowest flow to max(0.5 ms,
    5%) above its RTT (a ping's level sits a little above the member's minimum)."""
    for index, level in sorted(enumerate(levels), key=lambda item: _distance(rtt_ms, item[1])):
        if level.low_ms - 0.3 <= rtt_ms <= level.rtt_ms + max(0.5, 0.05 * level.rtt_ms):
            return index
    return None


def _level_near(rtt_ms: float, levels: Sequence[MemberLevel], slack_ms: float) -> int | None:
    """The level rtt_ms lies on, from slack_ms below its lowest flow to slack_ms above its RTT."""
    for index, level in sorted(enumerate(levels), key=lambda item: _distance(rtt_ms, item[1])):
        if level.low_ms - slack_ms <= rtt_ms <= level.rtt_ms + slack_ms:
            return index
    return None


def member_switch(
    baseline_ms: float,
    minima_ms: Sequence[float],
    modes_ms: Modes,
    scale_ms: float,
    own_modes: Sequence[Modes] | None = None,
) -> str:
    """Why an RTT step is pings that moved among the path's ECMP members, not a regression ('' if not).

    minima_ms are the step's windows' own minima (before within_member), modes_ms the members
    the sweeps showed before it began, own_modes (one per window, optional) the modes each
    window was judged within. The baseline must lie on one of the members, and more of the
    step's windows on other members than on none; windows judged within a member their own
    sweep showed, or on the baseline's, count neither way. A router that
    hashes ICMP with its identifier puts each ping run on a member of its own, and each is as
    normal as the other. After a real shift the windows lie off every member the path had,
    unless it lands on one (within max(0.3 ms, 2 x the baseline's scale)).
    """
    modes = member_levels(modes_ms)
    slack = max(SAME_MEMBER_MS, 2 * scale_ms)
    if len(modes) < 2 or not minima_ms or not math.isfinite(baseline_ms):
        return ""
    if own_modes is not None and len(own_modes) != len(minima_ms):
        raise ValueError("one list of modes per window")
    before = _level_near(baseline_ms, modes, slack)
    if before is None:
        return ""
    others: list[int] = []
    unknown = 0
    for position, value in enumerate(minima_ms):
        if not math.isfinite(value):
            continue
        own = member_levels(own_modes[position]) if own_modes is not None else []
        judged = _mode_of(value, own) if len(own) > 1 else None
        if judged is not None and _level_near(value, [own[judged]], slack) is not None:
            continue  # judged within a member its own sweep showed, and close to it
        index = _level_near(value, modes, slack)
        if index is None:
            unknown += 1
        elif index != before:
            others.append(index)
    if len(others) <= unknown:
        return ""
    after = max(set(others), key=others.count)
    return (
        f"ping moved from ECMP member {before + 1} ({modes[before].rtt_ms:.1f} ms) to member {after + 1} "
        f"({modes[after].rtt_ms:.1f} ms) of the path's {len(modes)}: both are normal RTTs of this path"
    )


# How far above a slower member's RTT a window may lie and still be that member's: a ping's
# minimum sits on its member's RTT within a few tenths (SAME_MEMBER_MS) or, on a long path,
# 0.5 % of it.
ON_MEMBER_MS, ON_MEMBER_FRACTION = SAME_MEMBER_MS, 0.005


def _above_member(rtt_ms: float, level: MemberLevel) -> bool:
    return rtt_ms > level.rtt_ms + max(ON_MEMBER_MS, ON_MEMBER_FRACTION * level.rtt_ms)


def within_member(windows: Sequence[RttWindow], modes_at: Sequence[Modes]) -> list[RttWindow]:
    """RTT windows as the RTT rule sees them: each compared within its ECMP member.

    modes_at[i] are the path's ECMP modes when window i ran (empty where it had one). A window
    whose minimum lies on a slower member (see _mode_of) is moved down by that member's RTT
    over the fastest one's, so a ping that a router hashed onto the slower member reads as
    the same RTT, and a real shift of every member (+2 ms) still shows. A window on no known
    member is left as it is: a route change or a queue is what the rule is for.

    A window that lies on a slower mode's reach but clearly above its RTT (_above_member) is
    most likely on a member that sweep missed (16 flows miss a member of 13 % one sweep in
    nine; five members 1.25 ms apart then put such windows 0.5-1.3 ms above the one they
    would be moved with): its RTT is left out (its loss still counts), as the number it would
    read as is no RTT of the path's. On the fastest member nothing is left out: that is where
    a real shift shows before the next sweep has seen it.
    """
    if len(windows) != len(modes_at):
        raise ValueError("one list of modes per window")
    judged: list[RttWindow] = []
    for window, raw_modes in zip(windows, modes_at, strict=True):
        modes = member_levels(raw_modes)
        member = _mode_of(window.min_ms, modes) if window.min_ms is not None and len(modes) > 1 else None
        if not member:
            judged.append(window)
            continue
        if window.min_ms is not None and _above_member(window.min_ms, modes[member]):
            judged.append(RttWindow(window.start, window.end, window.sent, window.lost, None, None, None))
            continue
        offset = modes[member].rtt_ms - modes[0].rtt_ms
        judged.append(
            RttWindow(
                window.start,
                window.end,
                window.sent,
                window.lost,
                window.min_ms - offset if window.min_ms is not None else None,
                window.p50_ms - offset if window.p50_ms is not None else None,
                window.p90_ms - offset if window.p90_ms is not None else None,
            )
        )
    return judged
