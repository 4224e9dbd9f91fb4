"""A pScheduler throughput run (iperf3) as the "throughput" part of a Fathom result.

Figures pScheduler does not keep (iperf3's version, socket buffers, snd_wnd, rttvar, path MTU,
CPU, congestion control in use) are null or empty, never invented. Where the contract has no
null (a TCP run's receiver bytes, which pScheduler drops), the value is 0, as a Fathom agent
reports a figure iperf3 did not print.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from perfsonar.mapping.fields import (
    as_amount,
    as_array,
    as_boolean,
    as_integer,
    as_measure,
    as_object,
    as_seconds,
    as_text,
    at,
    fail,
    reported,
    reported_measure,
    required,
)
from perfsonar.mapping.placement import Placement, as_given, option
from perfsonar.mapping.runs import PsRun

# The contract's bounds (result-batch.v1), checked here so an oversized run is refused with
# a sentence rather than a schema path.
MAX_INTERVAL_ROWS = 46208
MAX_STREAMS = 128

# pScheduler's iperf3 tool defaults (iperf3_defaults.py, run): what ran when the spec is silent.
IPERF3_DEFAULT_DURATION_S = 10
IPERF3_DEFAULT_UDP_BPS = 1_000_000  # iperf3's own rate for UDP without -b

_CONGESTION = re.compile(r"[a-z0-9_]{0,32}")


def _whole_seconds(value: Any, path: str) -> int:
    return int(as_seconds(value, path))  # pScheduler's iperf3 tool truncates likewise


def _options(run: PsRun, placement: Placement, total: dict[str, Any]) -> dict[str, Any]:
    spec, given = run.spec, as_object(placement.options, "placement/options")

    def pick(spec_key: str, fathom_key: str, read: Callable[[Any, str], Any], default: Any) -> tuple[Any, str]:
        return option(spec, spec_key, given, fathom_key, read, default)

    duration, where = pick("duration", "duration_s", _whole_seconds, IPERF3_DEFAULT_DURATION_S)
    options: dict[str, Any] = {"duration_s": as_integer(duration, where, 1, 300)}
    omit, where = pick("omit", "omit_s", _whole_seconds, 0)
    options["omit_s"] = as_integer(omit, where, 0, 60)
    parallel, where = pick("parallel", "parallel", as_given, 1)
    options["parallel"] = as_integer(parallel, where, 1, MAX_STREAMS)
    window, where = pick("window-size", "window_bytes", as_given, 0)
    options["window_bytes"] = as_integer(window, where, 0, 1073741824)
    options["reverse"] = placement.reversed
    # A TCP result has no jitter, loss or packet count: with the spec unknown, that tells.
    inferred_udp = any(key in total for key in ("jitter", "lost", "sent"))
    udp, where = pick("udp", "udp", as_given, inferred_udp)
    options["udp"] = as_boolean(udp, where)
    bitrate, where = pick("bandwidth", "bitrate_bps", as_given, IPERF3_DEFAULT_UDP_BPS if options["udp"] else 0)
    options["bitrate_bps"] = as_integer(bitrate, where, 0, 400_000_000_000)
    congestion, where = pick("congestion", "congestion", as_given, "")
    if _CONGESTION.fullmatch(as_text(congestion, where, 32)) is None:
        fail(where, f"{congestion!r} is not a congestion control name such as cubic or bbr")
    options["congestion"] = congestion
    mss, where = pick("mss", "mss", as_given, 0)
    options["mss"] = as_integer(mss, where, 0, 65495)
    fq_rate, where = pick("fq-rate", "fq_rate_bps", as_given, 0)
    options["fq_rate_bps"] = as_integer(fq_rate, where, 0, 400_000_000_000)
    return options


def _interval_row(stream: dict[str, Any], path: str, sender: bool) -> dict[str, Any]:
    start_s, end_s = (
        as_measure(required(stream, "start", path), at(path, "start")),
        as_measure(required(stream, "end", path), at(path, "end")),
    )
    if end_s > 86400:
        fail(at(path, "end"), f"{end_s} s is past a day")
    if end_s < start_s:
        fail(at(path, "end"), f"{end_s} s is before the interval's start, {start_s} s")
    return {
        "stream": as_integer(required(stream, "stream-id", path), at(path, "stream-id"), 0, 2**31 - 1),
        "start_s": start_s,
        "end_s": end_s,
        "bytes": as_amount(required(stream, "throughput-bytes", path), at(path, "throughput-bytes")),
        "bits_per_s": as_measure(required(stream, "throughput-bits", path), at(path, "throughput-bits")),
        "omitted": stream.get("omitted") is not None and as_boolean(stream["omitted"], at(path, "omitted")),
        "sender": sender,
        "retransmits": reported(stream, "retransmits", path),
        "snd_cwnd": reported(stream, "tcp-window-size", path, zero_is_unknown=True),
        "snd_wnd": None,
        "rtt_us": reported(stream, "rtt", path, zero_is_unknown=True),
        "rttvar_us": None,
        "pmtu": None,
        "packets": reported(stream, "sent", path),
        "jitter_ms": reported_measure(stream, "jitter", path),
        "lost_packets": reported(stream, "lost", path),
    }


def _lost_percent(packets: int | None, lost: int | None) -> float | None:
    if packets is None or lost is None or packets <= 0 or lost > packets:
        return None
    return 100.0 * lost / packets


def _delivered(bits_per_s: float, sent_bytes: int, packets: int | None, lost: int | None) -> tuple[float, int]:
    """What reached a UDP receiver, as the Go agent reckons it: iperf3 sends datagrams of one
    size, so the received share of the bytes is the received share of the packets."""
    if packets is None or lost is None or packets <= 0 or lost > packets:
        return 0.0, 0
    share = (packets - lost) / packets
    return bits_per_s * share, int(sent_bytes * share)


def _summary(
    summary: dict[str, Any], path: str, udp: bool, max_snd_cwnd: int | None, mean_rtt_us: int | None
) -> dict[str, Any]:
    sender_bits = as_measure(required(summary, "throughput-bits", path), at(path, "throughput-bits"))
    sender_bytes = as_amount(required(summary, "throughput-bytes", path), at(path, "throughput-bytes"))
    packets, lost = reported(summary, "sent", path), reported(summary, "lost", path)
    receiver_bits, receiver_bytes = 0.0, 0  # pScheduler keeps no receiver bytes for TCP
    if udp:
        receiver_bits, receiver_bytes = _delivered(sender_bits, sender_bytes, packets, lost)
    if summary.get("receiver-throughput-bits") is not None:
        receiver_bits = as_measure(summary["receiver-throughput-bits"], at(path, "receiver-throughput-bits"))
    return {
        "sender_bits_per_s": sender_bits,
        "receiver_bits_per_s": receiver_bits,
        "sender_bytes": sender_bytes,
        "receiver_bytes": receiver_bytes,
        "retransmits": reported(summary, "retransmits", path),
        "min_rtt_us": None,
        "mean_rtt_us": mean_rtt_us,
        "max_rtt_us": None,
        "max_snd_cwnd": max_snd_cwnd,
        "max_snd_wnd": None,
        "host_cpu_percent": None,
        "remote_cpu_percent": None,
        "jitter_ms": reported_measure(summary, "jitter", path) if udp else None,
        "lost_packets": lost if udp else None,
        "packets": packets if udp else None,
        "lost_percent": _lost_percent(packets, lost) if udp else None,
    }


def _senders_view(spec: dict[str, Any], intervals: list[Any], udp: bool) -> bool:
    """Whether the intervals are the sending end's. pScheduler merges the sender's result,
    except when one end ran the whole test (single-ended, loopback) reversed: then they are
    its client's, which received. With the spec unknown, TCP tells by TCP_INFO, which only
    the sender has."""
    flags = [spec.get(key) for key in ("reverse", "single-ended", "loopback")]
    for key, flag in zip(("reverse", "single-ended", "loopback"), flags, strict=True):
        if flag is not None:
            as_boolean(flag, f"test/spec/{key}")
    if spec:
        return not (flags[0] is True and (flags[1] is True or flags[2] is True))
    if udp:
        return True
    streams = [
        stream for interval in intervals if isinstance(interval, dict) for stream in interval.get("streams") or []
    ]
    return not streams or any(isinstance(stream, dict) and "retransmits" in stream for stream in streams)


def to_throughput(run: PsRun, result: dict[str, Any], placement: Placement) -> dict[str, Any]:
    """The result's "throughput" object from a throughput run's merged result."""
    summary = as_object(required(result, "summary", "result"), "result/summary")
    total = as_object(required(summary, "summary", "result/summary"), "result/summary/summary")
    options = _options(run, placement, total)
    intervals = as_array(required(result, "intervals", "result"), "result/intervals", MAX_INTERVAL_ROWS)
    sender = _senders_view(run.spec, intervals, options["udp"])
    rows: list[dict[str, Any]] = []
    for index, interval in enumerate(intervals):
        path = f"result/intervals/{index}"
        entries = as_array(required(as_object(interval, path), "streams", path), at(path, "streams"), MAX_STREAMS)
        for number, stream in enumerate(entries):
            stream_path = f"{path}/streams/{number}"
            rows.append(_interval_row(as_object(stream, stream_path), stream_path, sender))
        if len(rows) > MAX_INTERVAL_ROWS:
            fail("result/intervals", f"more than the {MAX_INTERVAL_ROWS} stream intervals Fathom keeps")
    largest_cwnd: dict[int, int] = {}
    for row in rows:
        if row["snd_cwnd"] is not None:
            largest_cwnd[row["stream"]] = max(largest_cwnd.get(row["stream"], 0), row["snd_cwnd"])
    stream_summaries = []
    means: list[int] = []
    summary_streams = [] if summary.get("streams") is None else summary["streams"]
    for index, stream in enumerate(as_array(summary_streams, "result/summary/streams", MAX_STREAMS)):
        path = f"result/summary/streams/{index}"
        stream = as_object(stream, path)
        stream_id = stream.get("stream-id")
        cwnd = (
            None if stream_id is None else largest_cwnd.get(as_integer(stream_id, at(path, "stream-id"), 0, 2**31 - 1))
        )
        mean_rtt = reported(stream, "rtt", path, zero_is_unknown=True)
        if mean_rtt is not None:
            means.append(mean_rtt)
        stream_summaries.append(_summary(stream, path, options["udp"], cwnd, mean_rtt))
    overall = _summary(
        total,
        "result/summary/summary",
        options["udp"],
        max(largest_cwnd.values()) if largest_cwnd else None,
        sum(means) // len(means) if means else reported(total, "rtt", "result/summary/summary", zero_is_unknown=True),
    )
    streams = max(options["parallel"], len(stream_summaries), len({row["stream"] for row in rows}))
    if streams > MAX_STREAMS:
        fail("result", f"{streams} streams, more than the {MAX_STREAMS} Fathom keeps")
    return {
        "options": options,
        "iperf3_version": "",  # pScheduler does not report it
        "protocol": "UDP" if options["udp"] else "TCP",
        "reverse": options["reverse"],
        "streams": streams,
        "duration_s": options["duration_s"],
        "omit_s": options["omit_s"],
        "sndbuf_actual": None,
        "rcvbuf_actual": None,
        "sender_congestion": "",
        "receiver_congestion": "",
        "intervals": rows,
        "summary": overall,
        "stream_summaries": stream_summaries,
    }
