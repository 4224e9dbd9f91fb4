from __future__ import annotations

import ipaddress
import os
from unittest import mock

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.env import env_float, env_networks


def test_networks_are_read_in_cidr_notation_and_a_bad_one_stops_the_start() -> None:
    with mock.patch.dict(os.environ, {"FATHOM_NETS": "198.18.0.0/15, fd00::/8"}):
        assert env_networks("FATHOM_NETS", []) == (
            ipaddress.ip_network("198.18.0.0/15"),
            ipaddress.ip_network("fd00::/8"),
        )
    with mock.patch.dict(os.environ, {}, clear=True):
        assert env_networks("FATHOM_NETS", []) == ()
    for bad in ("10.0.0.1/8", "ten", "10.0.0.0/33"):
        with (
            mock.patch.dict(os.environ, {"FATHOM_NETS": bad}),
            pytest.raises(ImproperlyConfigured, match="FATHOM_NETS"),
        ):
            env_networks("FATHOM_NETS", [])


def test_numbers_are_read_with_their_bounds_and_a_bad_one_stops_the_start() -> None:
    with mock.patch.dict(os.environ, {"FATHOM_LIMIT": "0.25"}):
        assert env_float("FATHOM_LIMIT", 0.5, minimum=0, maximum=10) == 0.25
    with mock.patch.dict(os.environ, {}, clear=True):
        assert env_float("FATHOM_LIMIT", 0.5) == 0.5
    for bad in ("half", "nan", "inf", "-1", "11"):
        with (
            mock.patch.dict(os.environ, {"FATHOM_LIMIT": bad}),
            pytest.raises(ImproperlyConfigured, match="FATHOM_LIMIT"),
        ):
            env_float("FATHOM_LIMIT", 0.5, minimum=0, maximum=10)
