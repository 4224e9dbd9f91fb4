"""Meshes as the API reads them, and the plan's shape; mesh writes are meshes.documents'."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.serializers import StrictSerializer
from meshes.choices import SlotState
from meshes.documents import (
    MeshSerializer,
)
from meshes.models import Mesh, Slot


class PeerSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField(allow_null=True)
    name = serializers.CharField()
    address = serializers.CharField()


class PlannedTestSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    type = serializers.CharField()
    interval_s = serializers.IntegerField()
    peer = PeerSerializer()
    spec = serializers.DictField()


class Iperf3AuthSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    password = serializers.CharField()
    public_key = serializers.CharField()


class Iperf3UserSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    password_sha256 = serializers.CharField()


class PlannedSlotSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    test_id = serializers.CharField()
    type = serializers.CharField()
    start_at = serializers.DateTimeField()
    peer = PeerSerializer()
    spec = serializers.DictField()
    iperf3_auth = Iperf3AuthSerializer(allow_null=True)


class PlanSerializer(serializers.Serializer[Any]):
    schema_version = serializers.IntegerField()
    agent_id = serializers.UUIDField()
    version = serializers.CharField()
    generated_at = serializers.DateTimeField()
    valid_until = serializers.DateTimeField()
    upload_interval_s = serializers.IntegerField()
    host_facts_interval_s = serializers.IntegerField()
    tests = PlannedTestSerializer(many=True)
    slots = PlannedSlotSerializer(many=True)
    iperf3_users = Iperf3UserSerializer(many=True)


class SlotSerializer(serializers.ModelSerializer[Slot]):
    # Not "source": every DRF field has an attribute of that name.
    source_agent = serializers.CharField(source="source.name", read_only=True)
    destination_agent = serializers.CharField(source="destination.name", read_only=True)
    mesh = serializers.SerializerMethodField()
    test = serializers.SerializerMethodField()
    state = serializers.ChoiceField(choices=SlotState.choices)

    class Meta:
        model = Slot
        fields = [
            "id",
            "mesh",
            "test",
            "source_agent",
            "destination_agent",
            "family",
            "test_type",
            "period_start",
            "start_at",
            "end_at",
            "state",
            "reason",
            "run_id",
        ]

    def get_mesh(self, slot: Slot) -> str | None:
        return slot.mesh_test.mesh.name if slot.mesh_test else None

    def get_test(self, slot: Slot) -> str | None:
        return slot.mesh_test.name if slot.mesh_test else None


class SlotQuerySerializer(serializers.Serializer[Any]):
    agent = serializers.CharField(required=False, help_text="agent name: slots where it sends or receives")
    state = serializers.ChoiceField(choices=SlotState.choices, required=False)
    start = serializers.DateTimeField(required=False)
    end = serializers.DateTimeField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=5000, default=500)


class AgentUtilizationSerializer(serializers.Serializer[Any]):
    agent = serializers.CharField()
    planned_exclusive_s = serializers.FloatField()
    utilization = serializers.FloatField(help_text="reserved exclusive time / planned horizon")
    demand = serializers.FloatField(help_text="steady-state share of time the meshes' exclusive tests ask for")
    slots_planned = serializers.IntegerField()


class UtilizationSerializer(serializers.Serializer[Any]):
    now = serializers.DateTimeField()
    planned_until = serializers.DateTimeField()
    horizon_s = serializers.FloatField()
    agents = AgentUtilizationSerializer(many=True)


@extend_schema_field(MeshSerializer)
class MeshBodyField(serializers.DictField):
    """A mesh as a create or a full update writes it; the view validates it with
    MeshSerializer (as an update of the mesh it replaces, if any)."""


class MeshDraftSerializer(StrictSerializer):
    """A mesh to preview, new or in place of an existing one."""

    mesh = MeshBodyField(help_text="the mesh as it would be saved: the body of a create or of a full update (PUT)")
    replaces = serializers.SlugRelatedField(
        slug_field="name",
        queryset=Mesh.objects.all(),
        allow_null=True,
        default=None,
        help_text="the name of the mesh this one would replace (an update); null: a new mesh",
    )


class AgentPlanEffectSerializer(serializers.Serializer[Any]):
    agent = serializers.CharField()
    slots = serializers.IntegerField(help_text="exclusive runs it would take part in within the planning horizon")
    exclusive_s = serializers.FloatField(help_text="their seconds within the planning horizon")
    demand_before = serializers.FloatField(help_text="share of its time its exclusive tests ask for now")
    demand = serializers.FloatField(help_text="the same with the change, all meshes; above 1 it is overbooked")
    overbooked = serializers.BooleanField()


class PlanConflictSerializer(serializers.Serializer[Any]):
    test = serializers.CharField(help_text="<mesh>/<test>")
    # DRF moves declared fields off the class, so this name does not clash with Field.source.
    source = serializers.CharField()  # type: ignore[assignment]
    destination = serializers.CharField()
    reason = serializers.CharField()


class MeshPreviewSerializer(serializers.Serializer[Any]):
    """What saving a mesh would do to the exclusive plan."""

    ok = serializers.BooleanField(help_text="saving the mesh would be accepted")
    horizon_s = serializers.FloatField(help_text="the planning horizon the slot counts cover")
    agents = AgentPlanEffectSerializer(many=True, help_text="agents the mesh includes or whose demand changes")
    conflicts = PlanConflictSerializer(many=True, help_text="runs the change would leave without a slot, by path")


class MeshRevertSerializer(StrictSerializer):
    """Which change of the mesh to undo."""

    entry = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, help_text="the audit entry whose before state to restore"
    )
