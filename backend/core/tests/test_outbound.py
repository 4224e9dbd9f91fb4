"""The outbound policy (issue 34 item 7): loopback, link-local and configured internal
addresses are refused, an admin allows a range back. Its clients are held to it in
alerts/tests/test_outbound_channels.py and perfsonar/tests/test_outbound_nodes.py."""

from __future__ import annotations

from ipaddress import ip_network

import pytest
from django.test import override_settings

from core.outbound import refusal
from core.tests.http_server import NOTHING_ALLOWED


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("169.254.169.254", "link-local"),  # a cloud's metadata service
        ("fe80::1%eth0", "link-local"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - an address to refuse, not one to bind
        ("224.0.0.1", "multicast"),
    ],
)
def test_loopback_link_local_and_their_kind_are_refused(address: str, why: str) -> None:
    with NOTHING_ALLOWED:
        assert why in (refusal(address) or "")


def test_configured_ranges_are_refused_and_an_allow_list_lets_one_back() -> None:
    with override_settings(OUTBOUND_ALLOW_NETWORKS=(), OUTBOUND_DENY_NETWORKS=(ip_network("10.0.0.0/8"),)):
        assert refusal("198.18.1.1") is None  # an ordinary address
        assert "internal range" in (refusal("10.1.2.3") or "")
    allowed = (ip_network("10.1.0.0/16"), ip_network("127.0.0.0/8"))
    with override_settings(OUTBOUND_ALLOW_NETWORKS=allowed, OUTBOUND_DENY_NETWORKS=(ip_network("10.0.0.0/8"),)):
        assert refusal("10.1.2.3") is None and refusal("127.0.0.1") is None
        assert refusal("10.2.0.1") is not None
