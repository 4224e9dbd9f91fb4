"""The audit log: append-only rows, each a change with its actor and its before and after."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from audit.choices import AuditAction, AuditObject


class AuditEntry(models.Model):
    at = models.DateTimeField(default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as written: the log still names a person whose account is gone.
    actor_name = models.CharField(max_length=150)
    # How the actor acted: "session", "token fpt_abcdefgh", "command".
    via = models.CharField(max_length=40)
    action = models.CharField(max_length=16, choices=AuditAction.choices)
    object_type = models.CharField(max_length=20, choices=AuditObject.choices)
    # The object's stable key (a primary key), so its history survives a rename.
    object_key = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    # The object as its API writes it, before and after; None where it did not exist.
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # {dotted field: [old, new]} of what differs between before and after.
    changes = models.JSONField(default=dict)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["object_type", "object_key", "-at"], name="audit_object_time"),
            models.Index(fields=["-at"], name="audit_time"),
            models.Index(fields=["actor_name", "-at"], name="audit_actor_time"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.object_type} {self.object_repr}"
