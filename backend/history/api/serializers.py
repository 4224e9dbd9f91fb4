"""Query and response shapes of the path history API (the OpenAPI schema the UI's types come from)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.serializers import StrictSerializer
from history.buckets import RESOLUTION_NAMES
from inventory.api.serializers import AgentRefSerializer, family_field, family_query_field
from measurements.api.serializers import RttBucketSerializer


class HistoryQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_query_field()
    to = serializers.DateTimeField(required=False, help_text="the range's end (default: now; later is clipped to now)")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "from" is a Python keyword: it cannot be declared as a class attribute.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(required=False, help_text="the range's start (default: to - 24 h)")
        return fields


# Its own name keeps the HistoryRttPoint schema component; the fields are shared with targets'.
class HistoryRttPointSerializer(RttBucketSerializer):
    own_load = serializers.IntegerField(
        help_text="pings sent while one of Fathom's own throughput tests loaded either host: the queue "
        "that test built, not the path's; every other figure of the bucket leaves them out"
    )


class HistoryThroughputPointSerializer(serializers.Serializer[Any]):
    t = serializers.DateTimeField(help_text="the bucket's start")
    runs_ok = serializers.IntegerField()
    runs_failed = serializers.IntegerField(help_text="failed and missed runs")
    min_bps = serializers.FloatField(allow_null=True, help_text="of the ok runs' received rates")
    median_bps = serializers.FloatField(allow_null=True)
    max_bps = serializers.FloatField(allow_null=True)
    retransmits = serializers.IntegerField(allow_null=True, help_text="summed over the ok runs")


class HistoryDirectionSerializer(serializers.Serializer[Any]):
    rtt = HistoryRttPointSerializer(many=True)
    throughput = HistoryThroughputPointSerializer(many=True)


class PathHistorySerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    resolution = serializers.ChoiceField(choices=RESOLUTION_NAMES)
    bucket_s = serializers.IntegerField()
    to = serializers.DateTimeField()
    rtt = HistoryRttPointSerializer(many=True, help_text="pings from source to destination")
    throughput = HistoryThroughputPointSerializer(many=True, help_text="runs whose data flowed source -> destination")
    reverse = HistoryDirectionSerializer(help_text="the same from destination to source")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField()
        return fields
