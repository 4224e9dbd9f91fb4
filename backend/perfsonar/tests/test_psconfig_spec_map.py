"""Test options between Fathom's kinds and pScheduler's tests, both ways."""

from __future__ import annotations

import math
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


# --- latency: pScheduler's latencybg (powstream) and latency (owping) -----------------------


def test_a_latencybg_spec_maps_to_a_latency_test() -> None:
    imported = spec_from_pscheduler(
        "latency",
        {
            "packet-interval": 0.05,
            "packet-timeout": 3,
            "packet-padding": 59,
            "ip-tos": 46,
            "packet-count": 600,
        },
        "latencybg",
    )
    assert imported.unmapped == {} and imported.errors == {}
    # 14-byte OWAMP header + 59 of padding; 600 packets every 0.05 s report every 30 s.
    assert imported.spec == {
        "packet_interval_s": 0.05,
        "packet_timeout_s": 3,
        "size_bytes": 73,
        "dscp": 46,
        "report_interval_s": 30,
    }


def test_what_latencybg_does_without_a_key_is_kept_or_said() -> None:
    imported = spec_from_pscheduler("latency", {}, "latencybg")
    # powstream's 600 packets every 0.1 s: a result every 60 s, Fathom's default too. Unpadded
    # OWAMP packets (14 bytes) are smaller than TWAMP-light's 41: said, and 41 used.
    assert imported.spec == {} and imported.errors == {}
    assert imported.unmapped == {
        "packet-padding": "not given: OWAMP then sends its bare 14-byte packets, smaller than a TWAMP-light "
        "packet; Fathom's default (41) is used"
    }
    assert spec_from_pscheduler("latency", {"packet-count": 300}, "latencybg").spec["report_interval_s"] == 30


def test_latency_keys_fathom_cannot_take_are_reported_each() -> None:
    imported = spec_from_pscheduler(
        "latency",
        {
            "packet-padding": 27,
            "bucket-width": 0.0001,
            "output-raw": True,
            "flip": True,
            "ctrl-port": 861,
            "data-ports": {"lower": 8760, "upper": 9960},
            "ip-version": 4,
            "packet-timeout": 0,
            "ip-tos": 184,
            "packet-count": 7,
        },
        "latencybg",
    )
    assert imported.spec == {"size_bytes": 41} and imported.errors == {}
    assert set(imported.unmapped) == {
        "bucket-width",
        "output-raw",
        "flip",
        "ctrl-port",
        "data-ports",
        "ip-version",
        "packet-timeout",
        "ip-tos",
        "packet-count",
    }
    assert "histogram" in imported.unmapped["bucket-width"]
    assert "no control session" in imported.unmapped["ctrl-port"]
    assert "the tool's own default" in imported.unmapped["packet-timeout"]
    assert "184 is not a DSCP" in imported.unmapped["ip-tos"]
    assert (
        "7 packets every 0.1 s report every 0.7 s, outside Fathom's 10 to 3600 s" in imported.unmapped["packet-count"]
    )


@pytest.mark.parametrize(
    ("padding", "reason"),
    [(10, "10 bytes of padding make 24-byte packets"), (2000, "2000 bytes of padding make 2014-byte packets")],
)
def test_padding_outside_twamp_lights_sizes_is_reported(padding: int, reason: str) -> None:
    imported = spec_from_pscheduler("latency", {"packet-padding": padding}, "latencybg")
    assert imported.spec == {} and imported.unmapped["packet-padding"].startswith(reason)


def test_an_owping_latency_test_leaves_its_interval_to_the_schedule() -> None:
    imported = spec_from_pscheduler("latency", {"packet-count": 100, "packet-padding": 27}, "latency")
    assert imported.spec == {"size_bytes": 41}
    assert "not a set number of packets" in imported.unmapped["packet-count"]


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"packet_interval_s": 0.05, "size_bytes": 100, "dscp": 46, "port": 8620, "report_interval_s": 30},
        {"packet_interval_s": 0.07, "packet_timeout_s": 2.5, "report_interval_s": 10},
        {"packet_interval_s": 1, "size_bytes": 1472, "report_interval_s": 3600, "packet_timeout_s": 10},
    ],
)
def test_a_latency_test_exports_as_latencybg_and_imports_back(spec: dict[str, Any]) -> None:
    exported = spec_to_pscheduler("latency", spec)
    normalized = normalize_spec("latency", spec)
    # What a node needs to send the same packets: the timeout always (owping and powstream
    # differ without it), padding to the same size, DSCP as -D takes it.
    assert exported["packet-padding"] == normalized["size_bytes"] - 14
    assert exported["packet-timeout"] == math.ceil(normalized["packet_timeout_s"])
    again = spec_from_pscheduler("latency", exported, "latencybg")
    fathom_only = {"port"}  # no pScheduler key: the export's _meta.fathom keeps it
    whole_timeout = {"packet_timeout_s": math.ceil(normalized["packet_timeout_s"])}
    expected = {key: value for key, value in (normalized | whole_timeout).items() if key not in fathom_only}
    assert {key: value for key, value in normalize_spec("latency", again.spec).items() if key not in fathom_only} == (
        expected
    )
    assert set(again.unmapped) <= {"packet-count"}  # 10 s at 0.07 s: 143 packets, 10.01 s: said
