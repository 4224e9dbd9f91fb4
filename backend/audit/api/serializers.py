from __future__ import annotations

from typing import Any

from rest_framework import serializers

from audit.choices import AuditAction, AuditObject
from audit.models import AuditEntry
from core.serializers import StrictSerializer


class AuditEntrySerializer(serializers.ModelSerializer[AuditEntry]):
    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "at",
            "actor_name",
            "via",
            "action",
            "object_type",
            "object_key",
            "object_repr",
            "before",
            "after",
            "changes",
        ]


class AuditQuerySerializer(StrictSerializer):
    object_type = serializers.ChoiceField(choices=AuditObject.choices, required=False)
    object_key = serializers.CharField(max_length=64, required=False)
    action = serializers.ChoiceField(choices=AuditAction.choices, required=False)
    actor = serializers.CharField(max_length=150, required=False, help_text="the actor's username, exactly")
    q = serializers.CharField(max_length=200, required=False, help_text="text in the object's name")
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    before_id = serializers.IntegerField(
        min_value=1, required=False, help_text="entries older than this id: the next page"
    )
    limit = serializers.IntegerField(min_value=1, max_value=500, default=100)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "since" in attrs and "until" in attrs and attrs["since"] > attrs["until"]:
            raise serializers.ValidationError({"until": "must not be before since"})
        return attrs
