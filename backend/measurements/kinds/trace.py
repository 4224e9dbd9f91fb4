"""Ingest of per-flow traceroutes: one row per flow with its hops and route fingerprint."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from measurements.kinds.base import BatchError, KindIngest, RunKeys
from measurements.models import TracePath


def errors(where: str, trace: dict[str, Any]) -> list[BatchError]:
    found = []
    flows: set[int] = set()
    for index, flow in enumerate(trace["flows"]):
        if flow["flow"] in flows:
            found.append(BatchError(f"{where}/flows/{index}/flow", f"flow {flow['flow']} appears twice"))
        flows.add(flow["flow"])
        ttls = [hop["ttl"] for hop in flow["hops"]]
        if ttls != sorted(set(ttls)):
            found.append(BatchError(f"{where}/flows/{index}/hops", "hop TTLs must be increasing and distinct"))
        if ttls and ttls[-1] > trace["max_hops"]:
            found.append(BatchError(f"{where}/flows/{index}/hops", f"a hop beyond max_hops {trace['max_hops']}"))
    return found


def params_and_summary(trace: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    fingerprints = sorted({flow["fingerprint"] for flow in trace["flows"]})
    summary = {
        "flows": len(trace["flows"]),
        "reached": sum(1 for flow in trace["flows"] if flow["reached"]),
        "distinct_paths": len(fingerprints),
        "fingerprints": fingerprints,
    }
    return {key: value for key, value in trace.items() if key != "flows"}, summary


def rows(keys: RunKeys, trace: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for flow in trace["flows"]:
        yield {
            "time": keys.started_at,
            "run_id": keys.run_id,
            "flow": flow["flow"],
            "source_id": keys.source_id,
            "destination_id": keys.destination_id,
            "family": keys.family,
            "src_port": flow["src_port"],
            "reached": flow["reached"],
            "fingerprint": flow["fingerprint"],
            "hop_count": len(flow["hops"]),
            "hops": flow["hops"],
        }


INGEST = KindIngest("trace", errors, params_and_summary, TracePath, rows)
