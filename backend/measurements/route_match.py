"""Routes seen through silent hops. Pure.

A trace flow's fingerprint names the addresses that answered at each TTL, with "*" where none
did. Routers drop or rate-limit their ICMP errors under load, so one flow now and then sees a
known route with a hop silent, and gets a fingerprint of its own for a route that is not
there: the Routes view would show a second route on a single path, and two such runs in a row
would read as the path moving. A route with silent hops is therefore read as the route without
them that it fits, hop for hop, when the same path saw one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

HopPattern = tuple[frozenset[str], ...]  # per TTL, the addresses that answered; empty: none did


def hop_pattern(hops: Sequence[Any]) -> HopPattern:
    """The answering addresses per TTL of stored trace hops ({"probes": [{"address"}]})."""
    pattern = []
    for hop in hops:
        probes = hop.get("probes") if isinstance(hop, dict) else None
        addresses = {probe.get("address") for probe in probes or [] if isinstance(probe, dict)}
        pattern.append(frozenset(address for address in addresses if isinstance(address, str) and address))
    return tuple(pattern)


def fits(partial: HopPattern, complete: HopPattern) -> bool:
    """Whether a route with silent hops is this route: as many hops, and every hop that
    answered answered from addresses of the same hop of the other."""
    return len(partial) == len(complete) and all(
        not seen or seen <= known for seen, known in zip(partial, complete, strict=True)
    )


def read_as(patterns: Mapping[str, HopPattern], weights: Mapping[str, int]) -> dict[str, str]:
    """Each fingerprint -> the fingerprint it is read as: itself, or for a route with silent
    hops the complete route it fits (every hop answered). Where several fit (ECMP members that
    differ only at the silent hop), the one with the most weight (flows) is taken: the flow
    could have been on either, and the path is not read as having moved either way."""
    complete = sorted(
        (fingerprint for fingerprint, pattern in patterns.items() if pattern and all(pattern)),
        key=lambda fingerprint: (-weights.get(fingerprint, 0), fingerprint),
    )
    mapping = {}
    for fingerprint, pattern in patterns.items():
        if not pattern or all(pattern) or not any(pattern):
            mapping[fingerprint] = fingerprint
            continue
        mapping[fingerprint] = next(
            (candidate for candidate in complete if fits(pattern, patterns[candidate])), fingerprint
        )
    return mapping
