"""pScheduler runs mapped onto Fathom's result contract, against the recorded payloads in
fixtures/: every one maps, passes ingest's own checks, and keeps the payload's numbers."""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.util
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from measurements.ingest import TimeWindow, schema_errors, semantic_errors
from perfsonar.durations import format_duration, parse_duration
from perfsonar.mapping import (
    MappingError,
    Placement,
    PsRun,
    fingerprint,
    result_id,
    run_from_archive,
    run_from_record,
    to_result,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOOLS_PATH = Path(__file__).resolve().parents[3] / "tests" / "fakes" / "pscheduler" / "tools.py"
PEER = "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f"
SLOT = "5d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def placement(kind: str, target: str = "127.0.0.1", **changes: Any) -> Placement:
    fields: dict[str, Any] = {"test_type": kind, "test_id": f"lab/{kind}:{PEER}", "peer_id": PEER, "target": target}
    return Placement(**{**fields, **changes})


def assert_ingestible(result: dict[str, Any]) -> None:
    """What ingest asks of an agent's upload, judged on the day the run was recorded."""
    assert schema_errors({"schema_version": 1, "results": [result]}) == []
    started = datetime.fromisoformat(result["started_at"])
    window = TimeWindow.at(started + timedelta(hours=1))
    assert semantic_errors([result], {uuid.UUID(PEER): False}, window) == []


def run_of(result: dict[str, Any], test_type: str, spec: dict[str, Any]) -> PsRun:
    """A finished run carrying a recorded result (the result-*.json fixtures have no run)."""
    body = load("archive-rtt.json")
    body["test"] = {"type": test_type, "spec": spec}
    body["result"] = result
    return run_from_archive(body)


@functools.cache
def tools() -> Any:
    """tests/fakes/pscheduler/tools.py, which is not on the backend's import path."""
    spec = importlib.util.spec_from_file_location("pscheduler_tools", TOOLS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- every payload maps ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "kind", "target"),
    [
        ("archive-throughput.json", "throughput", "127.0.0.1"),
        ("archive-rtt.json", "ping", "127.0.0.1"),
        ("archive-trace.json", "trace", "internet2.edu"),
    ],
)
def test_archiver_bodies_map_to_ingestible_results(fixture: str, kind: str, target: str) -> None:
    body = load(fixture)
    run = run_from_archive(body)
    assert run.test_type == body["test"]["type"] and run.tool == body["tool"]["name"]
    assert run.reference == body["reference"] and run.href == body["run"]["href"]
    result = to_result(run, placement(kind, target))
    assert result["status"] == "ok" and result["error"] == ""
    assert result["id"] == str(result_id(body["run"]["href"]))
    assert result["started_at"] == datetime.fromisoformat(body["run"]["start-time"]).isoformat()
    assert result["ended_at"] == datetime.fromisoformat(body["run"]["end-time"]).isoformat()
    assert kind in result
    assert_ingestible(result)


@pytest.mark.parametrize(
    ("fixture", "test_type", "kind", "spec"),
    [
        ("result-throughput.json", "throughput", "throughput", {"dest": "127.0.0.1", "parallel": 4, "omit": "PT1S"}),
        ("result-throughput-udp.json", "throughput", "throughput", {"dest": "127.0.0.1", "udp": True}),
        ("result-rtt.json", "rtt", "ping", {"dest": "127.0.0.1"}),
        ("result-trace.json", "trace", "trace", {"dest": "internet2.edu"}),
    ],
)
def test_recorded_results_map_to_ingestible_results(fixture: str, test_type: str, kind: str, spec: Any) -> None:
    result = to_result(run_of(load(fixture), test_type, spec), placement(kind))
    assert result["status"] == "ok"
    assert_ingestible(result)


def test_a_polled_run_is_the_pushed_run() -> None:
    """The poll path (the run record and its task) gives the result the push gave, id and all,
    so ingest keeps whichever comes second as a duplicate."""
    for fixture, kind in (("archive-throughput.json", "throughput"), ("archive-rtt.json", "ping")):
        body = load(fixture)
        pushed = to_result(run_from_archive(body), placement(kind))
        polled = to_result(run_from_record(body["run"], body["task"]), placement(kind))
        assert polled == pushed


def test_a_polled_run_without_its_task_takes_the_test_from_the_placement() -> None:
    body = load("archive-throughput.json")
    run = run_from_record(body["run"])
    assert run.test_type == "" and run.spec == {}
    given = {"duration_s": 5, "omit_s": 1, "parallel": 4}
    result = to_result(run, placement("throughput", options=given))
    assert (
        result["throughput"]["options"]
        == to_result(run_from_archive(body), placement("throughput"))["throughput"]["options"]
    )
    assert_ingestible(result)


# --- throughput ------------------------------------------------------------------------------


