"""Checks that change a link while the lab runs (`fathom-lab set`): a loss rate set for one
paced UDP run drops that share of its packets, and a new delay shows in the RTT within a
second."""

from __future__ import annotations

import math
import threading
import time

from .attempts import first_passing, record_attempts
from .lab import Lab, iperf3, iperf3_end, ping_replies
from .report import Row, record


def check_loss(scenario: str, lab: Lab, source: str, destination: str, link: str, loss: float) -> None:
    def measure() -> tuple[int, int]:
        """Packets sent and lost by one paced UDP run while the link drops `loss` of them."""
        lab.set(link, a_to_b__loss=loss)
        try:
            udp = iperf3(lab, source, destination, "-u", "-b", "40M", "-l", "1000", seconds=5, omit=0)
        finally:
            lab.set(link, a_to_b__loss=0)
        end = iperf3_end(udp)
        return int(end["sum"]["packets"]), int(end["sum"]["lost_packets"])

    def within(run: tuple[int, int]) -> bool:
        total, lost = run
        return abs(lost - total * loss) <= 4 * math.sqrt(total * loss * (1 - loss))

    # A stalled emulator drops more than it was told to (its queue overflows), never fewer.
    attempts = first_passing(measure, within)
    total, lost = attempts.value
    expected = total * loss
    sigma = math.sqrt(total * loss * (1 - loss))
    record_attempts(
        Row(
            scenario,
            f"random loss {source}->{destination} (set {link} a_to_b.loss={loss})",
            f"{loss * 100:g} % of {total} packets = {expected:.0f}",
            f"{lost} lost",
            f"within 4 sigma ({4 * sigma:.0f})",
            within(attempts.value),
        ),
        attempts,
    )


def check_set_latency(scenario: str, lab: Lab, source: str, destination: str, link: str, delay_ms: float) -> None:
    """Pings every 20 ms while `set` changes the delay; the first reply with the new RTT
    must come within a second of the command."""
    pinger = lab.spawn(
        source, "ping", "-n", "-D", "-i", "0.02", "-c", "150", "-I", lab.addresses[source], lab.addresses[destination]
    )
    time.sleep(1.0)
    changed_at = time.time()
    threading.Thread(target=lambda: lab.set(link, delay_ms=delay_ms)).start()
    out, _ = pinger.communicate(timeout=30)
    new_rtt = 2 * delay_ms
    first = next(
        (at - changed_at for at, rtt in ping_replies(out) if abs(rtt - new_rtt) < 2 and at >= changed_at), None
    )
    record(
        scenario,
        f"`fathom-lab set {link} delay_ms={delay_ms:g}` takes effect",
        f"RTT {new_rtt:g} ms",
        "never" if first is None else f"first new RTT after {first * 1000:.0f} ms",
        "within 1 s",
        first is not None and first <= 1.0,
    )
