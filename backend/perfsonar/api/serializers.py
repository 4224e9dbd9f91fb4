from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.serializers import StrictSerializer
from inventory.choices import AgentKind
from perfsonar.choices import TlsMode
from perfsonar.models import Node, Task
from perfsonar.nodes import COUNTED_STATES, node_problems, with_task_counts


class NodeCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=63)
    api_url = serializers.CharField(max_length=300, help_text="The pScheduler API, https://host[:port]/pscheduler")
    address = serializers.CharField(
        max_length=64,
        required=False,
        default="",
        allow_blank=True,
        help_text="The address agents probe the node at; blank: the API host's address.",
    )
    tls_mode = serializers.ChoiceField(choices=TlsMode.choices, default=TlsMode.SYSTEM)
    ca_bundle = serializers.CharField(max_length=200_000, required=False, default="", allow_blank=True)
    pinned_sha256 = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)


class NodeUpdateSerializer(StrictSerializer):
    api_url = serializers.CharField(max_length=300, required=False)
    address = serializers.CharField(max_length=64, required=False, allow_blank=True)
    tls_mode = serializers.ChoiceField(choices=TlsMode.choices, required=False)
    ca_bundle = serializers.CharField(max_length=200_000, required=False, allow_blank=True)
    pinned_sha256 = serializers.CharField(max_length=100, required=False, allow_blank=True)


class NodeTaskCountsSerializer(serializers.Serializer[Any]):
    active = serializers.IntegerField()
    refused = serializers.IntegerField()
    unanswered = serializers.IntegerField(help_text="POSTed with no answer: looked up on the node at the next sync")


class NodeSerializer(serializers.ModelSerializer[Node]):
    name = serializers.CharField(source="agent.name", read_only=True)
    kind = serializers.ChoiceField(choices=AgentKind.choices, source="agent.kind", read_only=True)
    address = serializers.CharField(source="agent.address", read_only=True)
    has_ca_bundle = serializers.SerializerMethodField()
    problems = serializers.SerializerMethodField()
    tasks = serializers.SerializerMethodField()
    tests = serializers.ListField(child=serializers.CharField(), read_only=True)
    tools = serializers.ListField(child=serializers.CharField(), read_only=True)
    archivers = serializers.ListField(child=serializers.CharField(), read_only=True)
    removing_since = serializers.SerializerMethodField(
        help_text="when its removal was asked for, while a worker deletes its tasks from it; null otherwise"
    )

    class Meta:
        model = Node
        fields = [
            "name",
            "kind",
            "address",
            "api_url",
            "tls_mode",
            "pinned_sha256",
            "has_ca_bundle",
            "created_at",
            "checked_at",
            "reachable",
            "api_level",
            "hostname",
            "tests",
            "tools",
            "archivers",
            "clock_offset_s",
            "clock_synchronized",
            "last_error",
            "last_error_at",
            "last_push_at",
            "last_poll_at",
            "problems",
            "tasks",
            "removing_since",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_removing_since(self, node: Node) -> datetime | None:
        return node.removal_requested_at if node.removal_finished_at is None else None

    def get_has_ca_bundle(self, node: Node) -> bool:
        return bool(node.ca_bundle)

    def get_problems(self, node: Node) -> list[str]:
        return node_problems(node)

    @extend_schema_field(NodeTaskCountsSerializer)
    def get_tasks(self, node: Node) -> dict[str, int]:
        if not hasattr(node, COUNTED_STATES[0][1]):  # a node not read through with_task_counts()
            node = with_task_counts(Node.objects.filter(pk=node.pk)).get()
        return {state.value: int(getattr(node, field)) for state, field in COUNTED_STATES}


class NodeTaskSerializer(serializers.ModelSerializer[Task]):
    source_name = serializers.CharField(source="source.name", read_only=True)
    destination_name = serializers.SerializerMethodField()
    mesh = serializers.SerializerMethodField()
    test = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = [
            "id",
            "test_type",
            "mesh",
            "test",
            "source_name",
            "destination_name",
            "target",
            "url",
            "state",
            "reason",
            "starts_at",
            "until",
            "created_at",
            "deleted_at",
        ]
        read_only_fields = fields

    def get_mesh(self, task: Task) -> str | None:
        return task.mesh_test.mesh.name if task.mesh_test is not None else None

    def get_test(self, task: Task) -> str | None:
        return task.mesh_test.name if task.mesh_test is not None else None

    def get_destination_name(self, task: Task) -> str | None:
        return task.destination.name if task.destination is not None else None


class ArchiveTokenSerializer(serializers.Serializer[Any]):
    token = serializers.CharField()
    authorization = serializers.CharField(help_text="The header value the node's http archive sends.")
    archive_url = serializers.CharField()


class ArchiveResultSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=["created", "duplicate"])
    result_id = serializers.UUIDField()
