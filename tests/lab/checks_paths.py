"""Checks of where packets go and how long they take: a path's minimum RTT (ping), the RTT
cluster each TCP flow lands in when ECMP spreads flows over members of different delay, and
the ECMP members seen as traceroute hops (or, without ECMP, no hop at all)."""

from __future__ import annotations

import math
import statistics

from .attempts import first_passing, record_attempts
from .lab import Lab, flow_rtts, icmp_errors_unlimited, ping, traceroute
from .report import Row, record

RTT_TOLERANCE_MS = 0.5
# A flow's handshakes are timed in Python, which a busy 2-core machine schedules late: the
# fastest of them sat 0.52 ms above a 40 ms path whose ping minimum was within 0.4 ms (a
# clean-clone CI). Above a member a flow may lie this far (the lab's members are 4 ms or
# more apart, so its member is never in doubt); below it, RTT_TOLERANCE_MS as for ping.
FLOW_ABOVE_MS = 1.0
# A minimum RTT is the emulator's fault, not the path's, when at least half the departures of
# its pings left over 0.3 ms late: on time they leave within 0.1 ms (all of them, here, with
# four CPU hogs at the emulator's own priority), and two passes that late each lift every
# ping's RTT past the tolerance.
RTT_LATE_US = 300
RTT_LATE_SHARE = 0.5


def check_rtt(scenario: str, lab: Lab, source: str, destination: str, expected_ms: list[float]) -> None:
    """The fastest of 20 pings within RTT_TOLERANCE_MS of a configured RTT. The emulator times
    each packet in user space, as it paces rates, so the check is measured as the rate checks
    are (attempts.py), with the emulator's own lateness: a clean-clone CI, its lab beside
    another suite's busy emulator, read four long paths 0.6 ms (and 310 ms 1.6 ms) high in one
    attempt."""

    def measure() -> tuple[float, int]:
        measured, _, received = ping(lab, source, destination)
        return measured, received

    def within(result: tuple[float, int]) -> bool:
        measured, received = result
        return received > 0 and min(abs(e - measured) for e in expected_ms) <= RTT_TOLERANCE_MS

    attempts = first_passing(measure, within, lab)
    measured, _ = attempts.value
    record_attempts(
        Row(
            scenario,
            f"ping min RTT {source}->{destination}",
            " or ".join(f"{e:g} ms" for e in expected_ms),
            f"{measured:.3f} ms",
            f"within {RTT_TOLERANCE_MS} ms",
            within(attempts.value),
        ),
        attempts,
        late_bound_us=RTT_LATE_US,
        late_share=RTT_LATE_SHARE,
    )


def check_flow_clusters(scenario: str, lab: Lab, source: str, destination: str, expected_ms: list[float]) -> None:
    """Every flow's fastest handshake sits within the tolerance of one member's RTT, and every
    member is seen. The minimum, not the median: the configured delay is the floor, and a
    stalled emulator or Python only ever adds to it."""

    def measure() -> tuple[dict[float, list[float]], list[float], int]:
        per_flow = [min(values) for values in flow_rtts(lab, source, destination).values()]
        clusters: dict[float, list[float]] = {e: [] for e in expected_ms}
        stray = []
        for value in per_flow:
            nearest = min(expected_ms, key=lambda e: abs(e - value))
            if -RTT_TOLERANCE_MS <= value - nearest <= FLOW_ABOVE_MS:
                clusters[nearest].append(value)
            else:
                stray.append(value)
        return clusters, stray, len(per_flow)

    def within(measured: tuple[dict[float, list[float]], list[float], int]) -> bool:
        return not measured[1] and all(measured[0].values())

    attempts = first_passing(measure, within)
    clusters, stray, flows = attempts.value
    summary = ", ".join(
        f"{len(v)} flows at {statistics.median(v):.2f} ms" if v else f"none at {e:g} ms" for e, v in clusters.items()
    )
    if stray:
        summary += f", {len(stray)} outside ({', '.join(f'{s:.2f}' for s in stray[:4])})"
    record_attempts(
        Row(
            scenario,
            f"per-flow RTT clusters {source}->{destination} ({flows} flows)",
            " and ".join(f"{e:g} ms" for e in expected_ms),
            summary,
            f"each flow {RTT_TOLERANCE_MS} ms below to {FLOW_ABOVE_MS} ms above a member, every member seen",
            within(attempts.value),
        ),
        attempts,
    )


def check_traceroute_members(
    scenario: str, lab: Lab, source: str, destination: str, link: str, flows: int = 32
) -> None:
    """traceroute from one UDP source port per flow: the first hops over all flows are exactly
    the ECMP members' routers (each hop's RTT is its member's), then the destination."""
    routers = lab.routers(link)[0]
    first_hops: dict[str, list[float]] = {}
    unreached = []
    with icmp_errors_unlimited(lab, destination):
        for sport in range(41000, 41000 + flows):
            hops = traceroute(lab, source, destination, sport) or [("no output", math.nan)]
            first_hops.setdefault(hops[0][0], []).append(hops[0][1])
            if len(hops) != 2 or hops[-1][0] != lab.addresses[destination]:
                unreached.append(f"{sport}: {' '.join(address for address, _ in hops)}")
    seen = ", ".join(
        f"{address} ({len(rtts)} flows, {statistics.median(rtts):.2f} ms)"
        for address, rtts in sorted(first_hops.items())
    )
    record(
        scenario,
        f"traceroute {source}->{destination}: first hops over {flows} UDP flows",
        f"member routers {', '.join(routers)}, then {lab.addresses[destination]}",
        f"{seen}; destination at hop 2 in {flows - len(unreached)} of {flows}"
        + (f" (not: {'; '.join(unreached[:3])})" if unreached else ""),
        "first hops = member routers, destination at hop 2",
        set(first_hops) == set(routers) and not unreached,
    )


def check_traceroute_direct(scenario: str, lab: Lab, source: str, destination: str, flows: int = 4) -> None:
    """Without ECMP a link is no router hop: the destination is hop 1, whatever the flow."""
    with icmp_errors_unlimited(lab, destination):
        paths = {
            tuple(address for address, _ in traceroute(lab, source, destination, sport))
            for sport in range(41000, 41000 + flows)
        }
    record(
        scenario,
        f"traceroute {source}->{destination} (no ECMP) over {flows} UDP flows",
        f"{lab.addresses[destination]} at hop 1",
        "; ".join(" ".join(path) for path in sorted(paths)),
        "destination is hop 1",
        paths == {(lab.addresses[destination],)},
    )
