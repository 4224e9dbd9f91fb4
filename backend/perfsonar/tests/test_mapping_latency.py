"""pScheduler latencybg and latency runs (powstream, owping) as Fathom latency results, against
pScheduler's own published results (fixtures/README.md): one-way, from the histogram and, when
the spec asked for them, the raw packets; every malformed entry refused alone, saying why."""

from __future__ import annotations

import contextlib
import copy
import math
from datetime import datetime, timedelta
from typing import Any

import pytest

from perfsonar.mapping import MappingError, run_from_archive, run_from_record, to_result
from perfsonar.mapping.latency import NTP_UNITS_PER_S
from perfsonar.tests.test_mapping import FIXTURES, _drop, _paths, _set, assert_ingestible, load, placement

TARGET = "198.18.9.2"


def latencybg(result: str | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The archived latencybg entry, with another of the recorded results and spec keys (None
    drops a key)."""
    body: dict[str, Any] = load("archive-latencybg.json")
    if result is not None:
        body["result"] = body["run"]["result-merged"] = load(result)
    body["test"]["spec"].update(spec or {})
    body["test"]["spec"] = {key: value for key, value in body["test"]["spec"].items() if value is not None}
    body["task"]["test"] = body["test"]
    return body


def mapped(body: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return to_result(run_from_archive(body), placement("latency", TARGET, **changes))


def nearest_rank(histogram: dict[str, int], percent: int, width_ms: float = 1.0) -> float:
    """The smallest delay at least percent% of the packets do not exceed, counted packet by packet."""
    delays = sorted(float(key) * width_ms for key, count in histogram.items() for _ in range(count))
    return delays[math.ceil(percent * len(delays) / 100) - 1]


# --- what a latencybg entry becomes ---------------------------------------------------------


def test_a_latencybg_entry_is_one_way_from_its_histogram() -> None:
    body = latencybg()
    result = mapped(body)
    assert (result["status"], result["error"], result["test_type"]) == ("ok", "", "latency")
    latency = result["latency"]
    histogram = body["result"]["histogram-latency"]
    assert (latency["sent"], latency["answered"], latency["duplicates"], latency["malformed"]) == (600, 600, 0, 0)
    assert latency["forward"]["lost"] == 0 and latency["forward"]["reordered_fraction"] == 0.0
    # pScheduler's own rendering of this result says: minimum 2.51, median 2.60, maximum 88.21 ms.
    assert latency["forward"]["delay"] == {
        "min_ms": 2.51,
        "p50_ms": 2.6,
        "p90_ms": nearest_rank(histogram, 90),
        "p99_ms": nearest_rank(histogram, 99),
        "max_ms": 88.21,
    }
    assert latency["forward"]["delay"]["p99_ms"] == 2.8  # the four outliers are 0.7 % of 600
    assert latency["forward"]["hops"] == 255 - 252
    assert latency["forward"]["ipdv_ms"] is None  # no raw packets: only the histogram
    assert latency["backward"] is None and latency["round_trip"] is None
    # max-clock-error 0.27 ms is the sum of both hosts' estimates: each gets half.
    assert latency["sender_clock"] == latency["reflector_clock"] == {"synchronized": True, "error_ms": 0.135}
    # The spec's 600 packets every 0.1 s; 14 bytes: OWAMP's unpadded test packet; 861: owampd.
    assert (latency["packet_interval_s"], latency["size_bytes"], latency["dscp"], latency["port"]) == (0.1, 14, 0, 861)
    assert_ingestible(result)


def test_an_entry_is_stamped_when_reported_so_it_began_its_packets_earlier() -> None:
    body = latencybg()
    result = mapped(body)
    reported = datetime.fromisoformat(body["run"]["end-time"])
    assert body["run"]["start-time"] == body["run"]["end-time"]  # a background-multi result
    assert datetime.fromisoformat(result["ended_at"]) == reported
    assert datetime.fromisoformat(result["started_at"]) == reported - timedelta(seconds=60)


def test_a_latency_run_keeps_its_own_start() -> None:
    body = latencybg("result-latency-esmond.json", {"packet-count": None, "packet-interval": 0.001})
    body["test"]["type"] = "latency"
    body["tool"]["name"] = "owping"
    body["run"]["start-time"] = "2026-11-27T03:00:52+00:00"
    result = mapped(body)
    assert result["started_at"] == "2026-11-27T03:00:52+00:00"
    latency = result["latency"]
    # esmond's own test result: all 600 packets between 39.39 and 39.57 ms, TTL 247.
    assert latency["forward"]["delay"]["min_ms"] == 39.39 and latency["forward"]["delay"]["max_ms"] == 39.57
    assert latency["forward"]["delay"]["p50_ms"] == 39.52 and latency["forward"]["hops"] == 8
    assert latency["sender_clock"] == {"synchronized": True, "error_ms": 0.0}
    assert latency["packet_interval_s"] == 0.001
    assert_ingestible(result)


def test_a_polled_entry_is_the_pushed_entry() -> None:
    body = latencybg()
    assert to_result(run_from_record(body["run"], body["task"]), placement("latency", TARGET)) == mapped(body)


def test_the_bucket_width_scales_every_delay() -> None:
    """pScheduler keys buckets by delay / bucket-width (issue #1542: its display once forgot)."""
    histogram = load("result-latencybg.json")["histogram-latency"]
    delay = mapped(latencybg(spec={"bucket-width": 0.0001}))["latency"]["forward"]["delay"]
    assert delay["min_ms"] == pytest.approx(0.251) and delay["max_ms"] == pytest.approx(8.821)
    assert delay["p90_ms"] == pytest.approx(nearest_rank(histogram, 90, 0.1))


@pytest.mark.parametrize(
    ("histogram", "delays"),
    [
        # The same delay written two ways is one bucket; a float written bare, or signed, is read.
        ({"2.6": 3, "2.60": 1, "+3": 1, ".5": 1}, (0.5, 2.6, 3.0, 3.0, 3.0)),
        # Negative: the receiver's clock is behind the sender's by more than the delay.
        ({"-0.75": 2, "1.25": 2}, (-0.75, -0.75, 1.25, 1.25, 1.25)),
        ({"-0.00": 3, "1": 1}, (0.0, 0.0, 1.0, 1.0, 1.0)),
        ({"12.31": 4}, (12.31, 12.31, 12.31, 12.31, 12.31)),
    ],
)
def test_bucket_keys_as_pscheduler_writes_them(histogram: dict[str, int], delays: tuple[float, ...]) -> None:
    body = latencybg()
    received = sum(histogram.values())
    body["result"].update(
        {
            "packets-sent": received,
            "packets-received": received,
            "packets-lost": 0,
            "histogram-latency": histogram,
            "histogram-ttl": {"250": received},
        }
    )
    delay = mapped(body)["latency"]["forward"]["delay"]
    assert tuple(delay.values()) == delays
    assert "-0.0" not in [str(value) for value in delay.values()]


def test_loss_reordering_clocks_and_delay_variation_come_from_raw_packets() -> None:
    body = latencybg("result-latencybg-raw.json", {"packet-count": 20, "output-raw": True})
    result = mapped(body)
    latency = result["latency"]
    assert (latency["sent"], latency["answered"], latency["forward"]["lost"]) == (20, 18, 2)
    assert latency["forward"]["reordered_fraction"] == pytest.approx(1 / 18)  # packet 13 came before 12
    assert latency["forward"]["hops"] == 4  # 17 packets at TTL 251, one at 250
    # Each host's own estimate (seconds in owstats' records): 122 and 244 µs.
    assert latency["sender_clock"] == {"synchronized": True, "error_ms": 0.122}
    assert latency["reflector_clock"] == {"synchronized": True, "error_ms": 0.244}
    # RFC 3393 over consecutive packets that both arrived, from the owstats records themselves.
    delays = {}
    for line in (FIXTURES / "owstats-raw.txt").read_text().splitlines():
        seq, sent, _, _, received, *_ = line.split()
        if int(received):
            delays[int(seq)] = (int(received) - int(sent)) * 1000 / NTP_UNITS_PER_S
    changes = [abs(delays[seq + 1] - delay) for seq, delay in delays.items() if seq + 1 in delays]
    assert latency["forward"]["ipdv_ms"] == pytest.approx(sum(changes) / len(changes), abs=1e-6)
    assert latency["forward"]["delay"]["min_ms"] == 12.28 and latency["forward"]["delay"]["max_ms"] == 13.05
    assert result["started_at"] == "2026-11-27T03:01:00+00:00"  # 20 packets at 0.1 s before the report
    assert_ingestible(result)


def test_a_host_whose_packets_say_unsynchronized_is_so() -> None:
    body = latencybg("result-latencybg-raw.json", {"packet-count": 20})
    for packet in body["result"]["raw-packets"][:3]:
        packet["src-clock-sync"] = False
    body["result"]["raw-packets"][5]["dst-clock-sync"] = False
    body["result"]["raw-packets"][6]["dst-clock-sync"] = False  # lost: no word on the receiver's clock
    latency = mapped(body)["latency"]
    assert latency["sender_clock"]["synchronized"] is False
    assert latency["reflector_clock"]["synchronized"] is False


def test_without_a_clock_error_the_clocks_are_not_known_synchronized() -> None:
    body = latencybg()
    del body["result"]["max-clock-error"]
    latency = mapped(body)["latency"]
    assert latency["sender_clock"] == latency["reflector_clock"] == {"synchronized": False, "error_ms": 0.0}


def test_an_entry_where_nothing_arrived_has_no_delays_and_no_receiver_clock() -> None:
    body = latencybg()
    body["result"].update(
        {
            "packets-received": 0,
            "packets-lost": 600,
            "packets-reordered": 0,
            "histogram-latency": {},
            "histogram-ttl": {},
        }
    )
    del body["result"]["max-clock-error"]
    result = mapped(body)
    forward = result["latency"]["forward"]
    assert forward["lost"] == 600 and set(forward["delay"].values()) == {None}
    assert (forward["reordered_fraction"], forward["hops"], forward["ipdv_ms"]) == (None, None, None)
    assert result["latency"]["reflector_clock"] is None
    assert_ingestible(result)


def test_the_spec_says_interval_padding_dscp_and_port_else_the_mesh_test() -> None:
    body = latencybg(spec={"packet-interval": 0.05, "packet-padding": 27, "ip-tos": 46, "ctrl-port": 8610})
    latency = mapped(body)["latency"]
    assert (latency["packet_interval_s"], latency["size_bytes"], latency["dscp"], latency["port"]) == (
        0.05,
        41,  # 14-byte header + 27 of padding: TWAMP-light's size
        46,  # owping and powstream take ip-tos as a DSCP (-D)
        8610,
    )
    bare = latencybg(spec={"packet-interval": None, "packet-padding": None, "packet-count": None})
    given = {"packet_interval_s": 0.2, "size_bytes": 100, "dscp": 10}
    latency = mapped(bare, options=given)["latency"]
    assert (latency["packet_interval_s"], latency["size_bytes"], latency["dscp"]) == (0.2, 100, 10)
    body = latencybg()
    body["tool"]["name"] = "twping"
    assert mapped(body)["latency"]["port"] == 862  # twampd's control port


def test_a_failed_entry_is_a_failed_run_with_powstreams_reason() -> None:
    body = latencybg()
    body["result"] = {"schema": 1, "succeeded": False, "error": "Powstream call to owstats failed: bad file"}
    result = mapped(body)
    assert (result["status"], result["error"]) == ("failed", "Powstream call to owstats failed: bad file")
    assert "latency" not in result and result["started_at"] == result["ended_at"]
    assert_ingestible(result)


# --- what is refused -------------------------------------------------------------------------


def test_the_long_run_of_a_latencybg_task_is_no_result() -> None:
    body = latencybg()
    body["run"]["result-merged"] = None
    body["run"]["start-time"] = "2026-11-27T03:00:00+00:00"
    with pytest.raises(MappingError, match="latencybg task's long run carries no result of its own"):
        to_result(run_from_record(body["run"], body["task"]), placement("latency", TARGET))


def test_halfping_and_a_reversed_run_are_refused_saying_why() -> None:
    body = latencybg()
    body["tool"]["name"] = "halfping"
    with pytest.raises(MappingError, match=r"^tool: halfping halves a ping's round trip"):
        mapped(body)
    with pytest.raises(MappingError, match=r"^test/spec/reverse: the run reports dest to source"):
        mapped(latencybg(spec={"reverse": True}))


def test_a_run_reported_back_is_the_way_from_the_agent_to_the_node() -> None:
    """A node's twping towards an agent with `reverse` measures the agent's path towards the
    node: it is taken where the node measures from the far end, and only there."""
    body = latencybg(spec={"reverse": True, "schema": 2})
    result = mapped(body, measured_by_peer=True)
    assert result["latency"]["forward"]["lost"] == result["latency"]["sent"] - result["latency"]["answered"]
    assert result["latency"]["backward"] is None
    assert_ingestible(result)
    with pytest.raises(MappingError, match=r"^test/spec/reverse: the node measures this path from its far end"):
        mapped(latencybg(), measured_by_peer=True)


def test_a_latencybg_entry_is_no_ping_and_a_ping_no_latency() -> None:
    with pytest.raises(MappingError, match="a pScheduler latencybg run cannot be a Fathom ping result"):
        to_result(run_from_archive(latencybg()), placement("ping", TARGET))
    with pytest.raises(MappingError, match="a pScheduler rtt run cannot be a Fathom latency result"):
        to_result(run_from_archive(load("archive-rtt.json")), placement("latency", TARGET))


RAW = "result-latencybg-raw.json"
MALFORMED = [
    # (result fixture or None for the archived one, change, the error's start)
    (None, _set("result/histogram-latency/abc", 1), "result/histogram-latency: 'abc' is not a delay bucket"),
    (None, _set("result/histogram-latency/1e3", 1), "result/histogram-latency: '1e3' is not a delay bucket"),
    (None, _set("result/histogram-latency/nan", 1), "result/histogram-latency: 'nan' is not a delay bucket"),
    (None, _set("result/histogram-latency/2.51", -4), "result/histogram-latency/2.51: -4 is outside 0..1000000"),
    (None, _set("result/histogram-latency/2.51", "4"), "result/histogram-latency/2.51: not a number (a string)"),
    (None, _set("result/histogram-latency/2.51", 4.5), "result/histogram-latency/2.51: 4.5 is not a whole number"),
    (None, _set("result/histogram-latency/2.51", 5), "result/histogram-latency: 601 packets, but packets-received"),
    (None, _set("result/histogram-latency", [4, 3]), "result/histogram-latency: not an object (an array)"),
    (None, _set("result/histogram-latency/700000.00", 0), "result/histogram-latency/700000.00: a delay of 700000"),
    (None, _drop("result/histogram-latency"), "result/histogram-latency: missing, but 600 packets arrived"),
    (None, _set("result/histogram-ttl/252", 500), "result/histogram-ttl: 500 packets, but packets-received says 600"),
    (None, _set("result/histogram-ttl/ttl", 1), "result/histogram-ttl: 'ttl' is not a TTL"),
    (None, _set("result/histogram-ttl", {"300": 600}), "result/histogram-ttl/300: 300 is not a TTL"),
    (None, _drop("result/packets-sent"), "result/packets-sent: missing"),
    (None, _drop("result/packets-received"), "result/packets-received: missing"),
    (None, _set("result/packets-sent", 500), "result/packets-received: 600 packets arrived, more than the 500 sent"),
    (None, _set("result/packets-sent", -1), "result/packets-sent: -1 is outside 0..1000000"),
    (None, _set("result/packets-sent", 10**7), "result/packets-sent: 10000000 is outside 0..1000000"),
    (None, _set("result/packets-lost", 5), "result/packets-lost: 5, but 600 sent less 600 received is 0"),
    (None, _set("result/packets-reordered", 601), "result/packets-reordered: 601 reordered, more than the 600"),
    (None, _set("result/packets-duplicated", "none"), "result/packets-duplicated: not a number (a string)"),
    (None, _set("result/max-clock-error", -1), "result/max-clock-error: -1 is negative"),
    (None, _set("result/max-clock-error", "0.27"), "result/max-clock-error: not a number (a string)"),
    (None, _set("test/spec/bucket-width", 2), "test/spec/bucket-width: 2.0 is outside pScheduler's 0..1 s"),
    (None, _set("test/spec/packet-interval", 0), "test/spec/packet-interval: 0.0 s between packets is outside"),
    (None, _set("test/spec/packet-padding", -1), "test/spec/packet-padding: -1 is outside 0..65493"),
    (None, _set("test/spec/ip-tos", 184), "test/spec/ip-tos: 184 is not a DSCP: owping and powstream"),
    (None, _set("test/spec/ctrl-port", 0), "test/spec/ctrl-port: 0 is outside 1..65535"),
    (RAW, _set("result/raw-packets/3/dst-ts", 0), "result/raw-packets: 17 packets arrived, but packets-received"),
    (RAW, _set("result/raw-packets/3/seq-num", 4), "result/raw-packets: 19 packets, but packets-sent says 20"),
    (RAW, _drop("result/raw-packets/3/src-clock-sync"), "result/raw-packets/3/src-clock-sync: missing"),
    (RAW, _set("result/raw-packets/3/src-clock-err", "n/a"), "result/raw-packets/3/src-clock-err: not a number"),
    (RAW, _set("result/raw-packets/3/src-ts", -5), "result/raw-packets/3/src-ts: -5 is outside"),
    (RAW, _set("result/raw-packets/3/ip-ttl", 256), "result/raw-packets/3/ip-ttl: 256 is outside 0..255"),
    (RAW, _set("result/raw-packets/3/dst-ts", 1), "result/raw-packets/3: a delay of -"),
    (RAW, _set("result/raw-packets", {}), "result/raw-packets: not an array (an object)"),
]


@pytest.mark.parametrize(("fixture", "change", "message"), MALFORMED)
def test_a_malformed_entry_is_refused_saying_which_field(fixture: str | None, change: Any, message: str) -> None:
    body = latencybg(fixture, {"packet-count": 20} if fixture else None)
    change(body)
    with pytest.raises(MappingError) as refused:
        mapped(body)
    assert str(refused.value).startswith(message), str(refused.value)


@pytest.mark.parametrize("fixture", [None, RAW])
def test_no_damage_raises_anything_but_a_mapping_error(fixture: str | None) -> None:
    """Every field of the entry dropped or swapped for each JSON type: it maps, or it is refused
    with a MappingError, never a KeyError, TypeError or ArithmeticError."""
    pristine = latencybg(fixture)
    pristine["run"]["result-merged"] = None
    tried = 0
    for path in _paths({key: value for key, value in pristine.items() if key != "task"}):
        if not path:
            continue
        replacements: tuple[Any, ...] = (None, "x", "-1.5", -1, 1.5, True, [], {}, [{}], 10**30, "DELETE")
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
                mapped(body)
            tried += 1
    assert tried > 300