def test_throughput_keeps_every_stream_interval_and_the_summaries() -> None:
    body = load("archive-throughput.json")
    payload, spec = body["result"], body["test"]["spec"]
    throughput = to_result(run_from_archive(body), placement("throughput", slot_id=SLOT))["throughput"]
    payload_streams = [stream for interval in payload["intervals"] for stream in interval["streams"]]
    assert len(throughput["intervals"]) == len(payload_streams) > 0
    for row, stream in zip(throughput["intervals"], payload_streams, strict=True):
        assert row["stream"] == stream["stream-id"]
        assert (row["start_s"], row["end_s"]) == (stream["start"], stream["end"])
        assert row["bits_per_s"] == stream["throughput-bits"]
        assert row["bytes"] == stream["throughput-bytes"]
        assert row["retransmits"] == stream["retransmits"]
        assert row["snd_cwnd"] == stream["tcp-window-size"]
        assert row["rtt_us"] == stream["rtt"]
        assert row["omitted"] == stream["omitted"]
        assert row["sender"] is True
        # What pScheduler drops stays unknown, never 0.
        assert row["snd_wnd"] is row["rttvar_us"] is row["pmtu"] is None
        assert row["packets"] is row["jitter_ms"] is row["lost_packets"] is None
    total = payload["summary"]["summary"]
    summary = throughput["summary"]
    assert summary["sender_bits_per_s"] == total["throughput-bits"]
    assert summary["receiver_bits_per_s"] == total["receiver-throughput-bits"]
    assert summary["sender_bytes"] == total["throughput-bytes"]
    assert summary["retransmits"] == total["retransmits"]
    assert summary["max_snd_cwnd"] == max(stream["tcp-window-size"] for stream in payload_streams)
    assert summary["min_rtt_us"] is summary["max_rtt_us"] is summary["host_cpu_percent"] is None
    assert summary["jitter_ms"] is summary["lost_packets"] is summary["lost_percent"] is None
    means = [stream["rtt"] for stream in payload["summary"]["streams"]]
    assert summary["mean_rtt_us"] == sum(means) // len(means)
    assert len(throughput["stream_summaries"]) == len(payload["summary"]["streams"]) == spec["parallel"]
    for mapped, stream in zip(throughput["stream_summaries"], payload["summary"]["streams"], strict=True):
        assert mapped["sender_bits_per_s"] == stream["throughput-bits"]
        assert mapped["sender_bytes"] == stream["throughput-bytes"]
        assert mapped["retransmits"] == stream["retransmits"]
        assert mapped["mean_rtt_us"] == stream["rtt"]
    assert throughput["protocol"] == "TCP" and throughput["reverse"] is False
    assert throughput["streams"] == spec["parallel"]
    assert throughput["duration_s"] == parse_duration(spec["duration"])
    assert throughput["omit_s"] == parse_duration(spec["omit"])
    assert throughput["options"] == {
        "duration_s": parse_duration(spec["duration"]),
        "omit_s": parse_duration(spec["omit"]),
        "parallel": spec["parallel"],
        "window_bytes": 0,
        "reverse": False,
        "udp": False,
        "bitrate_bps": 0,
        "congestion": "",
        "mss": 0,
        "fq_rate_bps": 0,
    }
    assert throughput["iperf3_version"] == "" and throughput["sndbuf_actual"] is None


def test_udp_keeps_packets_loss_and_jitter() -> None:
    payload = load("result-throughput-udp.json")
    spec = {"dest": "127.0.0.1", "udp": True, "bandwidth": 50_000_000, "duration": "PT5S"}
    throughput = to_result(run_of(payload, "throughput", spec), placement("throughput"))["throughput"]
    assert throughput["protocol"] == "UDP"
    assert throughput["options"]["udp"] is True and throughput["options"]["bitrate_bps"] == spec["bandwidth"]
    payload_streams = [stream for interval in payload["intervals"] for stream in interval["streams"]]
    for row, stream in zip(throughput["intervals"], payload_streams, strict=True):
        assert row["packets"] == stream["sent"]
        assert row["bits_per_s"] == stream["throughput-bits"]
        assert row["retransmits"] is row["snd_cwnd"] is row["rtt_us"] is None
    total = payload["summary"]["summary"]
    summary = throughput["summary"]
    assert summary["packets"] == total["sent"] and summary["lost_packets"] == total["lost"]
    assert summary["jitter_ms"] == total["jitter"]
    assert summary["lost_percent"] == 100 * total["lost"] / total["sent"]
    assert summary["receiver_bits_per_s"] == total["receiver-throughput-bits"]
    stream = payload["summary"]["streams"][0]
    assert throughput["stream_summaries"][0]["jitter_ms"] == stream["jitter"]
    assert throughput["stream_summaries"][0]["packets"] == stream["sent"]


def test_udp_is_told_from_the_result_when_the_spec_is_unknown() -> None:
    payload = load("result-throughput-udp.json")
    throughput = to_result(run_of(payload, "", {}), placement("throughput"))["throughput"]
    assert throughput["protocol"] == "UDP" and throughput["options"]["bitrate_bps"] == 1_000_000


@pytest.mark.parametrize("fathom_reverse", [False, True])
def test_a_reversed_one_ended_run_is_the_receivers_view(fathom_reverse: bool) -> None:
    """A node leading a single-ended, reversed test (a Fathom agent sending to the node) runs
    the receiving client: its intervals are not the sender's. Fathom's own reverse is the
    placement's (which end the result is stored under), whatever pScheduler's spec says."""
    spec = {"dest": "192.0.2.7", "single-ended": True, "reverse": True, "parallel": 4, "omit": "PT1S"}
    run = run_of(load("result-throughput.json"), "throughput", spec)
    result = to_result(run, placement("throughput", reversed=fathom_reverse))
    assert result["throughput"]["reverse"] is fathom_reverse
    assert result["throughput"]["options"]["reverse"] is fathom_reverse
    assert {row["sender"] for row in result["throughput"]["intervals"]} == {False}
    assert_ingestible(result)
    two_ended = {**spec, "single-ended": False}
    result = to_result(run_of(load("result-throughput.json"), "throughput", two_ended), placement("throughput"))
    assert {row["sender"] for row in result["throughput"]["intervals"]} == {True}


