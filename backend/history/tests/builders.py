"""Results as agents send them (contract v1), built from the shared examples, for the history tests."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from fathom.testing import load_example
from inventory.models import Agent
from measurements.ingest import ingest_batch


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def ping_result(peer: Agent, started: datetime, rtts_ms: Sequence[float | None], every: timedelta) -> dict[str, Any]:
    """One ping run: a sample per rtt (None: lost), `every` apart from `started`."""
    result = cast(dict[str, Any], copy.deepcopy(load_example("valid/ping-ok.json")["results"][0]))
    samples = [
        {"seq": seq, "time": _stamp(started + seq * every), "rtt_ms": rtt, "ttl": 64 if rtt is not None else None,
         "duplicate": False}
        for seq, rtt in enumerate(rtts_ms)
    ]  # fmt: skip
    received = sum(rtt is not None for rtt in rtts_ms)
    result.update(
        id=str(uuid.uuid4()),
        peer_id=str(peer.pk),
        test_id=f"ping:{peer.pk}",
        started_at=_stamp(started),
        ended_at=_stamp(started + len(rtts_ms) * every),
    )
    result["ping"].update(
        count=len(rtts_ms), transmitted=len(rtts_ms), received=received, duplicates=0, errors=0, samples=samples
    )
    return result


def throughput_result(
    peer: Agent, started: datetime, rate_bps: float, reverse: bool = False, retransmits: int | None = 3
) -> dict[str, Any]:
    result = _throughput_example("valid/throughput-ok.json", peer, started)
    section = result["throughput"]
    section["reverse"] = section["options"]["reverse"] = reverse
    section["summary"].update(receiver_bits_per_s=rate_bps, retransmits=retransmits)
    section["intervals"] = []
    return result


def ramp_result(peer: Agent, started: datetime) -> dict[str, Any]:
    """A policer's UDP ramp (the contract's example), which is not the path's throughput."""
    result = _throughput_example("valid/throughput-udp-ramp.json", peer, started)
    result["throughput"]["intervals"] = []
    return result


def _throughput_example(example: str, peer: Agent, started: datetime) -> dict[str, Any]:
    """The contract's example run, as a new unplanned run towards peer from `started`."""
    result = cast(dict[str, Any], copy.deepcopy(load_example(example)["results"][0]))
    result.pop("slot_id")
    result.update(
        id=str(uuid.uuid4()),
        peer_id=str(peer.pk),
        test_id=f"throughput:{peer.pk}",
        started_at=_stamp(started),
        ended_at=_stamp(started + timedelta(seconds=24)),
    )
    return result


def failed_throughput_result(peer: Agent, started: datetime) -> dict[str, Any]:
    result = cast(dict[str, Any], copy.deepcopy(load_example("valid/throughput-failed-missed.json")["results"][0]))
    result.pop("slot_id")
    result.update(id=str(uuid.uuid4()), peer_id=str(peer.pk), started_at=_stamp(started),
                  ended_at=_stamp(started + timedelta(seconds=1)))  # fmt: skip
    return result


def ingest(agent: Agent, *results: dict[str, Any]) -> None:
    ingest_batch(agent, {"schema_version": 1, "results": list(results)})
