from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from alerts.api.serializers import (
    AlertSummarySerializer,
    ChannelSerializer,
    CommentSerializer,
    CreatedChannelSerializer,
    DeliverySerializer,
    IncidentDetailSerializer,
    IncidentQuerySerializer,
    IncidentSerializer,
    RuleSerializer,
    SilenceSerializer,
)
from alerts.choices import AlertState, DeliveryStatus, IncidentStatus, NotificationKind
from alerts.models import Alert, Channel, Delivery, Incident, Rule, Silence
from alerts.services import delivery as outbox
from alerts.services import evaluate, messages
from alerts.tasks import deliver
from audit.api.mixins import AuditedWrites
from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from core.api.permissions import AdminWrites, OperatorWrites


def rule_snapshot(rule: Rule) -> dict[str, Any]:
    """A rule as the audit log keeps it: as its API writes it, without the save time that would
    make every save look like a change."""
    data = dict(RuleSerializer(rule).data)
    data.pop("updated_at", None)
    return data


def silence_snapshot(silence: Silence) -> dict[str, Any]:
    return dict(SilenceSerializer(silence).data)


def channel_snapshot(channel: Channel) -> dict[str, Any]:
    """A channel as the audit log keeps it. Its config (addresses, URLs, secrets) is never
    read back: only the masked target and a fingerprint, so a changed secret still shows as
    a change. Delivery state (last_error may quote a URL) is not a change anyone made."""
    data = dict(ChannelSerializer(channel).data)
    for key in ("config", "secret", "last_error", "last_success_at", "held_until"):
        data.pop(key, None)
    canonical = json.dumps(channel.config, sort_keys=True, separators=(",", ":")).encode()
    data["config_fingerprint"] = hashlib.sha256(canonical).hexdigest()[:12]
    return data


def _counted(queryset: QuerySet[Incident]) -> QuerySet[Incident]:
    return queryset.annotate(
        alert_count=Count("alerts", distinct=True),
        firing_count=Count("alerts", filter=Q(alerts__state=AlertState.FIRING), distinct=True),
    ).select_related("acknowledged_by", "resolved_by")


class IncidentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Incident]):
    """Incidents, newest first; acknowledge and resolve them."""

    permission_classes = [OperatorWrites]

    def get_serializer_class(self) -> type[IncidentSerializer]:
        return IncidentDetailSerializer if self.action == "retrieve" else IncidentSerializer

    def get_queryset(self) -> QuerySet[Incident]:
        queryset = _counted(Incident.objects.all())
        if self.action == "retrieve":
            return queryset.prefetch_related(
                Prefetch("alerts", queryset=Alert.objects.select_related("rule").order_by("started_at")),
                "events",
                Prefetch(
                    "deliveries", queryset=Delivery.objects.select_related("channel").prefetch_related("attempt_log")
                ),
            )
        query = IncidentQuerySerializer(data=self.request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        if "status" in params:
            queryset = queryset.filter(status=params["status"])
        if "severity" in params:
            queryset = queryset.filter(severity=params["severity"])
        if "agent" in params:
            queryset = queryset.filter(alerts__labels__agent__contains=[params["agent"]]).distinct()
        queryset = queryset.order_by("-opened_at")
        return queryset[:500] if self.action == "list" else queryset

    @extend_schema(parameters=[IncidentQuerySerializer])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def _act(self, request: Request, verb: Any) -> Response:
        params = CommentSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        incident = self.get_object()
        try:
            queued = verb(incident, request.user, params.validated_data["comment"], timezone.now())
        except evaluate.IncidentStateError as exc:
            raise ValidationError({"status": str(exc)}) from exc
        for delivery_id in queued or []:  # committed: the worker sends them
            deliver.delay(delivery_id)
        fresh = _counted(Incident.objects.filter(pk=incident.pk)).get()
        return Response(IncidentSerializer(fresh).data)

    @extend_schema(request=CommentSerializer, responses={200: IncidentSerializer})
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        return self._act(request, evaluate.acknowledge)

    @extend_schema(request=CommentSerializer, responses={200: IncidentSerializer})
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, pk: str | None = None) -> Response:
        return self._act(request, evaluate.resolve)


class SummaryView(APIView):
    """Counts for the top bar."""

    @extend_schema(responses={200: AlertSummarySerializer})
    def get(self, request: Request) -> Response:
        counts = {
            s: Incident.objects.filter(status=s).count() for s in (IncidentStatus.OPEN, IncidentStatus.ACKNOWLEDGED)
        }
        firing = Alert.objects.filter(state=AlertState.FIRING, silenced=False, inhibited=False).count()
        body = {
            "open": counts[IncidentStatus.OPEN],
            "acknowledged": counts[IncidentStatus.ACKNOWLEDGED],
            "firing_alerts": firing,
        }
        return Response(AlertSummarySerializer(body).data)