def test_whose_view_is_told_by_tcp_info_when_the_spec_is_unknown() -> None:
    payload = load("result-throughput.json")
    sent = to_result(run_of(payload, "", {}), placement("throughput"))["throughput"]["intervals"]
    assert {row["sender"] for row in sent} == {True}
    for interval in payload["intervals"]:
        for stream in interval["streams"]:
            for key in ("retransmits", "tcp-window-size", "rtt"):
                stream.pop(key, None)
    received = to_result(run_of(payload, "", {}), placement("throughput"))["throughput"]["intervals"]
    assert {row["sender"] for row in received} == {False}


def test_iperf3_placeholders_are_unknown_not_numbers() -> None:
    payload = load("result-throughput.json")
    stream = payload["intervals"][1]["streams"][0]
    stream["tcp-window-size"], stream["rtt"], stream["retransmits"] = 2**32 - 1, 0, 2**64 - 1
    row = to_result(run_of(payload, "throughput", {"parallel": 4}), placement("throughput"))["throughput"]["intervals"]
    assert row[len(payload["intervals"][0]["streams"])]["snd_cwnd"] is None
    assert row[len(payload["intervals"][0]["streams"])]["rtt_us"] is None
    assert row[len(payload["intervals"][0]["streams"])]["retransmits"] is None


# --- rtt -> ping -----------------------------------------------------------------------------


def test_rtt_round_trips_become_ping_samples() -> None:
    body = load("archive-rtt.json")
    payload = body["result"]
    run = run_from_archive(body)
    ping = to_result(run, placement("ping"))["ping"]
    assert ping["transmitted"] == payload["sent"] and ping["received"] == payload["received"]
    assert ping["duplicates"] == payload["duplicates"] and ping["errors"] == 0
    assert (ping["transmitted"] - ping["received"]) / ping["transmitted"] == payload["loss"]
    assert ping["count"] == body["test"]["spec"]["count"]
    assert (ping["interval_s"], ping["size_bytes"], ping["ttl"]) == (1.0, 56, None)
    assert len(ping["samples"]) == len(payload["roundtrips"])
    for sample, trip in zip(ping["samples"], payload["roundtrips"], strict=True):
        assert sample["seq"] == trip["seq"]
        assert sample["rtt_ms"] == pytest.approx(parse_duration(trip["rtt"]) * 1000, abs=1e-9)
        assert sample["ttl"] == trip["ttl"]
        assert sample["duplicate"] is False and "error" not in sample
        assert datetime.fromisoformat(sample["time"]) == run.start + timedelta(seconds=trip["seq"] - 1)
    rtts = sorted(sample["rtt_ms"] for sample in ping["samples"])
    assert rtts[0] == pytest.approx(parse_duration(payload["min"]) * 1000, abs=1e-9)
    assert rtts[-1] == pytest.approx(parse_duration(payload["max"]) * 1000, abs=1e-9)


def test_lost_packets_duplicates_and_icmp_errors() -> None:
    payload = load("result-rtt.json")
    trips = payload["roundtrips"]
    lost, errored = trips[2]["seq"], trips[3]["seq"]
    trips[:] = [trips[0], copy.deepcopy(trips[0]), trips[1], {"seq": errored, "ip": "192.0.2.1", "error": None}]
    trips.append({"seq": trips[0]["seq"] + 4, "ip": "192.0.2.1", "error": "host-unreachable"})
    payload["received"] = 2
    spec = {"dest": "127.0.0.1", "count": 5, "interval": "PT0.5S", "length": 100, "ttl": 32}
    result = to_result(run_of(payload, "rtt", spec), placement("ping"))
    ping = result["ping"]
    assert (ping["transmitted"], ping["received"], ping["duplicates"], ping["errors"]) == (5, 2, 1, 2)
    by_seq = {sample["seq"]: sample for sample in ping["samples"] if not sample["duplicate"]}
    assert by_seq[lost]["rtt_ms"] is None and "error" not in by_seq[lost]
    assert by_seq[errored]["rtt_ms"] is None and by_seq[errored]["error"] == "unknown-icmp-error"
    assert by_seq[5]["error"] == "host-unreachable"
    assert [sample["seq"] for sample in ping["samples"] if sample["duplicate"]] == [1]
    assert (ping["interval_s"], ping["size_bytes"], ping["ttl"]) == (0.5, 100, 32)
    assert datetime.fromisoformat(by_seq[5]["time"]) - datetime.fromisoformat(by_seq[1]["time"]) == timedelta(seconds=2)
    assert_ingestible(result)


def test_the_mesh_tests_options_fill_what_the_spec_does_not_say() -> None:
    run = run_of(load("result-rtt.json"), "rtt", {"dest": "127.0.0.1"})
    ping = to_result(run, placement("ping", options={"count": 5, "interval_s": 0.2, "size_bytes": 1400}))["ping"]
    assert (ping["count"], ping["interval_s"], ping["size_bytes"]) == (5, 0.2, 1400)


# --- trace -----------------------------------------------------------------------------------


