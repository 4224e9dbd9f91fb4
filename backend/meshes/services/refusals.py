"""Results on paths the agent was not asked to measure, refused at ingest."""

from __future__ import annotations

from typing import Any

from inventory.addresses import address_family
from inventory.models import Agent
from measurements.kinds.base import BatchError, timestamp
from meshes.models import Slot
from meshes.services.issued_plans import held_plans, path_key
from meshes.services.paths import mesh_paths


def unplanned_results(agent: Agent, results: list[dict[str, Any]]) -> list[BatchError]:
    """Results on paths the agent was not asked to measure: in neither its plan now (its
    meshes' enabled tests, from it, of that test type) nor the plan it was measured under,
    nor in a slot planned for it. An agent reports on its own paths only. (Revoked peers are
    refused by ingest before this, whatever plan a result was measured under.)"""
    held = held_plans(agent, results)
    slot_ids = {result["slot_id"] for result in results if result.get("slot_id")}
    # A slot stays the agent's after its test is edited away: its run is still the agent's.
    slots = {
        str(pk): (str(destination_id), family, test_type)
        for pk, destination_id, family, test_type in Slot.objects.filter(pk__in=slot_ids, source=agent).values_list(
            "pk", "destination_id", "family", "test_type"
        )
    }

    def vouched_for(result: dict[str, Any]) -> bool:
        """Measured under a plan issued to this agent with the path in it, or in its slot."""
        peer_id, test_type = result.get("peer_id"), result["test_type"]
        in_slot = (peer_id, address_family(result["target"]), test_type)
        if peer_id and slots.get(result.get("slot_id") or "") == in_slot:
            return True
        plan = held.get(result.get("plan_version") or "")
        key = path_key(peer_id, result["target"], test_type)
        return plan is not None and plan.covers(key, timestamp(result["started_at"]))

    unvouched = [(index, result) for index, result in enumerate(results) if not vouched_for(result)]
    if not unvouched:
        return []  # the usual batch: the agent's mesh need not be read at all
    planned = {
        path_key(str(path.destination.pk) if path.destination else None, path.target, path.test.test_type)
        for path in mesh_paths(source=agent)
    }
    errors = []
    for index, result in unvouched:
        peer_id, test_type = result.get("peer_id"), result["test_type"]
        if path_key(peer_id, result["target"], test_type) not in planned:
            field_name, far_end = ("peer_id", peer_id) if peer_id else ("target", result["target"])
            errors.append(
                BatchError(
                    f"results/{index}/{field_name}",
                    f"path {agent.name} -> {far_end}: no {test_type} test on it in this agent's plan",
                )
            )
    return errors
