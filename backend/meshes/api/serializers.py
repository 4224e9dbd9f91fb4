"""Shapes of the plan, for the OpenAPI schema (the plan itself is built in services)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class PeerSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    name = serializers.CharField()
    address = serializers.CharField()


class PlannedTestSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    type = serializers.CharField()
    interval_s = serializers.IntegerField()
    peer = PeerSerializer()
    spec = serializers.DictField()


class PlanSerializer(serializers.Serializer[Any]):
    schema_version = serializers.IntegerField()
    agent_id = serializers.UUIDField()
    version = serializers.CharField()
    generated_at = serializers.DateTimeField()
    valid_until = serializers.DateTimeField()
    upload_interval_s = serializers.IntegerField()
    host_facts_interval_s = serializers.IntegerField()
    tests = PlannedTestSerializer(many=True)