def test_trace_hops_keep_address_rtt_names_as_and_flags() -> None:
    body = load("archive-trace.json")
    hops = body["result"]["paths"][0]
    trace = to_result(run_from_archive(body), placement("trace", "internet2.edu"))["trace"]
    assert (trace["method"], trace["dst_port"], trace["max_hops"]) == ("udp", 33434, 30)
    (flow,) = trace["flows"]
    assert len(flow["hops"]) == len(hops)
    for ttl, (mapped, hop) in enumerate(zip(flow["hops"], hops, strict=True), start=1):
        assert mapped["ttl"] == ttl
        (probe,) = mapped["probes"]
        assert probe["address"] == hop["ip"]
        assert probe["rtt_ms"] == pytest.approx(parse_duration(hop["rtt"]) * 1000, abs=1e-9)
        assert mapped.get("hostname") == hop.get("hostname")
        assert mapped.get("asn") == hop.get("as", {}).get("number")
        assert mapped.get("as_owner") == hop.get("as", {}).get("owner")
    assert flow["hops"][-1]["probes"][0]["flag"] == "!X"  # communication-administratively-prohibited
    assert flow["reached"] is True  # the last hop is internet2.edu., the spec's dest


def test_trace_reached_compares_the_last_hop_with_the_destination() -> None:
    payload = load("result-trace.json")
    last_ip = payload["paths"][0][-1]["ip"]
    reached = to_result(run_of(payload, "trace", {"dest": last_ip}), placement("trace", last_ip))
    assert reached["trace"]["flows"][0]["reached"] is True
    elsewhere = to_result(run_of(payload, "trace", {"dest": "192.0.2.99"}), placement("trace", "192.0.2.99"))
    assert elsewhere["trace"]["flows"][0]["reached"] is False
    payload["paths"][0].append({})
    silent = to_result(run_of(payload, "trace", {"dest": last_ip}), placement("trace", last_ip))
    assert silent["trace"]["flows"][0]["reached"] is False


def test_unanswered_hops_mtu_and_first_ttl() -> None:
    path = [{"ip": "192.0.2.1", "rtt": "PT0.0012S", "mtu": 1500}, {}, {"ip": "2001:DB8:0:0:0:0:0:9", "mtu": 9000}]
    spec = {"dest": "2001:db8::9", "first-ttl": 3, "hops": 5, "probe-type": "icmp"}
    result = to_result(run_of({"succeeded": True, "paths": [path]}, "trace", spec), placement("trace", "2001:db8::9"))
    trace = result["trace"]
    assert (trace["method"], trace["dst_port"], trace["max_hops"]) == ("icmp", 0, 5)
    hops = trace["flows"][0]["hops"]
    assert [hop["ttl"] for hop in hops] == [3, 4, 5]
    assert hops[0] == {"ttl": 3, "probes": [{"address": "192.0.2.1", "rtt_ms": 1.2}], "mtu": 1500}
    assert hops[1] == {"ttl": 4, "probes": [{"address": None, "rtt_ms": None}]}
    assert hops[2] == {"ttl": 5, "probes": [{"address": "2001:db8::9", "rtt_ms": None}], "mtu": 9000}
    assert trace["flows"][0]["reached"] is True
    assert_ingestible(result)


@pytest.mark.parametrize(
    ("error", "flag"),
    [
        ("host-unreachable", "!H"),
        ("communication-administratively-prohibited", "!X"),
        ("fragmentation-needed-and-df-set", "!F"),
        ("destination-host-administratively-prohibited", "!10"),
        ("unknown-error-42", "!42"),
        ("something-else-entirely-long", "something-else-e"),
    ],
)
def test_icmp_errors_become_traceroutes_flags(error: str, flag: str) -> None:
    path = [{"ip": "192.0.2.1", "rtt": "PT0.001S", "error": error}]
    result = to_result(run_of({"succeeded": True, "paths": [path]}, "trace", {}), placement("trace"))
    assert result["trace"]["flows"][0]["hops"][0]["probes"][0]["flag"] == flag
    assert_ingestible(result)


def test_bare_as_numbers_and_long_owners() -> None:
    """The traceroute tool's own AS lookup writes a bare number; owners are cut to what the
    contract keeps."""
    path = [{"ip": "192.0.2.1", "as": 64500}, {"ip": "192.0.2.2", "as": {"number": 64501, "owner": "o" * 300}}]
    result = to_result(run_of({"succeeded": True, "paths": [path]}, "trace", {}), placement("trace"))
    first, second = result["trace"]["flows"][0]["hops"]
    assert first["asn"] == 64500 and "as_owner" not in first
    assert second["asn"] == 64501 and len(second["as_owner"]) == 128 and second["as_owner"].endswith("...")
    assert_ingestible(result)


def test_the_fingerprint_is_the_go_agents() -> None:
    """agents/internal/probe/trace Fingerprint: the first 16 hex digits of the SHA-256 of one
    line per hop, the hop's sorted addresses joined by "|", "*" for silence. The pinned values
    are what the Go function returns for these routes."""
    payload = load("result-trace.json")
    flow = to_result(run_of(payload, "trace", {"dest": "x.invalid"}), placement("trace"))["trace"]["flows"][0]
    text = "".join(f"{hop['ip']}\n" for hop in payload["paths"][0])
    assert flow["fingerprint"] == hashlib.sha256(text.encode()).hexdigest()[:16] == "72a2f55a9f69754a"
    # stars-to-max-hops.txt in the agent's testdata, as a node would report it.
    route = [{"ip": "198.18.1.1", "rtt": "PT0.000287S"}, {"ip": "192.0.2.1", "rtt": "PT0.002114S"}] + [{}] * 6
    flow = to_result(run_of({"succeeded": True, "paths": [route]}, "trace", {}), placement("trace"))["trace"]
    assert flow["flows"][0]["fingerprint"] == "d1dcd94214b1d4cf"
    several = [{"probes": [{"address": "203.0.113.37"}, {"address": "203.0.113.33"}, {"address": None}]}]
    assert fingerprint(several) == hashlib.sha256(b"203.0.113.33|203.0.113.37\n").hexdigest()[:16]