class RuleViewSet(AuditedWrites, viewsets.ModelViewSet[Rule]):
    """Alert rules: the defaults a fresh install has, and any a user writes."""

    permission_classes = [AdminWrites]
    serializer_class = RuleSerializer
    queryset = Rule.objects.all()
    audit_object = AuditObject.RULE

    def audit_snapshot(self, instance: Rule) -> dict[str, Any]:
        return rule_snapshot(instance)


class SilenceViewSet(
    AuditedWrites,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet[Silence],
):
    """Silences and recurring maintenance windows. Expired, never deleted: history stays."""

    permission_classes = [OperatorWrites]
    serializer_class = SilenceSerializer
    queryset = Silence.objects.all()
    audit_object = AuditObject.SILENCE

    def save_change(self, serializer: BaseSerializer[Silence]) -> Silence:
        return serializer.save(created_by=self.request.user.get_username())

    def audit_snapshot(self, instance: Silence) -> dict[str, Any]:
        return silence_snapshot(instance)

    @extend_schema(request=None, responses={200: SilenceSerializer})
    @action(detail=True, methods=["post"])
    def expire(self, request: Request, pk: str | None = None) -> Response:
        """Ends the silence now; it stays listed. Expiring an expired silence changes nothing."""
        found = self.get_object()
        with transaction.atomic():
            silence = Silence.objects.select_for_update().get(pk=found.pk)
            if silence.expired_at is None:
                before = silence_snapshot(silence)
                silence.expired_at = timezone.now()
                silence.save(update_fields=["expired_at"])
                record(
                    Actor.of(request),
                    AuditAction.EXPIRE,
                    AuditObject.SILENCE,
                    silence.pk,
                    str(silence),
                    before=before,
                    after=silence_snapshot(silence),
                )
        return Response(SilenceSerializer(silence).data)


class ChannelViewSet(AuditedWrites, viewsets.ModelViewSet[Channel]):
    """Where incidents go. Config (addresses, URLs, secrets) is written, never read back;
    a webhook's signing secret is shown once, in the create response."""

    permission_classes = [AdminWrites]
    serializer_class = ChannelSerializer
    queryset = Channel.objects.all()
    audit_object = AuditObject.CHANNEL

    def audit_snapshot(self, instance: Channel) -> dict[str, Any]:
        return channel_snapshot(instance)

    @extend_schema(responses={201: CreatedChannelSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = ChannelSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.perform_create(serializer)
        return Response(CreatedChannelSerializer(serializer.instance).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: CreatedChannelSerializer})
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """An edit; a webhook's new signing secret is shown in this answer when rotate_secret asked for one."""
        super().update(request, *args, **kwargs)  # valid, or it raised
        asked = request.data.get("rotate_secret", False) if isinstance(request.data, dict) else False
        rotated = serializers.BooleanField().to_internal_value(asked)  # as the serializer read it
        channel = self.get_object()
        return Response(CreatedChannelSerializer(channel, context={"show_secret": rotated}).data)

    @extend_schema(responses={200: CreatedChannelSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().partial_update(request, *args, **kwargs)

    def save_change(self, serializer: BaseSerializer[Channel]) -> Channel:
        # Editing a channel is how its owner fixes it: a permanent failure's block lifts, and so
        # does a receiver's Retry-After hold, for the channel and its waiting deliveries.
        if serializer.instance is None:
            return serializer.save()
        now = timezone.now()
        Delivery.objects.filter(
            channel=serializer.instance, status=DeliveryStatus.RETRYING, next_attempt_at__gt=now
        ).update(next_attempt_at=now)
        if serializer.validated_data.get("enabled", True):
            return serializer.save(disabled_reason="", next_send_at=None)
        return serializer.save(next_send_at=None)

    @extend_schema(request=None, responses={200: DeliverySerializer})
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        """Sends a test message now and shows what happened (no retries)."""
        channel = self.get_object()
        now = timezone.now()
        row = Delivery.objects.create(
            channel=channel,
            sequence=0,
            kind=NotificationKind.TEST,
            message=messages.test_message(channel.name, now),
            next_attempt_at=now,
        )
        if not channel.enabled:
            row.status, row.last_error = "failed", f"channel disabled: {channel.disabled_reason or 'by hand'}"
            row.save(update_fields=["status", "last_error"])
        else:
            outbox.deliver(row.pk, now=now)
        fresh = Delivery.objects.select_related("channel").prefetch_related("attempt_log").get(pk=row.pk)
        return Response(DeliverySerializer(fresh, context={"request": request}).data)
