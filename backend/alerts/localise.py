"""Where several degraded paths point: the agent or traced hop they share (Boolean network
tomography, as NetNORAD and 007 use it).

Each path is a set of elements: its two agents and the routers its newest trace passed. A
path that measured normally clears every element on it, so an element that lies on every
degraded path and on no healthy one explains them all; one that healthy paths also cross is
named with them as the evidence against it. Pure: the service (services/localisation.py)
finds the paths and their elements.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# The most suspects an incident names: beyond a few, the shared elements say nothing.
MAX_SUSPECTS = 3


@dataclass(frozen=True)
class Suspect:
    """An element every degraded path crosses, with the healthy paths that cross it too."""

    element: str  # "agent athens" or "hop 198.18.5.1"
    degraded: tuple[str, ...]  # the degraded paths, by name
    healthy: tuple[str, ...]  # healthy paths through it: evidence that it is not the cause

    @property
    def explains(self) -> bool:
        return len(self.degraded) >= 2 and not self.healthy

    def sentence(self) -> str:
        paths = "both degraded paths" if len(self.degraded) == 2 else f"all {len(self.degraded)} degraded paths"
        if self.explains:
            return f"{self.element} is on {paths} and on no path that measured normally"
        shown = ", ".join(self.healthy[:3]) + (f" and {len(self.healthy) - 3} more" if len(self.healthy) > 3 else "")
        return f"{self.element} is on {paths}, but also on {len(self.healthy)} that measured normally ({shown})"


def _specificity(element: str) -> int:
    # A router before an agent when both explain: an agent's every path also crosses its
    # first hop, and a hop inside the network is the narrower answer only when it is shared
    # by more than one agent's paths, which the ordering by healthy paths already says.
    return 0 if element.startswith("hop ") else 1


def suspects(degraded: Mapping[str, frozenset[str]], healthy: Mapping[str, frozenset[str]]) -> list[Suspect]:
    """The elements common to every degraded path, those crossed by the fewest healthy paths
    first (none: it explains them). Empty when fewer than two paths degraded or they share
    nothing."""
    if len(degraded) < 2:
        return []
    common = frozenset.intersection(*degraded.values())
    names = tuple(sorted(degraded))
    found = [
        Suspect(element, names, tuple(sorted(path for path, elements in healthy.items() if element in elements)))
        for element in common
    ]
    found.sort(key=lambda suspect: (len(suspect.healthy), _specificity(suspect.element), suspect.element))
    return found[:MAX_SUSPECTS]


def cleared(element: str, healthy: Iterable[frozenset[str]]) -> bool:
    """Whether a path that measured normally (its elements) crosses the element."""
    return any(element in elements for elements in healthy)
