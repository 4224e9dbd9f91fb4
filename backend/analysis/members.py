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


def _mode_of(rtt_ms: float, modes_ms: Sequence[float]) -> int | None:
    """The index of the mode rtt_ms lies on: within max(0.5 ms, 5%) above it (a ping's level
    sits a little above the member's minimum), never below by more than 0.3 ms."""
    for index, mode in sorted(enumerate(modes_ms), key=lambda item: abs(item[1] - rtt_ms)):
        if mode - 0.3 <= rtt_ms <= mode + max(0.5, 0.05 * mode):
            return index
    return None


def member_switch(baseline_ms: float, current_ms: float, modes_ms: Sequence[float]) -> str:
    """Why an RTT step is a ping that moved to another ECMP member, not a regression ('' if not).

    Both levels must lie on known members of the path, and on different ones: a router that
    hashes ICMP with its identifier puts each ping run on a member of its own, and each of
    them is as normal as the other.
    """
    modes = sorted(mode for mode in modes_ms if mode > 0 and math.isfinite(mode))
    if len(modes) < 2 or not (math.isfinite(baseline_ms) and math.isfinite(current_ms)):
        return ""
    before, after = _mode_of(baseline_ms, modes), _mode_of(current_ms, modes)
    if before is None or after is None or before == after:
        return ""
    return (
        f"ping moved from ECMP member {before + 1} ({modes[before]:.1f} ms) to member {after + 1} "
        f"({modes[after]:.1f} ms) of the path's {len(modes)}: both are normal RTTs of this path"
    )


def within_member(windows: Sequence[RttWindow], modes_at: Sequence[Sequence[float]]) -> list[RttWindow]:
    """RTT windows as the RTT rule sees them: each compared within its ECMP member.

    modes_at[i] are the path's ECMP modes when window i ran (empty where it had one). A window
    whose minimum lies on a slower member (see _mode_of) is moved down by that member's RTT
    over the fastest one's, so a ping that a router hashed onto the slower member reads as
    the same RTT, and a real shift of every member (+2 ms) still shows. A window on no known
    member is left as it is: a route change or a queue is what the rule is for.
    """
    if len(windows) != len(modes_at):
        raise ValueError("one list of modes per window")
    judged: list[RttWindow] = []
    for window, raw_modes in zip(windows, modes_at, strict=True):
        modes = sorted(mode for mode in raw_modes if mode > 0 and math.isfinite(mode))
        member = _mode_of(window.min_ms, modes) if window.min_ms is not None and len(modes) > 1 else None
        if not member:
            judged.append(window)
            continue
        offset = modes[member] - modes[0]
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
