"""A pScheduler trace run as the "trace" part of a Fathom result: each of pScheduler's paths
is a flow of one probe per hop, named by the same route fingerprint a Fathom agent computes."""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from perfsonar.mapping.fields import (
    MappingError,
    as_array,
    as_integer,
    as_object,
    as_rtt_ms,
    as_text,
    at,
    clip,
    fail,
    optional_text,
    required,
)
from perfsonar.mapping.placement import Placement
from perfsonar.mapping.runs import PsRun

# The contract's bounds (result-batch.v1).
MAX_TRACE_FLOWS = 64
MAX_TRACE_HOPS = 64
MAX_AS_OWNER_LENGTH = 128
MAX_FLAG_LENGTH = 16

TRACE_DEFAULT_HOPS = 30
TRACE_DEFAULT_PORTS = {"udp": 33434, "tcp": 80, "icmp": 0}

# pScheduler's ICMP error names (python-icmperror) back to traceroute's flags, which the
# contract's trace flag holds (Fathom agents keep traceroute's "!H", "!X", "!<code>").
TRACEROUTE_FLAGS = {
    "host-unreachable": "!H",
    "net-unreachable": "!N",
    "protocol-unreachable": "!P",
    "source-route-failed": "!S",
    "fragmentation-needed-and-df-set": "!F",
    "communication-administratively-prohibited": "!X",
    "host-precedence-violation": "!V",
    "precedence-cutoff-in-effect": "!C",
    "port-unreachable": "!3",
    "destination-network-unknown": "!6",
    "destination-host-unknown": "!7",
    "source-host-isolated": "!8",
    "destination-network-administratively-prohibited": "!9",
    "destination-host-administratively-prohibited": "!10",
    "network-unreachable-for-type-of-service": "!11",
    "icmp-destination-host-unreachable-tos": "!12",
}


def _address(value: Any, path: str) -> str:
    """An IP address written as the Go agent writes one (netip's String): IPv6 compressed in
    lower case, IPv4-mapped IPv6 with a dotted tail, any zone kept."""
    written = as_text(value, path, 64)
    try:
        address = ipaddress.ip_address(written)
    except ValueError:
        fail(path, f"{written!r} is not an IP address")
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        zone = f"%{address.scope_id}" if address.scope_id else ""
        return f"::ffff:{address.ipv4_mapped}{zone}"
    return str(address)


def _flag(error: str) -> str:
    if error in TRACEROUTE_FLAGS:
        return TRACEROUTE_FLAGS[error]
    code = error.removeprefix("unknown-error-")
    return ("!" + code if code != error else error)[:MAX_FLAG_LENGTH]


def _hop(value: Any, path: str, ttl: int) -> dict[str, Any]:
    """A pScheduler hop as a Fathom hop of one probe; `{}` is a hop that gave no answer.
    The router's name, AS and path MTU belong to the hop (pScheduler sends one probe per
    hop), which keeps the contract's largest trace within one upload."""
    hop = as_object(value, path)
    address = None if hop.get("ip") is None else _address(hop["ip"], at(path, "ip"))
    rtt_ms = None
    if hop.get("rtt") is not None:
        rtt_ms = as_rtt_ms(hop["rtt"], at(path, "rtt"))
    probe: dict[str, Any] = {"address": address, "rtt_ms": rtt_ms}
    if hop.get("error") is not None:
        probe["flag"] = _flag(as_text(hop["error"], at(path, "error"), 200))
    mapped: dict[str, Any] = {"ttl": ttl, "probes": [probe]}
    hostname = optional_text(hop.get("hostname"), at(path, "hostname"), 255)
    if hostname:
        mapped["hostname"] = hostname
    if hop.get("as") is not None:
        # The traceroute tool's own lookup writes a bare number, the bulk lookup {number, owner}.
        as_ = hop["as"] if isinstance(hop["as"], dict) else {"number": hop["as"]}
        as_path = at(path, "as")
        number = as_.get("number")
        mapped["asn"] = None if number is None else as_integer(number, at(as_path, "number"), 0, 2**32 - 1)
        owner = optional_text(as_.get("owner"), at(as_path, "owner"), 10_000)
        if owner:
            mapped["as_owner"] = clip(owner, MAX_AS_OWNER_LENGTH)
    if hop.get("mtu") is not None:
        mapped["mtu"] = as_integer(hop["mtu"], at(path, "mtu"), 0, 65535)
    return mapped


