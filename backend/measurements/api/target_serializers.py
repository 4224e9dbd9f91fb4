"""Query and response shapes of the external-target API (a list mesh's far ends: host names or
addresses without an agent), for the OpenAPI schema the UI's types come from."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.serializers import StrictSerializer
from inventory.api.serializers import AgentRefSerializer
from measurements.api.serializers import (
    PathLatencyPointSerializer,
    RouteChangeSerializer,
    RouteRunSerializer,
    RouteSerializer,
    RttBucketSerializer,
    RunRowSerializer,
)
from measurements.choices import RunStatus, TestType
from measurements.paths import MAX_POINTS_LIMIT
from measurements.targets import normalize_target

MAX_TARGET_RUNS = 500


class TargetPathQuerySerializer(StrictSerializer):
    source = serializers.UUIDField(help_text="the agent that probes the target")  # type: ignore[assignment]
    target = serializers.CharField(
        max_length=255, help_text="host name or address, as the list mesh names it (case does not matter)"
    )

    def validate_target(self, value: str) -> str:
        return normalize_target(value)


class TargetRangeQuerySerializer(TargetPathQuerySerializer):
    to = serializers.DateTimeField(required=False, help_text="the range's end (default: now; later is clipped to now)")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "from" is a Python keyword: it cannot be declared as a class attribute.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(required=False, help_text="the range's start (default: to - 24 h)")
        return fields


class TargetRttQuerySerializer(TargetRangeQuerySerializer):
    max_points = serializers.IntegerField(min_value=2, max_value=MAX_POINTS_LIMIT, default=1000)


class TargetRunsQuerySerializer(TargetPathQuerySerializer):
    status = serializers.ChoiceField(
        choices=["failed", "ok", "all"],
        default="all",
        help_text="failed: every run that did not measure (failed or missed)",
    )
    test_type = serializers.ChoiceField(choices=TestType.choices, required=False)
    before = serializers.DateTimeField(required=False, help_text="runs that started before this (the next page)")
    limit = serializers.IntegerField(min_value=1, max_value=MAX_TARGET_RUNS, default=100)


class TargetSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    target = serializers.CharField()
    # Plain strings: a TestType ChoiceField under a new field name would rename the schema's TestTypeEnum.
    test_types = serializers.ListField(child=serializers.CharField(), help_text="test types with runs")
    last_run_at = serializers.DateTimeField()
    last_status = serializers.ChoiceField(choices=RunStatus.choices)
    last_run_test_type = serializers.CharField(help_text="the test type of the newest run")
    data_age_s = serializers.FloatField(help_text="seconds since the newest run started")
    rtt_median_ms = serializers.FloatField(allow_null=True, help_text="pings of the last hour")
    loss_fraction = serializers.FloatField(allow_null=True, help_text="pings of the last hour; null: none sent")
    sent_last_hour = serializers.IntegerField()


class TargetListSerializer(serializers.Serializer[Any]):
    generated_at = serializers.DateTimeField()
    targets = TargetSerializer(many=True)


class TargetLatestSerializer(serializers.Serializer[Any]):
    test_type = serializers.ChoiceField(choices=TestType.choices)
    run_id = serializers.UUIDField()
    started_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=RunStatus.choices)


# Its own name keeps the TargetRttPoint schema component; the fields are the history's.
class TargetRttPointSerializer(RttBucketSerializer):
    pass


class TargetRangeSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    target = serializers.CharField()
    to = serializers.DateTimeField()
    retained_from = serializers.DateTimeField(help_text="raw data older than this is gone (targets have no rollups)")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(help_text="the range read: the asked one, from raw retention on")
        return fields


class TargetRttSeriesSerializer(TargetRangeSerializer):
    bucket_s = serializers.IntegerField()
    latest = TargetLatestSerializer(many=True, help_text="the newest run of each test type, whenever it was")
    points = TargetRttPointSerializer(many=True)


class TargetLatencySeriesSerializer(TargetRangeSerializer):
    """A target's latency test (TWAMP-light to the device's reflector) in the points of an agent
    path's: forward is the agent to the device, backward the answers' way back."""

    bucket_s = serializers.IntegerField()
    clock_error_limit_ms = serializers.FloatField(help_text="FATHOM_LATENCY_CLOCK_ERROR_LIMIT_MS")
    points = PathLatencyPointSerializer(many=True)


class TargetRunSerializer(RunRowSerializer):
    summary = serializers.DictField(help_text="what the run found, per test kind (ping: rtt_min_ms, loss, ...)")


class TargetRunsSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    target = serializers.CharField()
    runs = TargetRunSerializer(many=True, help_text="newest first")
    next_before = serializers.DateTimeField(
        allow_null=True, help_text="pass as `before` for the next page; null: no more runs"
    )


class TargetRoutesSerializer(TargetRangeSerializer):
    routes = RouteSerializer(many=True)
    runs = RouteRunSerializer(many=True)
    changes = RouteChangeSerializer(many=True)
    truncated = serializers.BooleanField(
        help_text="the range holds more trace runs than are read: the oldest are left out"
    )
