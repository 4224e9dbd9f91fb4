"""The state of one template's mapping: the template's sections, the agents known, and what
was reported as not mapped; which agent an address is."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from perfsonar.psconfig.address_classes import AddressClasses, ClassEvaluation
from perfsonar.psconfig.import_model import (
    KnownAgent,
    Unmapped,
    canonical,
)


@dataclass
class PlannerBase:
    """The template, the known agents and the report so far."""

    template: dict[str, Any]
    agents: list[KnownAgent]
    register_unknown: bool
    unmapped: list[Unmapped] = field(default_factory=list)
    mapped: set[str] = field(default_factory=set)
    _reported: set[tuple[str, str]] = field(default_factory=set)
    _classes: AddressClasses | None = None

    def report(self, element: str, reason: str) -> None:
        if (element, reason) not in self._reported:
            self._reported.add((element, reason))
            self.unmapped.append(Unmapped(element, reason))

    def section(self, name: str) -> dict[str, Any]:
        value = self.template.get(name, {})
        return value if isinstance(value, dict) else {}

    def address_disabled(self, name: str) -> bool:
        spec = self.section("addresses")[name]
        host = self.section("hosts").get(spec.get("host", ""), {})
        return bool(spec.get("disabled") or host.get("disabled"))

    def resolve(self, name: str) -> KnownAgent | None:
        """The agent an address is: by its address, then by its name."""
        address = canonical(str(self.section("addresses")[name]["address"]))
        for agent in self.agents:
            if canonical(agent.address) == address:
                return agent
        for agent in self.agents:
            if agent.name in (name.lower(), address):
                return agent
        return None

    def address_of(self, name: str) -> str:
        return str(self.section("addresses")[name]["address"])

    def ip_of(self, name: str) -> str | None:
        """The address's IP: as written, else that of the Fathom agent it is; None for a host
        name Fathom knows no IP of (pSConfig would resolve it in DNS)."""
        candidates = [self.address_of(name)]
        agent = self.resolve(name)
        if agent is not None:
            candidates.append(agent.address)
        for candidate in candidates:
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                continue
        return None

    def address_class(self, name: str) -> ClassEvaluation:
        """What a class selects from the template's addresses, evaluated once."""
        if self._classes is None:
            self._classes = AddressClasses(self.template, self.ip_of)
        return self._classes.evaluate(name)
