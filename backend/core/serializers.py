"""Serializer building blocks shared by the apps."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictSerializer(serializers.Serializer[Any]):
    """Refuses unknown keys instead of silently dropping them: a typo is an error."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({key: ["unknown field"] for key in unknown})
        return super().to_internal_value(data)


class ChoiceSerializer(serializers.Serializer[Any]):
    """A choice as the UI shows it: value, label and colour (never hard-coded in the UI)."""

    value = serializers.CharField()
    # DRF moves declared fields off the class, so these names do not clash with Field's own.
    label = serializers.CharField()  # type: ignore[assignment]
    color = serializers.CharField()