# --- runs that did not measure ---------------------------------------------------------------


def test_a_failed_run_keeps_pschedulers_reason() -> None:
    record = load("run-failed.json")
    task = load("archive-throughput.json")["task"]
    task["href"] = record["task-href"]
    result = to_result(run_from_record(record, task), placement("throughput", slot_id=SLOT))
    assert result["status"] == "failed"
    assert result["error"] == f"pScheduler run failed: {record['result-merged']['error']}"
    assert "throughput" not in result and result["slot_id"] == SLOT
    assert_ingestible(result)


@pytest.mark.parametrize(("slot", "status"), [(SLOT, "missed"), (None, "failed")])
def test_a_nonstarter_is_missed_when_it_had_a_slot(slot: str | None, status: str) -> None:
    record = load("run-nonstart.json")
    result = to_result(run_from_record(record), placement("throughput", slot_id=slot))
    assert result["status"] == status
    assert result["error"] == f"pScheduler run nonstart: {record['errors'].strip()}"
    assert_ingestible(result)


@pytest.mark.parametrize("state", ["overdue", "preempted", "canceled", "missed"])
def test_other_final_states_fail_with_the_state_shown(state: str) -> None:
    record = {**load("run-nonstart.json"), "state": state, "state-display": state.title(), "errors": None}
    result = to_result(run_from_record(record), placement("ping"))
    assert (result["status"], result["error"]) == ("failed", f"pScheduler run {state}: {state.title()}")


def test_a_finished_run_that_did_not_succeed_fails_with_its_error() -> None:
    body = load("archive-rtt.json")
    body["result"] = {"succeeded": False, "error": "ping: unknown host nowhere.invalid"}
    result = to_result(run_from_archive(body), placement("ping"))
    assert (result["status"], result["error"]) == ("failed", "ping: unknown host nowhere.invalid")
    body["result"] = {"schema": 1, "succeeded": False}  # what the ping tool merges a failure to
    result = to_result(run_from_archive(body), placement("ping"))
    assert result["status"] == "failed" and result["error"]
    assert_ingestible(result)


def test_a_run_still_under_way_is_not_mapped_yet() -> None:
    record = {**load("run-nonstart.json"), "state": "running", "state-display": "Running"}
    with pytest.raises(MappingError, match=r"^run/state: the run is still running"):
        to_result(run_from_record(record), placement("ping"))
    body = load("archive-rtt.json")
    body["run"]["state"] = "cleanup"  # the archiver read it before the state moved on
    assert to_result(run_from_archive(body), placement("ping"))["status"] == "ok"


def test_long_reasons_are_cut_to_what_the_contract_keeps() -> None:
    record = {**load("run-nonstart.json"), "errors": "x" * 5000}
    result = to_result(run_from_record(record), placement("ping"))
    assert len(result["error"]) == 2000 and result["error"].endswith("...")


# --- the result's identity -------------------------------------------------------------------


def test_result_id_is_the_runs_task_and_run_uuids_whatever_host_names_them() -> None:
    href = load("archive-rtt.json")["run"]["href"]
    task, run = href.split("/tasks/")[1].split("/runs/")
    assert result_id(href) == uuid.uuid5(uuid.NAMESPACE_URL, f"pscheduler:tasks/{task}/runs/{run}")
    same = [
        href.replace("https://ps-lab", "HTTPS://PS-LAB").replace(".net/", ".net:443/"),
        href + "/",
        href.replace(task, task.upper()).replace(run, run.upper()),
        # pushed hrefs carry the node's own name (or uri-host), polled ones the host Fathom asked
        href.replace(".net/", ".net:8443/"),
        "https://127.0.0.1:8443/pscheduler/tasks/" + href.split("/tasks/")[1],
    ]
    assert {result_id(other) for other in same} == {result_id(href)}
    with pytest.raises(MappingError, match="not a pScheduler run"):
        result_id(load("archive-rtt.json")["run"]["task-href"])


# --- bad input -------------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return change


