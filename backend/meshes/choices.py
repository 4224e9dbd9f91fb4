"""Choice sets of meshes, as pSConfig names them, and the states of planned slots."""

from django.db import models

from core import choices as registry


class MeshKind(models.TextChoices):
    # mesh: every member tests to every other; disjoint: every A to every B and back;
    # list: every member tests to each of the mesh's external targets (no agent at the far end).
    MESH = "mesh", "Mesh"
    DISJOINT = "disjoint", "Disjoint"
    LIST = "list", "List"


class MemberSide(models.TextChoices):
    A = "a", "A"
    B = "b", "B"


class SlotState(models.TextChoices):
    PLANNED = "planned", "Planned"
    OK = "ok", "OK"
    FAILED = "failed", "Failed"
    MISSED = "missed", "Missed"
    # The planner found no exclusive time for both agents within the slip window.
    UNSCHEDULABLE = "unschedulable", "Unschedulable"


SLOT_STATE_COLORS = {
    SlotState.PLANNED: "#0969da",
    SlotState.OK: "#1a7f37",
    SlotState.FAILED: "#cf222e",
    SlotState.MISSED: "#9a6700",
    SlotState.UNSCHEDULABLE: "#8250df",
}

registry.register("slot_state", SlotState, SLOT_STATE_COLORS)