def fingerprint(hops: list[dict[str, Any]]) -> str:
    """The route's name, exactly as the Go agent computes it (probe/trace Fingerprint): the
    first 16 hex digits of the SHA-256 of one line per hop, in TTL order, holding the hop's
    distinct addresses sorted and joined by "|", or "*" for a hop nobody answered."""
    lines = []
    for hop in hops:
        addresses = sorted({probe["address"] for probe in hop["probes"] if probe["address"] is not None})
        lines.append("|".join(addresses) if addresses else "*")
    text = "".join(line + "\n" for line in lines)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _destinations(run: PsRun, placement: Placement) -> tuple[set[str], set[str]]:
    """The addresses and host names the trace was aimed at: the spec's dest and the target."""
    addresses, names = set(), set()
    for value in (run.spec.get("dest"), placement.target):
        if not isinstance(value, str) or not value:
            continue
        try:
            addresses.add(_address(value, "dest"))
        except MappingError:
            names.add(value.rstrip(".").lower())
    return addresses, names


def _flow(path_value: Any, path: str, flow: int, first_ttl: int, aimed_at: tuple[set[str], set[str]]) -> dict[str, Any]:
    entries = as_array(path_value, path, 255)
    # A node traces up to its hop limit: trailing silent hops beyond what Fathom keeps go.
    while len(entries) > MAX_TRACE_HOPS and entries[-1] == {}:
        entries = entries[:-1]
    if len(entries) > MAX_TRACE_HOPS:
        fail(path, f"{len(entries)} hops, more than the {MAX_TRACE_HOPS} Fathom keeps")
    if first_ttl + len(entries) - 1 > 255:
        fail(path, f"hops from TTL {first_ttl} go beyond TTL 255")
    hops = [_hop(entry, f"{path}/{index}", first_ttl + index) for index, entry in enumerate(entries)]
    addresses, hostnames = aimed_at
    reached = False
    if hops:
        last = hops[-1]
        address = last["probes"][0]["address"]
        reached = address is not None and (
            address in addresses or last.get("hostname", "").rstrip(".").lower() in hostnames
        )
    return {"flow": flow, "src_port": 0, "reached": reached, "fingerprint": fingerprint(hops), "hops": hops}


def to_trace(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """The result's "trace" object from a trace run's merged result."""
    spec = run.spec
    method = "udp"
    if spec.get("probe-type") is not None:
        method = as_text(spec["probe-type"], "test/spec/probe-type", 8)
        if method not in TRACE_DEFAULT_PORTS:
            fail("test/spec/probe-type", f"{method!r} is not icmp, udp or tcp")
    port = TRACE_DEFAULT_PORTS[method]
    if spec.get("dest-port") is not None:
        port = as_integer(spec["dest-port"], "test/spec/dest-port", 0, 65535)
    first_ttl = 1 if spec.get("first-ttl") is None else as_integer(spec["first-ttl"], "test/spec/first-ttl", 1, 255)
    max_hops = TRACE_DEFAULT_HOPS
    if spec.get("hops") is not None:
        max_hops = as_integer(spec["hops"], "test/spec/hops", 1, 255)
    paths = as_array(required(result, "paths", "result"), "result/paths", MAX_TRACE_FLOWS)
    if not paths:
        fail("result/paths", "no path")
    aimed_at = _destinations(run, placement)
    flows = [_flow(value, f"result/paths/{index}", index, first_ttl, aimed_at) for index, value in enumerate(paths)]
    deepest = max((flow["hops"][-1]["ttl"] for flow in flows if flow["hops"]), default=1)
    return {"method": method, "dst_port": port, "max_hops": max(max_hops, deepest), "flows": flows}
