"""Ingest of ping results: counts checked against the samples, one row per packet."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from measurements.kinds.base import BatchError, KindIngest, RunKeys, timestamp
from measurements.models import PingSample


def errors(where: str, ping: dict[str, Any]) -> list[BatchError]:
    """Counts must agree with the samples, or loss computed from samples would lie."""
    found = []
    samples = ping["samples"]
    originals = [sample for sample in samples if not sample["duplicate"]]
    replies = [sample for sample in originals if sample["rtt_ms"] is not None]
    if ping["received"] > ping["transmitted"]:
        found.append(BatchError(f"{where}/received", "received exceeds transmitted"))
    if len(originals) != ping["transmitted"]:
        found.append(
            BatchError(
                f"{where}/samples", f"{len(originals)} non-duplicate samples for {ping['transmitted']} transmitted"
            )
        )
    if len(replies) != ping["received"]:
        found.append(BatchError(f"{where}/samples", f"{len(replies)} answered samples for {ping['received']} received"))
    if len(samples) - len(originals) != ping["duplicates"]:
        found.append(BatchError(f"{where}/duplicates", "duplicates does not match the duplicate samples"))
    return found


def params_and_summary(ping: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    params: dict[str, Any] = {key: ping[key] for key in ("count", "interval_s", "size_bytes", "ttl") if key in ping}
    rtts = sorted(s["rtt_ms"] for s in ping["samples"] if not s["duplicate"] and s["rtt_ms"] is not None)
    transmitted = ping["transmitted"]
    summary = {
        "transmitted": transmitted,
        "received": ping["received"],
        "duplicates": ping["duplicates"],
        "errors": ping["errors"],
        "loss_fraction": (transmitted - ping["received"]) / transmitted if transmitted else None,
        "rtt_min_ms": rtts[0] if rtts else None,
        "rtt_median_ms": rtts[len(rtts) // 2] if rtts else None,
        "rtt_max_ms": rtts[-1] if rtts else None,
    }
    return params, summary


def rows(keys: RunKeys, ping: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for index, sample in enumerate(ping["samples"]):
        yield {
            "time": timestamp(sample["time"]),
            "run_id": keys.run_id,
            "sample_index": index,
            "source_id": keys.source_id,
            "destination_id": keys.destination_id,
            "family": keys.family,
            "seq": sample["seq"],
            "rtt_ms": sample["rtt_ms"],
            "ttl": sample["ttl"],
            "duplicate": sample["duplicate"],
            "error": sample.get("error", ""),
        }


def times(where: str, started_at: datetime, ping: dict[str, Any]) -> Iterable[tuple[str, datetime]]:
    for index, sample in enumerate(ping["samples"]):
        yield f"{where}/samples/{index}/time", timestamp(sample["time"])


INGEST = KindIngest("ping", errors, params_and_summary, PingSample, rows, times=times)
