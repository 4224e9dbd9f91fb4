from __future__ import annotations

from typing import Any

from rest_framework import serializers

# DRF moves declared fields off the class, so field names such as "source" and "errors" do
# not clash with the Field/Serializer attributes of the same name; the stubs cannot know.
from core.serializers import StrictSerializer
from inventory.api.serializers import AgentRefSerializer, family_field, family_query_field
from measurements.choices import RunStatus, TestType
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
    family = family_field()
    test_types = serializers.ListField(child=serializers.CharField())
    last_run_at = serializers.DateTimeField()
    last_status = serializers.CharField()


class RttQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_query_field()
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
    family = family_field()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    bucket_s = serializers.IntegerField()
    points = RttPointSerializer(many=True)


class PathLatencyPointSerializer(serializers.Serializer[Any]):
    time = serializers.DateTimeField(help_text="the bucket's start")
    sent = serializers.IntegerField(help_text="test packets sent")
    answered = serializers.IntegerField()
    forward_lost = serializers.IntegerField(help_text="lost from source to destination")
    backward_lost = serializers.IntegerField(
        allow_null=True, help_text="answers lost from destination to source; null: one-way-only tests (OWAMP)"
    )
    forward_loss_fraction = serializers.FloatField(allow_null=True, help_text="forward_lost / sent")
    backward_loss_fraction = serializers.FloatField(
        allow_null=True,
        help_text="backward_lost / (sent - forward_lost): of the packets that reached the destination",
    )
    forward_min_ms = serializers.FloatField(allow_null=True, help_text="one-way delay, source to destination")
    forward_p50_ms = serializers.FloatField(allow_null=True, help_text="the median of the intervals' medians")
    forward_p90_ms = serializers.FloatField(allow_null=True)
    forward_p99_ms = serializers.FloatField(allow_null=True)
    forward_max_ms = serializers.FloatField(allow_null=True)
    backward_min_ms = serializers.FloatField(allow_null=True, help_text="one-way delay, destination to source")
    backward_p50_ms = serializers.FloatField(allow_null=True)
    backward_p90_ms = serializers.FloatField(allow_null=True)
    backward_p99_ms = serializers.FloatField(allow_null=True)
    backward_max_ms = serializers.FloatField(allow_null=True)
    round_trip_min_ms = serializers.FloatField(allow_null=True, help_text="without the reflector's own time")
    round_trip_p50_ms = serializers.FloatField(allow_null=True)
    round_trip_p99_ms = serializers.FloatField(allow_null=True)
    clock_error_ms = serializers.FloatField(
        allow_null=True, help_text="the largest sender + reflector declared clock error; null: nothing answered"
    )
    one_way_trusted = serializers.BooleanField(
        help_text="every interval with an answer had both clocks synchronised and clock_error_ms within the limit"
    )
    loaded = serializers.BooleanField(
        help_text="an interval overlapped one of Fathom's own throughput tests on either host: no baseline"
    )


class PathLatencySeriesSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    bucket_s = serializers.IntegerField()
    clock_error_limit_ms = serializers.FloatField(help_text="FATHOM_LATENCY_CLOCK_ERROR_LIMIT_MS")
    points = PathLatencyPointSerializer(many=True)


class RunQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_query_field()
    status = serializers.ChoiceField(
        choices=["failed", "ok", "all"],
        default="all",
        help_text="failed: every run that did not measure (failed or missed)",
    )
    test_type = serializers.CharField(max_length=32, required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=100)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        since, until = attrs.get("since"), attrs.get("until")
        if since is not None and until is not None and since >= until:
            raise serializers.ValidationError({"since": ["since must be before until"]})
        return attrs


# No docstring: drf-spectacular would give it to every subclass's schema component as its description.
class RttBucketSerializer(serializers.Serializer[Any]):
    t = serializers.DateTimeField(help_text="the bucket's start")
    min = serializers.FloatField(allow_null=True, help_text="RTT in ms, of the replies in the bucket")
    p10 = serializers.FloatField(allow_null=True)
    p50 = serializers.FloatField(allow_null=True)
    p90 = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)
    count = serializers.IntegerField(help_text="replies")
    sent = serializers.IntegerField()
    lost = serializers.IntegerField()
    loss = serializers.FloatField(help_text="lost / sent")


class RunRowSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    test_type = serializers.ChoiceField(choices=TestType.choices)
    test_id = serializers.CharField()
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    error = serializers.CharField()


class RouteQuerySerializer(StrictSerializer):
    source = serializers.UUIDField()  # type: ignore[assignment]
    destination = serializers.UUIDField()
    family = family_query_field()
    start = serializers.DateTimeField(required=False, help_text="default: 7 days before end")
    end = serializers.DateTimeField(required=False, help_text="default: now")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("start"), attrs.get("end")
        if start is not None and end is not None and start >= end:
            raise serializers.ValidationError({"start": ["start must be before end"]})
        return attrs


class RouteHopSerializer(serializers.Serializer[Any]):
    ttl = serializers.IntegerField()
    address = serializers.CharField(allow_null=True, help_text="null: no probe of this hop was answered")
    other_addresses = serializers.ListField(child=serializers.CharField())
    rtt_ms = serializers.FloatField(allow_null=True)
    hostname = serializers.CharField(allow_null=True)
    asn = serializers.IntegerField(allow_null=True)
    as_owner = serializers.CharField(allow_null=True)
    mtu = serializers.IntegerField(allow_null=True)


class RouteSerializer(serializers.Serializer[Any]):
    label = serializers.CharField()  # type: ignore[assignment]
    fingerprint = serializers.CharField()
    reached = serializers.BooleanField()
    hops = RouteHopSerializer(many=True)
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    runs = serializers.IntegerField()
    flows = serializers.IntegerField()
    latest_flows = serializers.IntegerField(help_text="flows of the newest trace run on this route")
    path_mtu = serializers.IntegerField(allow_null=True)
    unanswered_hops = serializers.IntegerField()


class RouteRunSerializer(serializers.Serializer[Any]):
    time = serializers.DateTimeField()
    run_id = serializers.UUIDField()
    flows = serializers.DictField(child=serializers.IntegerField(), help_text="route label -> flows")


class RouteChangeSerializer(serializers.Serializer[Any]):
    time = serializers.DateTimeField()
    added = serializers.ListField(child=serializers.CharField())
    removed = serializers.ListField(child=serializers.CharField())


class PathRoutesSerializer(serializers.Serializer[Any]):
    source = AgentRefSerializer()  # type: ignore[assignment]
    destination = AgentRefSerializer()
    family = family_field()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    routes = RouteSerializer(many=True)
    runs = RouteRunSerializer(many=True)
    changes = RouteChangeSerializer(many=True)
    truncated = serializers.BooleanField(
        help_text="the range holds more trace runs than are read: the oldest are left out"
    )