OTHER_TASK = "https://ps-lab.example.net/pscheduler/tasks/00000000-0000-4000-8000-000000000000"
BAD_PORT = OTHER_TASK.replace(".net/", ".net:99999/") + "/runs/00000000-0000-4000-8000-000000000001"
MALFORMED = [
    # (fixture, change, Fathom kind, the error's start)
    ("archive-rtt.json", _drop("run"), "ping", "run: missing"),
    ("archive-rtt.json", _set("run", []), "ping", "run: not an object (an array)"),
    ("archive-rtt.json", _set("run/href", "https://ps-lab.example.net/pscheduler/tasks"), "ping", "run/href: "),
    ("archive-rtt.json", _set("run/href", "ftp://x/tasks/a/runs/b"), "ping", "run/href: "),
    ("archive-rtt.json", _set("run/href", 17), "ping", "run/href: not a string (a number)"),
    (
        "archive-rtt.json",
        _set("run/href", "https://[::1/pscheduler"),
        "ping",
        "run/href: 'https://[::1/pscheduler' is not a URL",
    ),
    ("archive-rtt.json", _set("run/href", BAD_PORT), "ping", "run/href: 'https://ps-lab.example.net:99999/"),
    ("archive-rtt.json", _set("run/task-href", OTHER_TASK), "ping", "run/task-href: task 00000000"),
    ("archive-rtt.json", _set("id", "6a3b8f0c-0000-4000-8000-2d41aaaaaaaa"), "ping", "id: 6a3b8f0c"),
    ("archive-rtt.json", _set("id", "not-a-uuid"), "ping", "id: 'not-a-uuid' is not a UUID"),
    (
        "archive-rtt.json",
        _set("run/start-time", "2026-11-27T02:30:41"),
        "ping",
        "run/start-time: '2026-11-27T02:30:41' has no UTC offset",
    ),
    ("archive-rtt.json", _set("run/start-time", "yesterday"), "ping", "run/start-time: 'yesterday' is not an ISO 8601"),
    (
        "archive-rtt.json",
        _set("run/end-time", "2020-01-01T00:00:00Z"),
        "ping",
        "run/end-time: 2020-01-01T00:00:00+00:00 is before",
    ),
    ("archive-rtt.json", _drop("run/state"), "ping", "run/state: missing"),
    ("archive-rtt.json", _set("run/state", "exploded"), "ping", "run/state: 'exploded' is not a pScheduler run state"),
    ("archive-rtt.json", _drop("test"), "ping", "test: missing"),
    (
        "archive-rtt.json",
        _set("test/type", "latencybg"),
        "ping",
        "test/type: a pScheduler latencybg run cannot be a Fathom ping result",
    ),
    (
        "archive-rtt.json",
        _set("test/type", "idle"),
        "ping",
        "test/type: pScheduler's idle test has no Fathom test kind",
    ),
    ("archive-rtt.json", _set("test/type", "mtu"), "ping", "test/type: pScheduler's mtu test has no Fathom test kind"),
    (
        "archive-rtt.json",
        _set("test/type", "dns"),
        "ping",
        "test/type: pScheduler's 'dns' test has no Fathom test kind; Fathom maps rtt, throughput, trace, latencybg"
        " and latency",
    ),
    ("archive-rtt.json", _set("test/spec", "count=5"), "ping", "test/spec: not an object (a string)"),
    ("archive-rtt.json", _set("tool", 3), "ping", "tool: not a string (a number)"),
    ("archive-rtt.json", None, "throughput", "test/type: a pScheduler rtt run cannot be a Fathom throughput result"),
    ("archive-rtt.json", None, "flowsweep", "placement/test_type: 'flowsweep' is not a Fathom kind"),
    ("archive-rtt.json", _set("result", "ok"), "ping", "result: not an object (a string)"),
    ("archive-rtt.json", _drop("result"), "ping", "result: missing from a finished run"),
    ("archive-rtt.json", _drop("result/succeeded"), "ping", "result/succeeded: missing"),
    ("archive-rtt.json", _set("result/succeeded", "yes"), "ping", "result/succeeded: not a boolean (a string)"),
    ("archive-rtt.json", _set("result/roundtrips", {}), "ping", "result/roundtrips: not an array (an object)"),
    ("archive-rtt.json", _set("result/roundtrips", [{"seq": 1}] * 20001), "ping", "result/roundtrips: 20001 entries"),
    (
        "archive-rtt.json",
        _set("result/roundtrips/2/rtt", "3 ms"),
        "ping",
        "result/roundtrips/2/rtt: '3 ms' is not an ISO 8601",
    ),
    ("archive-rtt.json", _set("result/roundtrips/2/rtt", "PT700S"), "ping", "result/roundtrips/2/rtt: 700000.0 ms"),
    (
        "archive-rtt.json",
        _set("result/roundtrips/2/seq", 9),
        "ping",
        "result/roundtrips/2/seq: 9 is beyond the 5 packets sent",
    ),
    (
        "archive-rtt.json",
        _set("result/roundtrips/2/seq", "3"),
        "ping",
        "result/roundtrips/2/seq: not a number (a string)",
    ),
    (
        "archive-rtt.json",
        _set("result/roundtrips/2/ttl", 300),
        "ping",
        "result/roundtrips/2/ttl: 300 is outside 0..255",
    ),
    ("archive-rtt.json", _drop("result/roundtrips/2/seq"), "ping", "result/roundtrips/2/seq: missing"),
    ("archive-rtt.json", _set("result/received", 4), "ping", "result/received: 4, but 5 of the round trips"),
    ("archive-rtt.json", _set("result/sent", 10**400), "ping", "result/sent: 1000"),
    ("archive-rtt.json", _set("result/sent", float("nan")), "ping", "result/sent: not a finite number"),
    ("archive-rtt.json", _set("test/spec/count", 0), "ping", "test/spec/count: 0 is outside 1..10000"),
    ("archive-rtt.json", _set("test/spec/interval", "PT0.001S"), "ping", "test/spec/interval: 0.001 s between packets"),
    (
        "archive-throughput.json",
        _set("result/intervals/3/streams/0/throughput-bits", "fast"),
        "throughput",
        "result/intervals/3/streams/0/throughput-bits: not a number (a string)",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals/3/streams/0/throughput-bytes", -1),
        "throughput",
        "result/intervals/3/streams/0/throughput-bytes: -1 is negative",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals/3/streams/0/end", 0.5),
        "throughput",
        "result/intervals/3/streams/0/end: 0.5 s is before the interval's start",
    ),
    (
        "archive-throughput.json",
        _drop("result/intervals/3/streams/0/stream-id"),
        "throughput",
        "result/intervals/3/streams/0/stream-id: missing",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals/0/streams/1/retransmits", -3),
        "throughput",
        "result/intervals/0/streams/1/retransmits: -3 is negative",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals/0/streams/1/omitted", "no"),
        "throughput",
        "result/intervals/0/streams/1/omitted: not a boolean",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals/2/streams", None),
        "throughput",
        "result/intervals/2/streams: missing",
    ),
    (
        "archive-throughput.json",
        _set("result/intervals", [{"streams": []}] * 46209),
        "throughput",
        "result/intervals: 46209 entries",
    ),
    ("archive-throughput.json", _drop("result/summary"), "throughput", "result/summary: missing"),
    (
        "archive-throughput.json",
        _set("result/summary/summary", []),
        "throughput",
        "result/summary/summary: not an object",
    ),
    (
        "archive-throughput.json",
        _set("result/summary/streams/1/rtt", {"us": 4}),
        "throughput",
        "result/summary/streams/1/rtt: not a number (an object)",
    ),
    (
        "archive-throughput.json",
        _set("test/spec/duration", "PT400S"),
        "throughput",
        "test/spec/duration: 400 is outside 1..300",
    ),
    (
        "archive-throughput.json",
        _set("test/spec/duration", "P1M"),
        "throughput",
        "test/spec/duration: 'P1M' is not an ISO 8601",
    ),
    (
        "archive-throughput.json",
        _set("test/spec/parallel", 200),
        "throughput",
        "test/spec/parallel: 200 is outside 1..128",
    ),
    (
        "archive-throughput.json",
        _set("test/spec/congestion", "BBR!"),
        "throughput",
        "test/spec/congestion: 'BBR!' is not a congestion",
    ),
    ("archive-throughput.json", _set("test/spec/reverse", "yes"), "throughput", "test/spec/reverse: not a boolean"),
    ("archive-throughput.json", _set("test/spec/udp", "yes"), "throughput", "test/spec/udp: not a boolean"),
    ("archive-trace.json", _set("result/paths", []), "trace", "result/paths: no path"),
    ("archive-trace.json", _set("result/paths/0", {}), "trace", "result/paths/0: not an array"),
    (
        "archive-trace.json",
        _set("result/paths/0", [{}] * 65 + [{"ip": "192.0.2.1"}]),
        "trace",
        "result/paths/0: 66 hops",
    ),
    (
        "archive-trace.json",
        _set("result/paths/0/2/ip", "router.example"),
        "trace",
        "result/paths/0/2/ip: 'router.example' is not an IP",
    ),
    (
        "archive-trace.json",
        _set("result/paths/0/2/as/number", "AS10886"),
        "trace",
        "result/paths/0/2/as/number: not a number",
    ),
    ("archive-trace.json", _set("result/paths/0/2/as", "AS10886"), "trace", "result/paths/0/2/as/number: not a number"),
    (
        "archive-trace.json",
        _set("result/paths/0/2/mtu", 70000),
        "trace",
        "result/paths/0/2/mtu: 70000 is outside 0..65535",
    ),
    (
        "archive-trace.json",
        _set("result/paths/0/2/hostname", "h" * 256),
        "trace",
        "result/paths/0/2/hostname: 256 characters",
    ),
    (
        "archive-trace.json",
        _set("result/paths/0/2/rtt", 0.0015),
        "trace",
        "result/paths/0/2/rtt: a duration must be a string",
    ),
    ("archive-trace.json", _set("result/paths/0/2", "192.0.2.1"), "trace", "result/paths/0/2: not an object"),
    (
        "archive-trace.json",
        _set("test/spec/probe-type", "sctp"),
        "trace",
        "test/spec/probe-type: 'sctp' is not icmp, udp or tcp",
    ),
]


