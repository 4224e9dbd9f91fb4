"""The one policy for where Fathom's server connects on someone's say-so: a pSConfig template
URL, a perfSONAR node's API, an alert channel's webhook. Any of those can be pointed at the
server's own loopback, a cloud's metadata address (169.254.169.254), or the deployment's
internal network; their answers then come back in error lines.

The check is made on the address a connection actually reached, after DNS resolution and for
every redirect (each hop is a new connection), so a name that resolves to an allowed address
when checked and to a refused one when used (DNS rebinding) is still refused.

Always refused: loopback, link-local, unspecified and multicast addresses (IPv4-mapped
IPv6 forms too), and FATHOM_OUTBOUND_DENY_NETWORKS (the deployment's internal ranges; compose
lists the private ones). FATHOM_OUTBOUND_ALLOW_NETWORKS lets an admin allow a range back (a
lab on loopback, a perfSONAR node in a private range).
"""

from __future__ import annotations

import http.client
import socket
import urllib.request
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from typing import Any

import urllib3
from django.conf import settings

Network = IPv4Network | IPv6Network
Address = IPv4Address | IPv6Address

ALWAYS_REFUSED: tuple[tuple[Network, str], ...] = (
    (ip_network("127.0.0.0/8"), "loopback"),
    (ip_network("::1/128"), "loopback"),
    (ip_network("169.254.0.0/16"), "link-local"),
    (ip_network("fe80::/10"), "link-local"),
    (ip_network("0.0.0.0/8"), "unspecified"),
    (ip_network("::/128"), "unspecified"),
    (ip_network("224.0.0.0/4"), "multicast"),
    (ip_network("ff00::/8"), "multicast"),
)


class OutboundRefused(ConnectionError):
    """A connection the outbound policy does not allow; the message says to where and why."""


def refusal(address: str) -> str | None:
    """Why the server may not connect to `address`, or None when it may."""
    try:
        parsed: Address = ip_address(address.split("%", 1)[0])  # a zone index (fe80::1%eth0) aside
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(parsed, IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if any(parsed in network for network in settings.OUTBOUND_ALLOW_NETWORKS):
        return None
    for network, kind in ALWAYS_REFUSED:
        if parsed in network:
            return f"{parsed} is a {kind} address"
    for network in settings.OUTBOUND_DENY_NETWORKS:
        if parsed in network:
            return f"{parsed} is in {network}, an internal range (FATHOM_OUTBOUND_DENY_NETWORKS)"
    return None


def check_peer(sock: socket.socket) -> None:
    """Closes the connected socket and raises OutboundRefused when its peer is not allowed."""
    try:
        peer = str(sock.getpeername()[0])
    except OSError:
        return  # not connected: the caller's own error follows
    problem = refusal(peer)
    if problem:
        sock.close()
        raise OutboundRefused(f"not connecting to {problem} (FATHOM_OUTBOUND_ALLOW_NETWORKS allows a range)")


def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
    """socket.create_connection, then the peer checked (http.client's connections use it)."""
    sock = socket.create_connection(address, *args, **kwargs)
    check_peer(sock)
    return sock


class CheckedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = create_connection


class CheckedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = create_connection  # the TCP peer is checked before TLS begins


# --- urllib3 (perfSONAR nodes, pSConfig template URLs) -------------------------------------


class CheckedUrllib3HTTPConnection(urllib3.connection.HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        check_peer(sock)  # before anything is sent, and before TLS for the HTTPS one below
        return sock


class CheckedUrllib3HTTPSConnection(urllib3.connection.HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        check_peer(sock)
        return sock


class CheckedHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = CheckedUrllib3HTTPConnection


class CheckedHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = CheckedUrllib3HTTPSConnection


def checked(
    manager: urllib3.PoolManager, https_pool: type[urllib3.HTTPSConnectionPool] = CheckedHTTPSPool
) -> urllib3.PoolManager:
    """The pool manager with every connection (redirects' too) held to the policy."""
    manager.pool_classes_by_scheme = {"http": CheckedHTTPPool, "https": https_pool}
    return manager


# --- urllib.request (alert channels) -------------------------------------------------------


class CheckedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(CheckedHTTPConnection, req)


class CheckedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(CheckedHTTPSConnection, req, context=self._context)  # type: ignore[attr-defined]
