"""An alert channel's URL is held to the outbound policy (core/outbound.py): a URL on loopback,
or a name that resolves to it, is refused before anything is sent, for good."""

from __future__ import annotations

import pytest

from alerts.transports.base import TransportError, post
from core.tests.http_server import NOTHING_ALLOWED, server


def test_a_channel_url_on_loopback_is_refused_before_anything_is_sent() -> None:
    with server("127.0.0.1") as (url, hits), NOTHING_ALLOWED, pytest.raises(TransportError) as raised:
        post(url + "/hook", b"{}", {}, permanent_codes=set())
    assert "127.0.0.1 is a loopback address" in str(raised.value) and raised.value.permanent
    assert hits == []


def test_a_name_that_resolves_to_loopback_is_refused_after_resolution() -> None:
    with server("127.0.0.1") as (url, hits), NOTHING_ALLOWED, pytest.raises(TransportError) as raised:
        post(url.replace("127.0.0.1", "localhost") + "/hook", b"{}", {}, permanent_codes=set())
    assert "loopback" in str(raised.value) and hits == []
