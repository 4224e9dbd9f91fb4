"""Placement: where the caller puts a run in a mesh, and the options it ran with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Placement:
    """Where Fathom puts a run: the mesh test it belongs to and the path it measured."""

    test_type: str  # Fathom kind: ping, throughput or trace
    test_id: str
    peer_id: str | None  # the Fathom agent or node at the far end, when there is one
    target: str  # the address or host name measured
    slot_id: str | None = None  # the exclusive slot a throughput run filled
    # Fathom's reverse: the peer sent the data to the result's source. Between two nodes it is
    # the spec's reverse; with a Fathom agent the node leads whichever way the data flows, so
    # the spec's reverse says which end the node's client was, not this.
    reversed: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # the mesh test's Fathom spec
    # The node at the far end measured the path: its latency run towards the result's source
    # reports the way back (spec reverse), from the source to the node.
    measured_by_peer: bool = False


def option(
    spec: dict[str, Any],
    spec_key: str,
    given: dict[str, Any],
    fathom_key: str,
    read: Callable[[Any, str], Any],
    default: Any,
) -> tuple[Any, str]:
    """An option's value and where it came from: the pScheduler spec (what ran), else the
    mesh test's Fathom spec (`given`, the placement's options), else the tool's default."""
    if spec.get(spec_key) is not None:
        path = f"test/spec/{spec_key}"
        return read(spec[spec_key], path), path
    if given.get(fathom_key) is not None:
        path = f"placement/options/{fathom_key}"
        return given[fathom_key], path
    return default, f"(default {fathom_key})"


def as_given(value: Any, _path: str) -> Any:
    """For option's `read`: a spec value kept as it is, checked with the other sources' values."""
    return value
