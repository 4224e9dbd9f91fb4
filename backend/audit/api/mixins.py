"""Audited writes for model viewsets: create, update and destroy each leave their audit row
in the transaction of the change, so a viewset states only what it audits and how."""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from rest_framework.generics import GenericAPIView
from rest_framework.serializers import BaseSerializer

from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record


class AuditedWrites(GenericAPIView[Any]):
    """Mixed into a ModelViewSet before it. `audit_object` names the kind of object and
    `audit_snapshot` gives an instance as the log keeps it (secrets left out); `save_change`
    is where a viewset adds fields of its own to a save."""

    audit_object: AuditObject

    def audit_snapshot(self, instance: Any) -> dict[str, Any]:
        raise NotImplementedError

    def save_change(self, serializer: BaseSerializer[Any]) -> Any:
        return serializer.save()

    def _record(self, action: AuditAction, instance: Any, before: Any, after: Any) -> None:
        record(Actor.of(self.request), action, self.audit_object, instance.pk, str(instance), before, after)

    def perform_create(self, serializer: BaseSerializer[Any]) -> None:
        with transaction.atomic():
            instance = self.save_change(serializer)
            self._record(AuditAction.CREATE, instance, None, self.audit_snapshot(instance))

    def perform_update(self, serializer: BaseSerializer[Any]) -> None:
        assert serializer.instance is not None
        with transaction.atomic():
            before = self.audit_snapshot(serializer.instance)
            instance = self.save_change(serializer)
            self._record(AuditAction.UPDATE, instance, before, self.audit_snapshot(instance))

    def perform_destroy(self, instance: models.Model) -> None:
        with transaction.atomic():
            before = self.audit_snapshot(instance)
            pk = instance.pk
            instance.delete()
            instance.pk = pk  # the row's key, for the log
            self._record(AuditAction.DELETE, instance, before, None)
