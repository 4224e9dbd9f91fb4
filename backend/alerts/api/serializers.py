from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from alerts import cron, matchers, silences
from alerts.choices import Comparison, IncidentStatus, RuleKind, Severity, ThresholdMetric
from alerts.models import Alert, Channel, Delivery, DeliveryAttempt, Incident, IncidentEvent, Rule, Silence
from alerts.transports import TRANSPORTS, ConfigError
from analysis.choices import FindingMetric
from core.roles import Role, has_role
from core.serializers import StrictSerializer


class MatcherSerializer(serializers.Serializer[dict[str, str]]):
    name = serializers.ChoiceField(choices=matchers.LABEL_NAMES)
    op = serializers.ChoiceField(choices=matchers.OPS, default="=")
    value = serializers.CharField(max_length=200, allow_blank=True)


def _clean_matchers(value: Any) -> list[dict[str, str]]:
    try:
        parsed = matchers.parse(value)
    except matchers.MatcherError as exc:
        raise serializers.ValidationError(str(exc)) from exc
    return [{"name": m.name, "op": m.op, "value": m.value} for m in parsed]


class RuleSerializer(serializers.ModelSerializer[Rule]):
    scope = MatcherSerializer(many=True, required=False)

    class Meta:
        model = Rule
        fields = [
            "id", "name", "enabled", "kind", "metric", "comparison", "value", "k", "n", "scope", "severity",
            "pending_s", "hold_s", "description", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = ["created_at", "updated_at"]

    def validate_scope(self, value: Any) -> list[dict[str, str]]:
        return _clean_matchers(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        merged = {**({f: getattr(self.instance, f) for f in self.Meta.fields if hasattr(self.instance, f)}), **attrs}
        kind, metric = merged.get("kind"), merged.get("metric") or ""
        k, n = merged.get("k", 1), merged.get("n", 1)
        errors: dict[str, str] = {}
        if not 1 <= k <= n <= 100:
            errors["k"] = "need 1 <= k <= n <= 100 (k of the last n runs)"
        if kind == RuleKind.FINDING and metric not in ("", *FindingMetric.values):
            errors["metric"] = f"a finding rule follows one of: {', '.join(FindingMetric.values)} (or empty for all)"
        if kind == RuleKind.THRESHOLD:
            if metric not in ThresholdMetric.values:
                errors["metric"] = f"a threshold rule reads one of: {', '.join(ThresholdMetric.values)}"
            if merged.get("comparison") not in Comparison.values:
                errors["comparison"] = f"one of: {', '.join(Comparison.values)}"
            if merged.get("value") is None:
                errors["value"] = "a threshold rule needs a value"
        if kind in (RuleKind.AGENT_DOWN, RuleKind.NO_DATA) and metric:
            errors["metric"] = f"a {kind} rule has no metric"
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class SilenceSerializer(serializers.ModelSerializer[Silence]):
    matchers = MatcherSerializer(many=True)
    weekdays = serializers.ListField(child=serializers.IntegerField(), required=False, max_length=7)
    state = serializers.SerializerMethodField()

    class Meta:
        model = Silence
        fields = [
            "id", "matchers", "starts_at", "ends_at", "created_by", "comment", "weekdays", "window_start",
            "window_end", "time_zone", "cron", "duration_s", "created_at", "expired_at", "state",
        ]  # fmt: skip
        read_only_fields = ["created_by", "created_at", "expired_at"]
        extra_kwargs = {"comment": {"error_messages": {"blank": "say why (a ticket, the maintenance)"}}}

    def get_state(self, silence: Silence) -> str:
        return silences.state(silence, timezone.now())

    def validate_matchers(self, value: Any) -> list[dict[str, str]]:
        cleaned = _clean_matchers(value)
        if not cleaned:
            raise serializers.ValidationError("a silence needs at least one matcher (it would silence everything)")
        return cleaned

    def validate_comment(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("say why (a ticket, the maintenance)")
        return value

    def validate_weekdays(self, value: Any) -> list[int]:
        if not isinstance(value, list) or any(not isinstance(d, int) or not 1 <= d <= 7 for d in value):
            raise serializers.ValidationError("ISO weekdays, 1 (Monday) to 7 (Sunday)")
        return sorted(set(value))

    def validate_time_zone(self, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise serializers.ValidationError(f"unknown time zone {value!r} (an IANA name like Europe/Athens)") from exc
        return value

    def validate_cron(self, value: str) -> str:
        if value.strip():
            try:
                cron.parse(value)
            except cron.CronError as exc:
                raise serializers.ValidationError(str(exc)) from exc
        return value.strip()

    def validate_duration_s(self, value: int | None) -> int | None:
        if value is not None and not 60 <= value <= 86400:
            raise serializers.ValidationError("a maintenance window lasts 60 s to 24 h")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("cron")) != bool(attrs.get("duration_s")):
            raise serializers.ValidationError({"cron": "a cron window needs both cron and duration_s"})
        if attrs.get("cron") and attrs.get("weekdays"):
            raise serializers.ValidationError({"cron": "either weekdays with a daily window, or cron, not both"})
        starts, ends = attrs.get("starts_at"), attrs.get("ends_at")
        if starts and ends and ends <= starts:
            raise serializers.ValidationError({"ends_at": "must be after starts_at"})
        recurring = [attrs.get("weekdays"), attrs.get("window_start"), attrs.get("window_end")]
        if any(v not in (None, []) for v in recurring) and not all(v not in (None, []) for v in recurring):
            raise serializers.ValidationError(
                {"weekdays": "a maintenance window needs weekdays, window_start and window_end"}
            )
        if attrs.get("window_start") is not None and attrs.get("window_start") == attrs.get("window_end"):
            raise serializers.ValidationError({"window_end": "must differ from window_start"})
        return attrs


class ChannelSerializer(serializers.ModelSerializer[Channel]):
    config = serializers.JSONField(write_only=True)
    target = serializers.SerializerMethodField()
    matchers = MatcherSerializer(many=True, required=False)
    rotate_secret = serializers.BooleanField(
        write_only=True,
        required=False,
        help_text="webhooks: make a new signing secret, shown once in the answer. Without it an edit keeps the secret.",
    )
    held_until = serializers.SerializerMethodField(
        help_text="nothing is sent before this time: the receiver asked to wait (Retry-After, at most an hour) "
        "or the channel's pacing; null when not held. Editing the channel lifts it."
    )

    class Meta:
        model = Channel
        fields = [
            "id", "name", "kind", "config", "target", "matchers", "send_resolved", "enabled", "disabled_reason",
            "last_error", "last_success_at", "held_until", "created_at", "rotate_secret",
        ]  # fmt: skip
        read_only_fields = ["disabled_reason", "last_error", "last_success_at", "created_at"]

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_held_until(self, channel: Channel) -> datetime | None:
        held = channel.next_send_at
        return held if held is not None and held > timezone.now() else None

    def get_target(self, channel: Channel) -> str:
        return TRANSPORTS[channel.kind].target(channel.config)

    def validate_matchers(self, value: Any) -> list[dict[str, str]]:
        return _clean_matchers(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs.get("kind") or (self.instance.kind if self.instance else None)
        rotate = bool(attrs.pop("rotate_secret", False))
        if rotate and kind != "webhook":
            raise serializers.ValidationError({"rotate_secret": "only a webhook channel has a signing secret"})
        transport = TRANSPORTS.get(str(kind))
        if transport is None:
            raise serializers.ValidationError({"kind": f"no channel kind {kind!r}"})
        kept: dict[str, Any] = {}
        if self.instance is not None and self.instance.kind == kind:
            kept = {key: self.instance.config[key] for key in transport.secret_keys if self.instance.config.get(key)}
        if rotate:
            kept.pop("secret", None)
        if "config" in attrs or self.instance is None:
            raw = attrs.get("config")
            # An edit that leaves a secret out keeps it: nobody is shown a secret again, and a
            # new webhook secret nobody was shown would fail every receiver's signature check.
            if kept and isinstance(raw, dict):
                raw = {**raw, **{key: value for key, value in kept.items() if not raw.get(key)}}
            try:
                attrs["config"] = TRANSPORTS[str(kind)].clean_config(raw)
            except ConfigError as exc:
                raise serializers.ValidationError({"config": str(exc)}) from exc
        elif rotate and self.instance is not None:
            attrs["config"] = TRANSPORTS["webhook"].clean_config({**self.instance.config, "secret": None})
        if self.instance is not None and "kind" in attrs and attrs["kind"] != self.instance.kind:
            raise serializers.ValidationError({"kind": "a channel's kind cannot change: make a new channel"})
        return attrs


class CreatedChannelSerializer(ChannelSerializer):
    """The one time a webhook's signing secret is shown."""

    secret = serializers.SerializerMethodField()

    class Meta(ChannelSerializer.Meta):
        fields = [*ChannelSerializer.Meta.fields, "secret"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_secret(self, channel: Channel) -> str | None:
        """On create, and on an edit that rotated it; null otherwise."""
        secret = channel.config.get("secret")
        return secret if isinstance(secret, str) and self.context.get("show_secret", True) else None


class AlertSerializer(serializers.ModelSerializer[Alert]):
    rule = serializers.CharField(source="rule.name")
    severity = serializers.CharField(source="rule.severity")

    class Meta:
        model = Alert
        fields = [
            "id", "rule", "severity", "state", "silenced", "inhibited", "summary", "labels", "evidence", "advice",
            "value", "started_at", "firing_at", "last_true_at", "resolved_at", "finding_id",
        ]  # fmt: skip
        read_only_fields = fields


class IncidentEventSerializer(serializers.ModelSerializer[IncidentEvent]):
    class Meta:
        model = IncidentEvent
        fields = ["at", "kind", "actor", "text"]
        read_only_fields = fields


class DeliveryAttemptSerializer(serializers.ModelSerializer[DeliveryAttempt]):
    """A receiver's answer body is shown to admins (who set the channel up) only: a URL
    pointed at an internal service would otherwise read its pages back to every viewer."""

    class Meta:
        model = DeliveryAttempt
        fields = ["at", "ok", "status_code", "response", "error", "duration_ms"]
        read_only_fields = fields

    def to_representation(self, instance: DeliveryAttempt) -> dict[str, Any]:
        shown = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not has_role(request.user, Role.ADMIN):
            shown["response"] = ""
        return shown


class DeliverySerializer(serializers.ModelSerializer[Delivery]):
    channel = serializers.CharField(source="channel.name")
    channel_kind = serializers.CharField(source="channel.kind")
    attempt_log = DeliveryAttemptSerializer(many=True)

    class Meta:
        model = Delivery
        fields = [
            "id", "key", "channel", "channel_kind", "sequence", "kind", "status", "attempts", "next_attempt_at",
            "last_error", "created_at", "sent_at", "attempt_log",
        ]  # fmt: skip
        read_only_fields = fields


class IncidentSerializer(serializers.ModelSerializer[Incident]):
    acknowledged_by = serializers.SerializerMethodField()
    resolved_by = serializers.SerializerMethodField()
    alert_count = serializers.IntegerField(read_only=True)
    firing_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Incident
        fields = [
            "id", "group_key", "title", "cause", "status", "severity", "opened_at", "acknowledged_at",
            "acknowledged_by", "ack_comment", "resolved_at", "resolved_by", "last_notified_at", "alert_count",
            "firing_count",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_acknowledged_by(self, incident: Incident) -> str | None:
        return incident.acknowledged_by.get_username() if incident.acknowledged_by else None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_resolved_by(self, incident: Incident) -> str | None:
        return incident.resolved_by.get_username() if incident.resolved_by else None


class IncidentDetailSerializer(IncidentSerializer):
    alerts = AlertSerializer(many=True)
    events = IncidentEventSerializer(many=True)
    deliveries = DeliverySerializer(many=True)

    class Meta(IncidentSerializer.Meta):
        fields = [*IncidentSerializer.Meta.fields, "alerts", "events", "deliveries"]


class CommentSerializer(serializers.Serializer[dict[str, str]]):
    comment = serializers.CharField(max_length=2000, allow_blank=True, default="")


class AlertSummarySerializer(serializers.Serializer[dict[str, int]]):
    open = serializers.IntegerField()
    acknowledged = serializers.IntegerField()
    firing_alerts = serializers.IntegerField()


class IncidentQuerySerializer(StrictSerializer):
    """The incident list's filters: a CharField refuses NUL, which PostgreSQL's JSON cannot
    hold (an agent filter with one was a 500)."""

    status = serializers.ChoiceField(choices=IncidentStatus.choices, required=False)
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    agent = serializers.CharField(
        required=False, max_length=100, help_text="incidents with an alert involving this agent (by name)"
    )
