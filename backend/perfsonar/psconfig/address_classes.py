"""pSConfig address classes, evaluated at import against the template's own addresses, as
pSConfig's agent evaluates them when it builds a group's pairs (perl-shared's
perfSONAR_PS::Client::PSConfig::AddressClasses, and its tests in
t/client-psconfig-addressclasses.t; psconfig's Python port follows it).

A class takes the addresses of its data source that its match-filter matches (all, without
one) and its exclude-filter does not. The filters: `tag` (the address's tags or its host's,
any case), `host` (its host's tag, no-agent and jq), `ip-version`, `netmask`, `address-class`
(another class's match), and `and`, `or`, `not` over others.

Where Fathom cannot decide as pSConfig would, it says so and selects less, never more:
- a class with a `jq` filter (or a `host` filter's jq) selects nothing: Fathom runs no jq;
- the `requesting-agent` data source (the addresses of the agent reading the template)
  selects nothing: an import is for no one agent;
- `ip-version` and `netmask` need an IP address: a host name is taken at the address of the
  Fathom agent it is, else it is left undecided (pSConfig resolves it in DNS, an import does
  not), and an address a filter cannot decide is left out.
Undecided values follow three-valued logic through and/or/not, so `not` of an undecided
filter stays undecided rather than matching.

Pure: the template's sections and a way to an address's IP in, evaluations out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# pSConfig 5.2's Python agent ends its netmask filter with `return False` (psconfig
# address_classes/filters/netmask.py), so it matches nothing there; pSConfig 4's Perl, and the
# schema's meaning, match the addresses inside the netmask, as Fathom does.
NETMASK_NOTE = (
    "pSConfig 5's Python agent matches no address with a netmask filter (its netmask.py returns "
    "False); Fathom matches those inside the netmask, as pSConfig 4 and the schema do"
)


class _Blocked(Exception):
    """A class Fathom cannot evaluate (a jq filter, a class that refers to itself): why."""


@dataclass(frozen=True)
class ClassEvaluation:
    name: str
    selected: tuple[str, ...]  # the address names the class selects, in the template's order
    # What Fathom could not decide as pSConfig would, and what follows for the selection.
    notes: tuple[str, ...] = ()


@dataclass
class AddressClasses:
    """Evaluates the template's classes, each once."""

    template: dict[str, Any]
    # The IP address Fathom knows an address name at, or None for a host name it cannot tell.
    ip_of: Callable[[str], str | None]
    _done: dict[str, ClassEvaluation] = field(default_factory=dict)
    _notes: list[str] = field(default_factory=list)
    # Host names an ip-version or netmask filter met without an IP, and those filters' types.
    _unresolved: dict[str, None] = field(default_factory=dict)
    _unresolved_by: dict[str, None] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        value = self.template.get(name, {})
        return value if isinstance(value, dict) else {}

    def evaluate(self, name: str) -> ClassEvaluation:
        if name not in self._done:
            self._done[name] = self._evaluate(name)
        return self._done[name]

    def _evaluate(self, name: str) -> ClassEvaluation:
        spec = self.section("address-classes")[name]
        source = spec["data-source"]["type"]
        if source != "current-config":
            why = (
                "its data source is the requesting agent (the addresses of the pSConfig agent reading the "
                "template); an import is for no one agent, so the class selects no address"
            )
            return ClassEvaluation(name, (), (why,))
        outer = (self._notes, self._unresolved, self._unresolved_by)
        self._notes, self._unresolved, self._unresolved_by = [], {}, {}
        try:
            self._check(name, spec)
            selected: list[str] = []
            undecided: list[str] = []
            for address in self.section("addresses"):
                verdict = self.matches(name, address)
                if verdict:
                    selected.append(address)
                elif verdict is None:
                    undecided.append(address)
            if self._unresolved:
                filters = " and ".join(self._unresolved_by)
                self._notes.append(
                    f"{', '.join(self._unresolved)}: host names of no Fathom agent with an IP address, which "
                    f"pSConfig resolves in DNS for its {filters} filter; an import does not"
                )
            if undecided:
                self._notes.append(f"left out, as Fathom cannot decide whether they match: {', '.join(undecided)}")
            return ClassEvaluation(name, tuple(selected), tuple(dict.fromkeys(self._notes)))
        except _Blocked as blocked:
            return ClassEvaluation(name, (), (f"{blocked}: the class selects no address",))
        finally:
            self._notes, self._unresolved, self._unresolved_by = outer

    def _check(self, name: str, spec: dict[str, Any]) -> None:
        """Raises _Blocked for what no address can be evaluated against."""
        for key in ("match-filter", "exclude-filter"):
            if key in spec:
                self._check_filter(spec[key], f"address-classes.{name}.{key}", [name])

    def _check_filter(self, spec: dict[str, Any], where: str, chain: list[str]) -> None:
        kind = spec["type"]
        if kind == "jq" or (kind == "host" and "jq" in spec):
            raise _Blocked(f"{where} is a jq filter, which Fathom does not evaluate")
        if kind in ("and", "or"):
            for index, item in enumerate(spec["filters"]):
                self._check_filter(item, f"{where}.filters[{index}]", chain)
        elif kind == "not":
            self._check_filter(spec["filter"], f"{where}.filter", chain)
        elif kind == "address-class":
            other = spec["class"]
            if other in chain:
                raise _Blocked(f"{where} refers back to class {other}, which pSConfig cannot evaluate either")
            other_spec = self.section("address-classes").get(other)
            if other_spec is not None:
                for key in ("match-filter", "exclude-filter"):
                    if key in other_spec:
                        self._check_filter(other_spec[key], f"address-classes.{other}.{key}", [*chain, other])
        elif kind == "netmask":
            self._notes.append(NETMASK_NOTE)

    def matches(self, name: str, address: str) -> bool | None:
        """Whether the class takes the address: True, False, or None when Fathom cannot tell."""
        spec = self.section("address-classes")[name]
        matched = self._filter(spec["match-filter"], address) if "match-filter" in spec else True
        excluded = self._filter(spec["exclude-filter"], address) if "exclude-filter" in spec else False
        if matched is False or excluded is True:
            return False
        if matched is True and excluded is False:
            return True
        return None

    def _filter(self, spec: dict[str, Any], address: str) -> bool | None:
        kind = spec["type"]
        entry = self.section("addresses")[address]
        if kind == "and":
            verdicts = [self._filter(item, address) for item in spec["filters"]]
            return False if False in verdicts else (None if None in verdicts else True)
        if kind == "or":
            verdicts = [self._filter(item, address) for item in spec["filters"]]
            return True if True in verdicts else (None if None in verdicts else False)
        if kind == "not":
            verdict = self._filter(spec["filter"], address)
            return None if verdict is None else not verdict
        if kind == "address-class":
            if spec["class"] not in self.section("address-classes"):
                self._notes.append(f"address class {spec['class']} is not defined: matches no address")
                return False
            return self.matches(spec["class"], address)
        if kind == "tag":
            wanted = str(spec["tag"]).lower()
            tags = [*entry.get("tags", []), *self._host(entry).get("tags", [])]
            return not wanted or any(str(tag).lower() == wanted for tag in tags)
        if kind == "host":
            return self._host_matches(spec, entry)
        return self._ip_filter(spec, address)

    def _host(self, entry: dict[str, Any]) -> dict[str, Any]:
        host = self.section("hosts").get(entry.get("host", ""))
        return host if isinstance(host, dict) else {}

    def _host_matches(self, spec: dict[str, Any], entry: dict[str, Any]) -> bool:
        if entry.get("host") not in self.section("hosts"):
            return False  # pSConfig matches a host filter only against a defined host
        host = self._host(entry)
        if spec.get("tag"):
            wanted = str(spec["tag"]).lower()
            if not any(str(tag).lower() == wanted for tag in host.get("tags", [])):
                return False
        # An absent no-agent is false on both sides, so the filter picks agents by default.
        return bool(spec.get("no-agent", False)) == bool(host.get("no-agent", False))

    def _ip_filter(self, spec: dict[str, Any], address: str) -> bool | None:
        ip_text = self.ip_of(address)
        if ip_text is None:
            self._unresolved[self.section("addresses")[address]["address"]] = None
            self._unresolved_by[spec["type"]] = None
            return None
        ip = ipaddress.ip_address(ip_text)
        if spec["type"] == "ip-version":
            return bool(ip.version == spec["ip-version"])
        network = ipaddress.ip_network(spec["netmask"], strict=False)
        return ip.version == network.version and ip in network