@pytest.mark.parametrize(("fixture", "change", "kind", "message"), MALFORMED)
def test_malformed_payloads_say_which_field(
    fixture: str, change: Callable[[dict[str, Any]], None] | None, kind: str, message: str
) -> None:
    body = load(fixture)
    if change is not None:
        change(body)
    target = "internet2.edu" if kind == "trace" else "127.0.0.1"
    with pytest.raises(MappingError) as refused:
        to_result(run_from_archive(body), placement(kind, target))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"peer_id": "agent-7"}, "placement/peer_id: 'agent-7' is not a UUID"),
        ({"slot_id": 7}, "placement/slot_id: not a string"),
        ({"test_id": ""}, "placement: test_id and target must not be empty"),
        ({"target": "t" * 256}, "placement/target: 256 characters"),
        ({"target": "host\x00name"}, "placement/target: contains a NUL character"),
        ({"options": []}, "placement/options: not an object"),
        ({"options": {"count": "many"}}, "placement/options/count: not a number"),
    ],
)
def test_a_bad_placement_is_refused(changes: dict[str, Any], message: str) -> None:
    body = load("archive-rtt.json")
    del body["test"]["spec"]["count"]
    with pytest.raises(MappingError) as refused:
        to_result(run_from_archive(body), placement("ping", **changes))
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("body", [None, [], "run", 3, {"run": {"href": None}}])
def test_bodies_that_are_not_runs(body: Any) -> None:
    with pytest.raises(MappingError):
        run_from_archive(body)
    with pytest.raises(MappingError):
        run_from_record(body)


# --- what pScheduler sends that Fathom does not map ------------------------------------------

