"""Which pScheduler tests are which Fathom test kinds, and why the others are none."""

from __future__ import annotations

# Fathom test kind of each pScheduler test Fathom maps.
KIND_OF_TEST = {"rtt": "ping", "throughput": "throughput", "trace": "trace"}
TEST_OF_KIND = {kind: test for test, kind in KIND_OF_TEST.items()}

_SELF_TEST = "it is one of pScheduler's self-tests, which measure no network path"
# Why a pScheduler test has no Fathom kind, where "Fathom maps rtt, throughput and trace"
# would leave an operator asking where the figure went.
_WHY_NO_KIND = {
    "mtu": "the path MTU comes from trace hops",
    "latency": "one-way latency needs OWAMP, and Fathom's ping measures round-trip time",
    "latencybg": "one-way latency needs OWAMP, and Fathom's ping measures round-trip time",
    "simplestream": _SELF_TEST,
    "idle": _SELF_TEST,
    "idlebgm": _SELF_TEST,
    "idleex": _SELF_TEST,
}


def no_kind_reason(test_type: str) -> str:
    """The sentence a run of a pScheduler test Fathom does not map is refused with."""
    if test_type in _WHY_NO_KIND:
        return f"pScheduler's {test_type} test has no Fathom test kind; {_WHY_NO_KIND[test_type]}"
    return f"pScheduler's {test_type!r} test has no Fathom test kind; Fathom maps rtt, throughput and trace"
