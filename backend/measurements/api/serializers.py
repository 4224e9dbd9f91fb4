from __future__ import annotations

from typing import Any

from rest_framework import serializers

# DRF moves declared fields off the class, so field names such as "source" and "errors" do
# not clash with the Field/Serializer attributes of the same name; the stubs cannot know.
from core.serializers import StrictSerializer
from inventory.api.serializers import AgentRefSerializer
from measurements.paths import MAX_POINTS_LIMIT


class ItemStatusSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=["created", "duplicate"])


class IngestResponseSerializer(serializers.Serializer[Any]):
    results = ItemStatusSerializer(many=True)


class BatchErrorSerializer(serializers.Serializer[Any]):
    path = serializers.CharField()
    message = serializers.CharField()


class InvalidBatchSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()
    errors = BatchErrorSerializer(many=True)  # type: ignore[assignment]


class PathSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    test_types = serializers.ListField(child=serializers.CharField())
    last_run_at = serializers.DateTimeField()
    last_status = serializers.CharField()


class RttQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    start = serializers.DateTimeField(required=False)
    end = serializers.DateTimeField(required=False)
    max_points = serializers.IntegerField(min_value=2, max_value=MAX_POINTS_LIMIT, default=1000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("start"), attrs.get("end")
        if start is not None and end is not None and start >= end:
            raise serializers.ValidationError({"start": ["start must be before end"]})
        return attrs


class RttPointSerializer(serializers.Serializer[Any]):
    time = serializers.DateTimeField()
    rtt_min_ms = serializers.FloatField(allow_null=True)
    rtt_median_ms = serializers.FloatField(allow_null=True)
    sent = serializers.IntegerField()
    lost = serializers.IntegerField()
    loss_fraction = serializers.FloatField(allow_null=True)


class RttSeriesSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    bucket_s = serializers.IntegerField()
    points = RttPointSerializer(many=True)
