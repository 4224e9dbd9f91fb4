from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.serializers import StrictSerializer


class LoginSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class UserSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class CsrfSerializer(serializers.Serializer[Any]):
    csrf_token = serializers.CharField()
