"""Ingest of flow sweeps: one row per probe, and each flow's minimum RTT in the summary."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from measurements.kinds.base import BatchError, KindIngest, RunKeys, timestamp
from measurements.models import FlowSample


def errors(where: str, sweep: dict[str, Any]) -> list[BatchError]:
    """Every sample must name a flow and round of this sweep, each at most once."""
    found = []
    seen: set[tuple[int, int]] = set()
    for index, sample in enumerate(sweep["samples"]):
        key = (sample["flow"], sample["seq"])
        if sample["flow"] >= sweep["flows"]:
            found.append(BatchError(f"{where}/samples/{index}/flow", f"flow {sample['flow']} of {sweep['flows']}"))
        elif sample["seq"] >= sweep["samples_per_flow"]:
            found.append(
                BatchError(f"{where}/samples/{index}/seq", f"seq {sample['seq']} of {sweep['samples_per_flow']}")
            )
        elif key in seen:
            found.append(BatchError(f"{where}/samples/{index}", f"flow {key[0]} seq {key[1]} appears twice"))
        seen.add(key)
    return found


def params_and_summary(sweep: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    rtts = [sample["rtt_ms"] for sample in sweep["samples"] if sample["rtt_ms"] is not None]
    per_flow: dict[int, float] = {}
    for sample in sweep["samples"]:
        if sample["rtt_ms"] is not None:
            per_flow[sample["flow"]] = min(per_flow.get(sample["flow"], sample["rtt_ms"]), sample["rtt_ms"])
    summary = {
        "sent": len(sweep["samples"]),
        "answered": len(rtts),
        "rtt_min_ms": min(rtts) if rtts else None,
        "rtt_max_ms": max(rtts) if rtts else None,
        "flow_min_rtt_ms": {str(flow): rtt for flow, rtt in sorted(per_flow.items())},
    }
    return {key: value for key, value in sweep.items() if key != "samples"}, summary


def rows(keys: RunKeys, sweep: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for index, sample in enumerate(sweep["samples"]):
        yield {
            "time": timestamp(sample["time"]),
            "run_id": keys.run_id,
            "sample_index": index,
            "source_id": keys.source_id,
            "destination_id": keys.destination_id,
            "family": keys.family,
            "flow": sample["flow"],
            "src_port": sample["src_port"],
            "seq": sample["seq"],
            "rtt_ms": sample["rtt_ms"],
            "error": sample.get("error", ""),
        }


def times(where: str, started_at: datetime, sweep: dict[str, Any]) -> Iterable[tuple[str, datetime]]:
    for index, sample in enumerate(sweep["samples"]):
        yield f"{where}/samples/{index}/time", timestamp(sample["time"])


INGEST = KindIngest("flowsweep", errors, params_and_summary, FlowSample, rows, times=times)