MTU_REFUSAL = "test/type: pScheduler's mtu test has no Fathom test kind; the path MTU comes from trace hops"
OLD_ENVELOPE_REFUSAL = (
    "run: missing: this is pScheduler's old archiver envelope {data, result: {id, schedule, test, ...}, attempts},"
    " which names no task or run to place the result by (the http archiver sends both)"
)


def mtu_run(way: str) -> PsRun:
    """pScheduler's own mtu example (its spec and merged result) as a finished run, pushed or polled."""
    example = load("mtu-example.json")
    body = load("archive-trace.json")
    body["test"] = body["task"]["test"] = example["spec"]
    body["result"] = body["run"]["result-merged"] = example["result"]
    return run_from_archive(body) if way == "push" else run_from_record(body["run"], body["task"])


@pytest.mark.parametrize("way", ["push", "poll"])
@pytest.mark.parametrize("kind", ["trace", "ping", "throughput"])
def test_an_mtu_run_is_refused_saying_fathom_has_no_mtu_kind(way: str, kind: str) -> None:
    run = mtu_run(way)
    assert run.test_type == "mtu" and run.result == {"schema": 1, "succeeded": True, "mtu": 1500}
    with pytest.raises(MappingError) as refused:
        to_result(run, placement(kind, "foo.bar.net"))
    assert str(refused.value) == MTU_REFUSAL


def test_the_old_archiver_envelope_is_refused_saying_why() -> None:
    """pScheduler's sample archiver input: no task or run to place it by, and a simplestream test."""
    body = load("archive-old-envelope.json")
    with pytest.raises(MappingError) as refused:
        run_from_archive(body)
    assert str(refused.value) == (
        OLD_ENVELOPE_REFUSAL + ". Besides, pScheduler's simplestream test has no Fathom test kind;"
        " it is one of pScheduler's self-tests, which measure no network path"
    )
    with pytest.raises(MappingError, match=r"^href: missing$"):
        run_from_record(body)


@pytest.mark.parametrize("test", [{"type": "rtt"}, {"type": 3}, {}, "rtt", None])
def test_an_old_envelope_of_any_test_is_refused_for_its_envelope(test: Any) -> None:
    body = load("archive-old-envelope.json")
    body["result"]["test"] = test
    with pytest.raises(MappingError) as refused:
        run_from_archive(body)
    assert str(refused.value) == OLD_ENVELOPE_REFUSAL


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:3]):  # the first few of each list stand for all
            yield from _paths(value, (*prefix, index))


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [("archive-rtt.json", "ping"), ("archive-trace.json", "trace"), ("archive-throughput.json", "throughput")],
)
def test_no_damage_raises_anything_but_a_mapping_error(fixture: str, kind: str) -> None:
    """Every field of the body dropped or swapped for each JSON type: the run maps, or it is
    refused with a MappingError, never a KeyError or TypeError."""
    pristine = load(fixture)
    # The copies the mapping never reads (and the bulk of iperf3's diags) only slow this down.
    pristine["run"].pop("result-full")
    pristine["run"]["result-merged"] = None
    pristine["result"].pop("diags", None)
    if "intervals" in pristine["result"]:
        pristine["result"]["intervals"] = pristine["result"]["intervals"][:2]
    target = "internet2.edu" if kind == "trace" else "127.0.0.1"
    tried = 0
    for path in _paths({key: value for key, value in pristine.items() if key != "task"}):
        if not path:
            continue
        replacements: tuple[Any, ...] = (None, "x", -1, 1.5, True, [], {}, [{}], 10**30, "DELETE")
        for replacement in replacements:
            body = copy.deepcopy(pristine)
            node: Any = body
            for part in path[:-1]:
                node = node[part]
            if replacement == "DELETE":
                del node[path[-1]]
            else:
                node[path[-1]] = replacement
            with contextlib.suppress(MappingError):
                to_result(run_from_archive(body), placement(kind, target))
            tried += 1
    assert tried > 500


# --- the fake pScheduler's tools are how the fixtures were made ------------------------------


def test_iperf3_to_result_rebuilds_the_recorded_result() -> None:
    """result-throughput.json's diags hold iperf3's own output; converting it again gives the
    recorded intervals and summary."""
    recorded = load("result-throughput.json")
    for name in ("result-throughput.json", "result-throughput-udp.json"):
        recorded = load(name)
        client_output = recorded["diags"][recorded["diags"].index("{") :]
        iperf3_json, _ = json.JSONDecoder().raw_decode(client_output)
        rebuilt = tools().iperf3_to_result(iperf3_json)
        assert rebuilt == {key: value for key, value in recorded.items() if key != "diags"}
    refused = tools().iperf3_to_result({"error": "unable to connect to server: Connection refused"}, exit_status=1)
    assert refused == {
        "succeeded": False,
        "error": "iperf3 returned an error: unable to connect to server: Connection refused",
    }


def test_ping_to_result_rebuilds_the_recorded_result() -> None:
    body = load("archive-rtt.json")
    diags = body["run"]["result-full"][0]["diags"]
    output = diags[diags.index("Standard output:\n") + len("Standard output:\n") : diags.index("\n\nStandard error:")]
    assert tools().ping_to_result(output, body["test"]["spec"]) == body["result"] == load("result-rtt.json")
    assert tools().ping_to_result("", {}) == {"schema": 1, "succeeded": False}


@pytest.mark.parametrize("seconds", [0, 0.000054, 0.0000005, 1, 90.5, 3600, 86401.25, 700000])
def test_the_fakes_durations_are_pschedulers(seconds: float) -> None:
    assert tools().iso_duration(seconds) == format_duration(seconds)
