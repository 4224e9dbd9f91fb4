"""A mesh as a document: the checks and writes of a mesh with its members and tests, and its
grid thresholds, as the API, the pSConfig importer and `apply_mesh` all take it (a
serializer, because DRF's nested validation is what every one of them speaks)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from django.db import transaction
from rest_framework import serializers

from core.serializers import StrictSerializer
from inventory.models import Agent
from measurements.choices import EXCLUSIVE_TEST_TYPES, TestType
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember, MeshTest
from meshes.names import RESERVED_MESH_NAMES
from meshes.services.defaults import create_default_tests
from meshes.specs import SpecError, normalize_spec, reserved_seconds
from meshes.thresholds import threshold_errors

HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


MIN_INTERVAL_S = 10


MAX_INTERVAL_S = 7 * 86400


MAX_STALE_AFTER_S = 366 * 86400


POSITIVE_THRESHOLDS = ("rate_good_bps", "rate_bad_bps", "rtt_warn_ms", "rtt_crit_ms")


def require_whole(serializer: serializers.Serializer[Any], data: Any) -> None:
    """A member or a test is written whole, in a PATCH too: under a partial root DRF would
    skip its missing required fields, and the checks after it would meet a half object."""
    if isinstance(data, dict):
        missing = {
            name: [field.error_messages["required"]]
            for name, field in serializer.fields.items()
            if field.required and not field.read_only and name not in data
        }
        if missing:
            raise serializers.ValidationError(missing)


class MeshMemberSerializer(serializers.ModelSerializer[MeshMember]):
    agent = serializers.SlugRelatedField(slug_field="name", queryset=Agent.objects.filter(revoked_at__isnull=True))
    side = serializers.ChoiceField(choices=MemberSide.choices, default=MemberSide.A)

    class Meta:
        model = MeshMember
        fields = ["agent", "side"]

    def to_internal_value(self, data: Any) -> Any:
        require_whole(self, data)
        return super().to_internal_value(data)


class MeshTestSerializer(serializers.ModelSerializer[MeshTest]):
    test_type = serializers.ChoiceField(choices=TestType.choices)
    interval_s = serializers.IntegerField(min_value=MIN_INTERVAL_S, max_value=MAX_INTERVAL_S)
    slip_s = serializers.IntegerField(min_value=0, max_value=MAX_INTERVAL_S, default=0)
    spec = serializers.JSONField(default=dict)

    class Meta:
        model = MeshTest
        fields = ["name", "test_type", "spec", "interval_s", "slip_s", "enabled"]

    def to_internal_value(self, data: Any) -> Any:
        require_whole(self, data)
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        test_type = attrs["test_type"]
        try:
            spec = normalize_spec(test_type, attrs.get("spec", {}))
        except SpecError as error:
            raise serializers.ValidationError({"spec": error.errors}) from error
        if attrs.get("slip_s", 0) > attrs["interval_s"]:
            raise serializers.ValidationError({"slip_s": "must not exceed interval_s"})
        if test_type == TestType.LATENCY and attrs["interval_s"] != spec["report_interval_s"]:
            # A latency test runs back to back: its interval is the length of each result.
            length = spec["report_interval_s"]
            message = f"a latency test runs back to back: must equal spec.report_interval_s ({length})"
            raise serializers.ValidationError({"interval_s": message})
        if test_type in EXCLUSIVE_TEST_TYPES and reserved_seconds(spec, None) > attrs["interval_s"]:
            held = reserved_seconds(spec, None)
            raise serializers.ValidationError({"interval_s": f"a run holds both agents for {held} s, more than this"})
        return attrs


def valid_target(value: Any) -> str:
    if not isinstance(value, str):
        raise serializers.ValidationError("a target is a host name or an IP address")
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not HOSTNAME.match(value):
            raise serializers.ValidationError(f"{value!r} is neither an IP address nor a host name") from None
    return value


class GridThresholdsSerializer(StrictSerializer):
    """The grid's colour thresholds an operator sets for a mesh, written whole: the keys sent
    replace those stored, and a key left out takes its default (GET
    /analysis/meshes/<name>/grid/ shows them all, as they apply)."""

    fraction_good = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="throughput/ceiling from which a cell is green (0..1)"
    )
    fraction_bad = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="throughput/ceiling at or under which a cell is red"
    )
    rate_good_bps = serializers.FloatField(required=False, help_text="throughput from which a cell is green")
    rate_bad_bps = serializers.FloatField(required=False, help_text="throughput at or under which a cell is red")
    rtt_warn_ms = serializers.FloatField(required=False, help_text="RTT median from which a cell is amber")
    rtt_crit_ms = serializers.FloatField(required=False, help_text="RTT median from which a cell is red")
    loss_warn = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="loss fraction from which a cell is amber (0..1)"
    )
    loss_crit = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="loss fraction from which a cell is red (0..1)"
    )
    stale_after_s = serializers.IntegerField(
        min_value=1,
        max_value=MAX_STALE_AFTER_S,
        required=False,
        help_text="a cell whose newest data is older is stale; unset: 3x the longest test interval, at least 1 h",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = {key: "must be above 0" for key in POSITIVE_THRESHOLDS if key in attrs and not attrs[key] > 0}
        if not errors:
            errors = threshold_errors(attrs)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class MeshSerializer(serializers.ModelSerializer[Mesh]):
    kind = serializers.ChoiceField(choices=MeshKind.choices, default=MeshKind.MESH)
    members = MeshMemberSerializer(many=True, required=False)
    tests = MeshTestSerializer(many=True, required=False)
    targets = serializers.ListField(child=serializers.CharField(max_length=255), required=False, max_length=256)
    thresholds = GridThresholdsSerializer(required=False)

    class Meta:
        model = Mesh
        fields = [
            "name",
            "description",
            "kind",
            "all_agents",
            "unidirectional",
            "targets",
            "enabled",
            "psconfig_published",
            "thresholds",
            "members",
            "tests",
        ]

    def validate_name(self, value: str) -> str:
        if value in RESERVED_MESH_NAMES:
            raise serializers.ValidationError(f"{value!r} names an endpoint under /meshes/: choose another name")
        return value

    def validate_targets(self, value: list[str]) -> list[str]:
        return [valid_target(target) for target in value]

    def validate_tests(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = [test["name"] for test in value]
        if len(names) != len(set(names)):
            raise serializers.ValidationError("test names must be unique within a mesh")
        return value

    def validate_members(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        agents = [member["agent"].pk for member in value]
        if len(agents) != len(set(agents)):
            raise serializers.ValidationError("an agent is listed twice")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        merged = {
            field: attrs.get(field, getattr(self.instance, field, None)) for field in ("kind", "all_agents", "targets")
        }
        if merged["all_agents"] and attrs.get("members"):
            raise serializers.ValidationError({"members": "a mesh of all agents lists no members"})
        if merged["kind"] == MeshKind.LIST:
            if not merged["targets"]:
                raise serializers.ValidationError({"targets": "a list mesh needs at least one external target"})
            for test in attrs.get("tests", []):
                if test["test_type"] in EXCLUSIVE_TEST_TYPES:
                    raise serializers.ValidationError(
                        {"tests": f"{test['name']}: throughput needs an agent at the far end, not a list target"}
                    )
        elif merged["targets"]:
            raise serializers.ValidationError({"targets": "only list meshes have external targets"})
        if merged["kind"] == MeshKind.DISJOINT and merged["all_agents"]:
            raise serializers.ValidationError({"all_agents": "a disjoint mesh names its A and B members"})
        return attrs

    @transaction.atomic
    def create(self, validated_data: dict[str, Any]) -> Mesh:
        members = validated_data.pop("members", [])
        tests = validated_data.pop("tests", None)
        mesh = Mesh.objects.create(**validated_data)
        self._write_members(mesh, members)
        if tests is None:
            create_default_tests(mesh)
        else:
            self._write_tests(mesh, tests)
        return mesh

    @transaction.atomic
    def update(self, instance: Mesh, validated_data: dict[str, Any]) -> Mesh:
        members = validated_data.pop("members", None)
        tests = validated_data.pop("tests", None)
        for field, value in validated_data.items():
            setattr(instance, field, value)
        instance.save()
        if members is not None:
            instance.members.all().delete()
            self._write_members(instance, members)
        if tests is not None:
            keep = {test["name"] for test in tests}
            instance.tests.exclude(name__in=keep).delete()
            self._write_tests(instance, tests)
        return instance

    @staticmethod
    def _write_members(mesh: Mesh, members: list[dict[str, Any]]) -> None:
        MeshMember.objects.bulk_create(
            MeshMember(mesh=mesh, agent=m["agent"], side=m.get("side", MemberSide.A)) for m in members
        )

    @staticmethod
    def _write_tests(mesh: Mesh, tests: list[dict[str, Any]]) -> None:
        for test in tests:
            MeshTest.objects.update_or_create(
                mesh=mesh,
                name=test["name"],
                defaults={field: value for field, value in test.items() if field != "name"},
            )
