"""One-way delay and loss by TWAMP-light between two real agents, on the lab's one-way
scenario: 20 ms from uplink to ground with 2 % loss, 5 ms back without loss. Needs root (the
lab's namespaces); CI runs as root.

What must hold, from the server's API: each direction's one-way delay (its minimum, the
path's delay, as the path has no jitter) within 0.3 ms of the configured delay (both ends
share the kernel's clock, so the figures are exact but for the emulator's own transit), each
interval's median within 0.3 ms of that floor (judged apart when the emulator left a quarter
of its packets late), and each direction's loss within the 99.9 % binomial interval of its
configured rate: the loss is named on the way from uplink to ground, not back. The
agents' reflectors answer only their planned peers (the Go tests send from strangers).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import pytest
from lab.lab import SCENARIOS, Lab

from .conftest import ARTIFACTS, Stack, wait_for
from .lab_agents import lab_with_agents

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the lab needs root (network namespaces)")

# Short intervals at 50 packets a second: three of them give each direction over a thousand
# packets, enough for the binomial check, within the lab lane's time.
REPORT_S = 10
PACKET_INTERVAL_S = 0.02
INTERVALS = 3
# The scenario's truth, by direction (sender, receiver): one-way delay in ms and loss rate.
DELAY_MS = {("uplink", "ground"): 20.0, ("ground", "uplink"): 5.0}
LOSS = {("uplink", "ground"): 0.02, ("ground", "uplink"): 0.0}
DELAY_TOLERANCE_MS = 0.3
# Each interval's median over its minimum. The emulator adds its own transit to every packet
# (0.08-0.2 ms here: the minima's excess), and more to some under load: a CI run's medians
# were 0.33 ms over the configured 5 ms with 5.1 ms minima, 17 % of departures over 1 ms late.
# The median's spread above the floor is what Fathom's percentiles answer for.
SPREAD_MS = 0.3
# Under load the emulator also reads its TUN devices late, which its lateness figure does not
# count: clean-clone CIs with 9.7 % and 14 % of departures over 0.3 ms late saw medians up to
# 0.29 ms over the floor. From 5 % late, the medians are the emulator's, not judged.
MEDIAN_LATE_SHARE = 0.05
MESH = {
    "name": "one-way",
    "kind": "mesh",
    "members": [{"agent": "uplink"}, {"agent": "ground"}],
    "tests": [
        {"name": "owd", "test_type": "latency", "interval_s": REPORT_S,
         "spec": {"report_interval_s": REPORT_S, "packet_interval_s": PACKET_INTERVAL_S}},
    ],
}  # fmt: skip


def binomial_interval(n: int, p: float, confidence: float = 0.999) -> tuple[int, int]:
    """The central `confidence` interval of Binomial(n, p), exactly (no normal approximation:
    a few losses out of hundreds is where it fails)."""
    if p <= 0.0:
        return 0, 0
    tail = (1 - confidence) / 2
    log_p, log_q = math.log(p), math.log1p(-p)
    pmf = [math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
           for k in range(n + 1)]  # fmt: skip
    low, cumulative = 0, 0.0
    while cumulative + pmf[low] < tail:
        cumulative += pmf[low]
        low += 1
    high, cumulative = n, 0.0
    while cumulative + pmf[high] < tail:
        cumulative += pmf[high]
        high -= 1
    return low, high


def test_binomial_interval_holds_its_mass() -> None:
    low, high = binomial_interval(1000, 0.02)
    assert low < 20 < high and 5 <= low <= 10 and 30 <= high <= 36
    assert binomial_interval(100, 0.0) == (0, 0)


@pytest.fixture(scope="module")
def one_way(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Lab, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("latency-lab")
    with lab_with_agents(stack, tmp, SCENARIOS / "one-way.yaml", MESH) as (lab, ids):
        yield stack, lab, ids


def latency(stack: Stack, ids: dict[str, str], sender: str, reflector: str) -> dict[str, Any]:
    reply = stack.session().get(
        f"{stack.url}/api/v1/paths/latency/",
        params={"source": ids[sender], "destination": ids[reflector], "max_points": "1000"},
        timeout=30,
    )
    reply.raise_for_status()
    body: dict[str, Any] = reply.json()
    return body


def ok_intervals(stack: Stack, ids: dict[str, str], sender: str, reflector: str) -> int:
    rows = stack.query(
        "SELECT count(*) FROM measurements_run WHERE test_type = 'latency' AND status = 'ok'"
        " AND source_id = %s AND destination_id = %s",
        ids[sender],
        ids[reflector],
    )
    return int(rows[0][0])


def test_each_direction_has_its_own_delay_and_loss(one_way: tuple[Stack, Lab, dict[str, str]]) -> None:
    stack, lab, ids = one_way
    before = lab.lateness()

    def measured() -> bool:
        stack.assert_running()
        return all(ok_intervals(stack, ids, a, b) >= INTERVALS for a, b in DELAY_MS)

    wait_for(f"{INTERVALS} latency intervals each way", measured, 60 + REPORT_S * (INTERVALS + 3), interval_s=2)
    late = lab.lateness() - before
    # Per direction of the link: what each agent's session sent that way and lost on it.
    exposed = dict.fromkeys(DELAY_MS, 0)
    lost = dict.fromkeys(DELAY_MS, 0)
    medians: dict[tuple[str, str], list[float]] = {key: [] for key in DELAY_MS}
    minima: dict[tuple[str, str], list[float]] = {key: [] for key in DELAY_MS}
    for sender, reflector in DELAY_MS:
        body = latency(stack, ids, sender, reflector)
        points = body["points"]
        assert points, body
        for point in points:
            assert point["one_way_trusted"], point  # the lab's agents share one clock
            # The sender's packets cross sender -> reflector; the answers to those that arrived come back.
            exposed[(sender, reflector)] += point["sent"]
            lost[(sender, reflector)] += point["forward_lost"]
            exposed[(reflector, sender)] += point["sent"] - point["forward_lost"]
            lost[(reflector, sender)] += point["backward_lost"]
            medians[(sender, reflector)].append(point["forward_p50_ms"])
            medians[(reflector, sender)].append(point["backward_p50_ms"])
            minima[(sender, reflector)].append(point["forward_min_ms"])
            minima[(reflector, sender)].append(point["backward_min_ms"])
    report = {
        f"{a}->{b}": {
            "lost": f"{lost[(a, b)]}/{exposed[(a, b)]}",
            "interval": binomial_interval(exposed[(a, b)], LOSS[(a, b)]),
            "p50_ms": [round(m, 3) for m in medians[(a, b)]],
            "min_ms": [round(m, 3) for m in minima[(a, b)]],
        }
        for a, b in DELAY_MS
    }
    shares = ", ".join(f"{late.share_later_than(bound):.1%} >{bound} us" for bound in (100, 300, 1000))
    evidence = f"{report}; {late.describe()} ({shares})"
    (ARTIFACTS / "latency-lab.txt").write_text(evidence + "\n")
    starved = late.share_later_than(300) >= MEDIAN_LATE_SHARE
    # Packets lost on the direction no link drops: only a starved lab host loses them (a
    # clean-clone CI with 14 % of departures over 0.3 ms late and 418 over 3 ms lost 44 of
    # 2,372 there), so with the emulator that late they are not judged; on time they fail.
    clean_loss = [d for d, rate in LOSS.items() if rate == 0 and lost[d] > 0]
    for direction, rate in LOSS.items():
        low, high = binomial_interval(exposed[direction], rate)
        assert exposed[direction] >= 500, evidence
        if direction not in clean_loss or not starved:
            assert low <= lost[direction] <= high, evidence
    # The loss is named on its direction: there, and not back unless the lab host dropped some.
    assert lost[("uplink", "ground")] > 0, evidence
    for direction, delay in DELAY_MS.items():
        # The fastest packet shows the path's delay; the emulator can only add to it.
        assert all(abs(m - delay) <= DELAY_TOLERANCE_MS for m in minima[direction]), evidence
    # The path has no jitter: a median above the floor is the emulator's, a late departure or
    # a slow read of its TUN device, unless Fathom's percentiles are wrong.
    spread = [d for d in DELAY_MS if any(p50 - low > SPREAD_MS for p50, low in zip(medians[d], minima[d], strict=True))]
    not_judged = [what for what, seen in (("medians", spread), ("loss on the clean direction", clean_loss)) if seen]
    if not_judged and starved:
        pytest.skip(f"{' and '.join(not_judged)} not judged: the emulator left packets late; the rest held; {evidence}")
    assert not spread and not clean_loss, evidence
