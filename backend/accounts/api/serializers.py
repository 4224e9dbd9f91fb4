from __future__ import annotations

from typing import Any

from rest_framework import serializers

from fathom.serializers import ChoiceSerializer, StrictSerializer


class LoginSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


class UserSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class CsrfSerializer(serializers.Serializer[Any]):
    csrf_token = serializers.CharField()


class ChoicesSerializer(serializers.Serializer[Any]):
    agent_status = ChoiceSerializer(many=True)
    token_state = ChoiceSerializer(many=True)
    run_status = ChoiceSerializer(many=True)
    slot_state = ChoiceSerializer(many=True)
    diagnosis = ChoiceSerializer(many=True)
    rtt_mode_verdict = ChoiceSerializer(many=True)
    finding_state = ChoiceSerializer(many=True)
