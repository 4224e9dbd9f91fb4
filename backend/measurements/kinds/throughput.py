"""Ingest of iperf3 throughput results: one row per stream interval."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from measurements.kinds.base import BatchError, KindIngest, RunKeys
from measurements.models import ThroughputInterval


def errors(where: str, throughput: dict[str, Any]) -> list[BatchError]:
    found = []
    for index, interval in enumerate(throughput["intervals"]):
        if interval["end_s"] < interval["start_s"]:
            found.append(BatchError(f"{where}/intervals/{index}/end_s", "end_s is before start_s"))
    if len(throughput["stream_summaries"]) > throughput["streams"]:
        found.append(BatchError(f"{where}/stream_summaries", "more stream summaries than streams"))
    options = throughput["options"]
    if options.get("streams_probe") and (options["parallel"] < 2 or options["udp"]):
        found.append(BatchError(f"{where}/options/streams_probe", "a streams probe runs several TCP streams"))
    return found + ramp_errors(where, throughput)


def ramp_errors(where: str, throughput: dict[str, Any]) -> list[BatchError]:
    """A policer's UDP ramp reports at most the steps its options asked for, in their order."""
    steps, asked = throughput.get("ramp"), throughput["options"].get("ramp_bps") or []
    if not steps:
        return []
    if throughput["protocol"] != "UDP":
        return [BatchError(f"{where}/ramp", "a ramp is UDP")]
    if len(steps) > len(asked):
        return [BatchError(f"{where}/ramp", f"{len(steps)} ramp steps, but options.ramp_bps asked for {len(asked)}")]
    return [
        BatchError(f"{where}/ramp/{index}/offered_bps", f"step {index} offered {step['offered_bps']}, asked {rate}")
        for index, (step, rate) in enumerate(zip(steps, asked, strict=False))
        if step["offered_bps"] != rate
    ]


def params_and_summary(throughput: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    # The end summary's figures at the top, beside what the kernel and iperf3 granted.
    details = {key: value for key, value in throughput.items() if key not in ("options", "intervals", "summary")}
    return throughput["options"], {**throughput["summary"], **details}


def interval_time(started_at: datetime, omit_s: int, interval: dict[str, Any]) -> datetime:
    """An interval's end; iperf3 restarts its clock after the omitted (slow-start) seconds."""
    return started_at + timedelta(seconds=interval["end_s"] + (0 if interval["omitted"] else omit_s))


def times(where: str, started_at: datetime, throughput: dict[str, Any]) -> Iterable[tuple[str, datetime]]:
    for index, interval in enumerate(throughput["intervals"]):
        yield f"{where}/intervals/{index}/end_s", interval_time(started_at, throughput["omit_s"], interval)


def rows(keys: RunKeys, throughput: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for index, interval in enumerate(throughput["intervals"]):
        yield {
            "time": interval_time(keys.started_at, throughput["omit_s"], interval),
            "run_id": keys.run_id,
            "interval_index": index,
            "source_id": keys.source_id,
            "destination_id": keys.destination_id,
            "family": keys.family,
            "stream": interval["stream"],
            "start_s": interval["start_s"],
            "end_s": interval["end_s"],
            "omitted": interval["omitted"],
            "sender": interval["sender"],
            "bytes": interval["bytes"],
            "bits_per_s": interval["bits_per_s"],
            "retransmits": interval["retransmits"],
            "snd_cwnd_bytes": interval["snd_cwnd"],
            "snd_wnd_bytes": interval["snd_wnd"],
            "rtt_us": interval["rtt_us"],
            "rttvar_us": interval["rttvar_us"],
            "pmtu": interval["pmtu"],
            "packets": interval["packets"],
            "jitter_ms": interval["jitter_ms"],
            "lost_packets": interval["lost_packets"],
        }


INGEST = KindIngest("throughput", errors, params_and_summary, ThroughputInterval, rows, times=times)
