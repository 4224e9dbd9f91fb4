"""Which address an agent may register: the one every peer's probes and throughput tests go to.

An enrolled agent names its own address, and every agent meshed with it then sends traffic
there; so the address must be one host that peers can reach, never a way to point the fleet
at loopback, a multicast group or a host outside the measured networks. Global unicast
addresses are accepted; private, shared, lab and loopback ranges only when the deployment
lists them (FATHOM_AGENT_ADDRESS_NETWORKS).
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

from inventory.choices import AddressFamily

Network = IPv4Network | IPv6Network

LIMITED_BROADCAST = IPv4Address("255.255.255.255")


class AddressError(ValueError):
    """Not an address an agent may register; the message says why."""


@functools.lru_cache(maxsize=65536)
def address_family(address: str) -> int:
    """4 or 6: the family of an IP literal (an IPv4-mapped IPv6 address is IPv4). A host name,
    which only external targets may be, counts as IPv4, as the tools resolve it by default.
    Cached: mesh_pairs asks it of both agents of every pair (39,800 of a 200-agent mesh), and
    a fleet has few addresses."""
    try:
        ip: IPv4Address | IPv6Address = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return AddressFamily.IPV4
    if isinstance(ip, IPv6Address) and ip.ipv4_mapped is None:
        return AddressFamily.IPV6
    return AddressFamily.IPV4


def agent_addresses(primary: str, others: Iterable[str], allowed: Iterable[Network]) -> tuple[str, list[str]]:
    """An agent's primary address and its addresses in its other families, each checked as
    agent_address checks one, in canonical form: one address per family, since a dual-stack
    agent is one endpoint of an IPv4 path and one of an IPv6 path to each peer."""
    networks = list(allowed)
    canonical = agent_address(primary, networks)
    seen = {address_family(canonical): canonical}
    rest = []
    for value in others:
        address = agent_address(value, networks)
        family = address_family(address)
        if family in seen:
            raise AddressError(
                f"{address} is a second IPv{family} address (with {seen[family]}): an agent has one address per family"
            )
        seen[family] = address
        rest.append(address)
    return canonical, rest


def agent_address(value: str, allowed: Iterable[Network]) -> str:
    """The canonical form of an agent's address, or AddressError.

    Never: a host name (it could be re-pointed anywhere after the check), a prefix, a zone,
    the unspecified address, multicast, link-local, broadcast or reserved addresses. Within
    an allowed network: yes. Otherwise only a global address.
    """
    try:
        address: IPv4Address | IPv6Address = ipaddress.ip_address(value.strip())
    except ValueError:
        raise AddressError(
            f"{value!r} is not an IP address: give one host's address, no name, prefix or port"
        ) from None
    if isinstance(address, IPv6Address):
        if address.scope_id:
            raise AddressError(f"{value!r} has a zone: peers cannot reach a link-scoped address")
        address = address.ipv4_mapped or address
    for refused, why in (
        (address.is_unspecified, "the unspecified address"),
        (address.is_multicast, "a multicast address"),
        (address.is_link_local, "a link-local address"),
        (address == LIMITED_BROADCAST, "the broadcast address"),
    ):
        if refused:
            raise AddressError(f"{address} is {why}, not one host that peers can reach")
    if any(address in network for network in allowed):
        return str(address)
    if address.is_loopback:
        raise AddressError(
            f"{address} is a loopback address: peers would probe themselves"
            " (list 127.0.0.0/8 in FATHOM_AGENT_ADDRESS_NETWORKS only for a single-host setup)"
        )
    if address.is_global and not address.is_reserved:
        return str(address)
    raise AddressError(
        f"{address} is not a global address: private, shared and lab ranges must be listed in"
        " FATHOM_AGENT_ADDRESS_NETWORKS"
    )
