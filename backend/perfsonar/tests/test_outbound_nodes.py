"""pSConfig template URLs and perfSONAR nodes are held to the outbound policy
(core/outbound.py), on every redirect of a template URL."""

from __future__ import annotations

from ipaddress import ip_network

import pytest
from django.test import override_settings

from core.tests.http_server import NOTHING_ALLOWED, server
from perfsonar.choices import TlsMode
from perfsonar.client import PSchedulerClient, PSchedulerError, Trust
from perfsonar.psconfig.template import TemplateError, load_url


def test_a_template_url_is_refused_on_loopback_and_on_a_redirect_to_it() -> None:
    with server("127.0.0.1") as (inner, inner_hits):
        with NOTHING_ALLOWED, pytest.raises(TemplateError, match="loopback"):
            load_url(inner + "/t.json")
        # An allowed host (127.0.0.2, allowed back for this test) redirecting to a refused one.
        with (
            server("127.0.0.2", redirect_to=inner + "/t.json") as (outer, outer_hits),
            override_settings(OUTBOUND_ALLOW_NETWORKS=(ip_network("127.0.0.2/32"),)),
            pytest.raises(TemplateError, match=r"127\.0\.0\.1 is a loopback"),
        ):
            load_url(outer + "/t.json")
        assert outer_hits == ["/t.json"] and inner_hits == []


def test_a_perfsonar_node_on_a_refused_address_is_not_called() -> None:
    with server("127.0.0.1") as (url, hits), NOTHING_ALLOWED:
        client = PSchedulerClient(url.replace("http://", "https://") + "/pscheduler", Trust(TlsMode.SYSTEM))
        with pytest.raises(PSchedulerError, match="loopback"):
            client.api_level()
    assert hits == []
