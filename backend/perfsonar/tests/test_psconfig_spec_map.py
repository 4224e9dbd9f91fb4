"""Test options between Fathom's kinds and pScheduler's tests, both ways."""

from __future__ import annotations

from typing import Any

import pytest

from meshes.specs import DEFAULT_TESTS, normalize_spec
from perfsonar.psconfig.spec_map import spec_from_pscheduler, spec_to_pscheduler


@pytest.mark.parametrize(
    ("kind", "pscheduler", "fathom"),
    [
        (
            "throughput",
            {"duration": "PT30S", "parallel": 4, "window-size": 1024000, "omit": "PT5S", "congestion": "bbr"},
            {"duration_s": 30, "parallel": 4, "window_bytes": 1024000, "omit_s": 5, "congestion": "bbr"},
        ),
        (
            "throughput",
            {"duration": "PT10S", "udp": True, "bandwidth": 50000000, "schema": 1},
            {"duration_s": 10, "udp": True, "bitrate_bps": 50000000},
        ),
        ("throughput", {"fq-rate": 10**9, "schema": 7}, {"duration_s": 10, "fq_rate_bps": 10**9}),
        (
            "rtt",
            {"count": 10, "interval": "PT0.5S", "length": 1000, "ttl": 64},
            {"count": 10, "interval_s": 0.5, "size_bytes": 1000, "ttl": 64},
        ),
        ("trace", {"hops": 20, "wait": "PT2S", "dest-port": 33435}, {"max_hops": 20, "wait_s": 2, "dst_port": 33435}),
    ],
)
def test_options_map_from_pscheduler(kind: str, pscheduler: dict[str, Any], fathom: dict[str, Any]) -> None:
    fathom_kind = {"rtt": "ping"}.get(kind, kind)
    imported = spec_from_pscheduler(fathom_kind, pscheduler)
    assert imported.unmapped == {} and imported.errors == {}
    # Absent keys are what the pScheduler tool does: rtt sends 5 packets, iperf3 runs 10 s.
    defaults = {"throughput": {"duration_s": 10}, "ping": {"count": 5}, "trace": {"wait_s": 5}}[fathom_kind]
    assert imported.spec == defaults | fathom


def test_what_pscheduler_does_without_a_key_is_kept() -> None:
    assert spec_from_pscheduler("ping", {}).spec == {"count": 5}
    assert spec_from_pscheduler("throughput", {}).spec == {"duration_s": 10}
    assert spec_from_pscheduler("trace", {"probe-type": "udp"}).spec == {"wait_s": 5}


def test_keys_without_a_fathom_option_are_reported_each() -> None:
    imported = spec_from_pscheduler(
        "throughput", {"duration": "PT20S", "ip-version": 4, "interval": "PT1S", "zero-copy": True}
    )
    assert imported.spec == {"duration_s": 20}
    assert set(imported.unmapped) == {"ip-version", "interval", "zero-copy"}
    assert "IP version" in imported.unmapped["ip-version"]
    assert imported.unmapped["zero-copy"] == "Fathom's throughput test has no such option"
    assert "ICMP" in spec_from_pscheduler("ping", {"protocol": "twamp"}).unmapped["protocol"]


def test_a_value_fathom_cannot_take_is_reported_and_left_at_the_default() -> None:
    imported = spec_from_pscheduler("throughput", {"duration": "PT600S", "parallel": 2, "omit": "PT1.5S"})
    assert imported.spec == {"parallel": 2}
    assert "must be between 1 and 300" in imported.unmapped["duration"]
    assert "whole number of seconds" in imported.unmapped["omit"]
    assert (
        spec_from_pscheduler("ping", {"count": "ten"}).unmapped["count"]
        == "'ten' is not a whole number; Fathom's default is used"
    )


def test_a_udp_test_without_a_rate_cannot_be_imported() -> None:
    imported = spec_from_pscheduler("throughput", {"udp": True})
    assert "bitrate_bps" in imported.errors


@pytest.mark.parametrize("default", DEFAULT_TESTS, ids=lambda test: test.name)
def test_defaults_export_what_a_node_needs_to_run_the_same_test(default: Any) -> None:
    if default.test_type == "flowsweep":
        assert spec_to_pscheduler("flowsweep", {}) == {}
        return
    exported = spec_to_pscheduler(default.test_type, default.spec)
    again = spec_from_pscheduler(default.test_type, exported)
    assert normalize_spec(default.test_type, again.spec) == normalize_spec(default.test_type, default.spec)


def test_an_export_says_only_what_differs_from_the_tool() -> None:
    assert spec_to_pscheduler("throughput", {}) == {"duration": "PT20S"}
    assert spec_to_pscheduler("ping", {"interval_s": 0.2}) == {"count": 10, "interval": "PT0.2S"}
    assert spec_to_pscheduler("trace", {"flows": 4}) == {"wait": "PT1S"}
    assert spec_to_pscheduler("throughput", {"fq_rate_bps": 10**9, "udp": True, "bitrate_bps": 10**8}) == {
        "duration": "PT20S",
        "udp": True,
        "bandwidth": 10**8,
        "fq-rate": 10**9,
        "schema": 7,
    }
