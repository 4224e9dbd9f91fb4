"""Which pScheduler tests are which Fathom test kinds, and why the others are none."""

from __future__ import annotations

# Fathom test kind of each pScheduler test Fathom maps. Both OWAMP tests are Fathom's latency:
# latencybg (powstream) reports every packet-count packets, latency (owping, twping) once a run.
KIND_OF_TEST = {
    "rtt": "ping",
    "throughput": "throughput",
    "trace": "trace",
    "latencybg": "latency",
    "latency": "latency",
}
# The pScheduler test each Fathom kind is exported and run as: a Fathom latency test runs back
# to back, as latencybg does.
TEST_OF_KIND = {"ping": "rtt", "throughput": "throughput", "trace": "trace", "latency": "latencybg"}

_SELF_TEST = "it is one of pScheduler's self-tests, which measure no network path"
# Why a pScheduler test has no Fathom kind, where "Fathom maps rtt, throughput, trace, latency
# and latencybg" would leave an operator asking where the figure went.
_WHY_NO_KIND = {
    "mtu": "the path MTU comes from trace hops",
    "simplestream": _SELF_TEST,
    "idle": _SELF_TEST,
    "idlebgm": _SELF_TEST,
    "idleex": _SELF_TEST,
}


def no_kind_reason(test_type: str) -> str:
    """The sentence a run of a pScheduler test Fathom does not map is refused with."""
    if test_type in _WHY_NO_KIND:
        return f"pScheduler's {test_type} test has no Fathom test kind; {_WHY_NO_KIND[test_type]}"
    *most, last = KIND_OF_TEST
    return f"pScheduler's {test_type!r} test has no Fathom test kind; Fathom maps {', '.join(most)} and {last}"
