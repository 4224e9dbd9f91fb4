from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.serializers import ChoiceSerializer, StrictSerializer
from inventory.choices import (
    AGENT_STATUS_COLORS,
    CLOCK_SOURCES,
    MAX_CLOCK_ERROR_MS,
    REPORTED_SYSCTLS,
    TOKEN_STATE_COLORS,
    AddressFamily,
)
from inventory.models import Agent, EnrollmentToken
from inventory.public_keys import validate_rsa_public_key_pem
from inventory.services import AGENT_NAME_RE

MIN_TOKEN_LIFETIME_S = 60
MAX_TOKEN_LIFETIME_S = 30 * 24 * 3600


class EnrollmentTokenCreateSerializer(StrictSerializer):
    expires_in_s = serializers.IntegerField(
        min_value=MIN_TOKEN_LIFETIME_S, max_value=MAX_TOKEN_LIFETIME_S, default=3600
    )
    note = serializers.CharField(max_length=200, allow_blank=True, default="")
    agent_name = serializers.RegexField(
        AGENT_NAME_RE,
        max_length=63,
        default="",
        allow_blank=True,
        help_text="The only agent name the token may enrol; blank: any name not enrolled yet.",
        error_messages={"invalid": "1-63 characters of a-z, 0-9, '.', '-'"},
    )
    rekey = serializers.BooleanField(
        default=False,
        help_text="Issue the token for the enrolled agent agent_name: it replaces that agent's credential.",
    )


class EnrollmentTokenSerializer(serializers.ModelSerializer[EnrollmentToken]):
    state = serializers.SerializerMethodField()
    used_by: serializers.SlugRelatedField[Agent] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    rekey = serializers.SerializerMethodField()

    class Meta:
        model = EnrollmentToken
        fields = [
            "id",
            "prefix",
            "note",
            "agent_name",
            "rekey",
            "created_at",
            "expires_at",
            "used_at",
            "used_by",
            "revoked_at",
            "state",
        ]

    def get_rekey(self, token: EnrollmentToken) -> bool:
        return token.rekey_agent_id is not None

    @extend_schema_field(ChoiceSerializer)
    def get_state(self, token: EnrollmentToken) -> dict[str, str]:
        state = token.state()
        return {"value": state.value, "label": state.label, "color": TOKEN_STATE_COLORS[state]}


class IssuedTokenSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    token = serializers.CharField(help_text="Shown once; the server keeps only its SHA-256.")
    prefix = serializers.CharField()
    note = serializers.CharField()
    agent_name = serializers.CharField()
    rekey = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class EnrollRequestSerializer(StrictSerializer):
    token = serializers.CharField(max_length=200)
    name = serializers.RegexField(
        AGENT_NAME_RE, max_length=63, error_messages={"invalid": "1-63 characters of a-z, 0-9, '.', '-'"}
    )
    address = serializers.CharField(
        max_length=255,
        help_text="The one IP address peers probe: global, or in FATHOM_AGENT_ADDRESS_NETWORKS; no host names.",
    )
    other_addresses = serializers.ListField(
        child=serializers.CharField(max_length=255),
        max_length=1,
        default=list,
        help_text="Its address in its other family (a dual-stack agent's IPv6 beside its IPv4), checked as `address`;"
        " each family to each peer is a path of its own.",
    )
    agent_version = serializers.CharField(max_length=64, allow_blank=True, default="")


class EnrollResponseSerializer(serializers.Serializer[Any]):
    agent_id = serializers.UUIDField()
    name = serializers.CharField()
    credential = serializers.CharField(help_text="Shown once; send as 'Authorization: Agent <agent_id>:<credential>'.")


class InterfaceSerializer(StrictSerializer):
    name = serializers.CharField(max_length=64)
    mtu = serializers.IntegerField(min_value=0, max_value=1_000_000, allow_null=True, required=False)
    speed_mbps = serializers.IntegerField(min_value=0, max_value=100_000_000, allow_null=True, required=False)
    addresses = serializers.ListField(child=serializers.CharField(max_length=64), max_length=64, required=False)


class SysctlsField(serializers.DictField):
    """Only the TCP tuning sysctls Fathom reasons about; values as the kernel prints them."""

    child = serializers.CharField(max_length=200, allow_blank=True)

    def to_internal_value(self, data: Any) -> dict[str, str]:
        value: dict[str, str] = super().to_internal_value(data)
        unknown = sorted(set(value) - set(REPORTED_SYSCTLS))
        if unknown:
            raise serializers.ValidationError(f"unknown sysctls: {', '.join(unknown)}")
        return value


class JSONBooleanField(serializers.BooleanField):
    """true or false only: DRF's own also takes "yes", 1 and "on", which the contract refuses."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class JSONNumberField(serializers.FloatField):
    """A JSON number only: DRF's own also takes numeric strings and booleans."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        value: float = super().to_internal_value(data)
        return value


class ClockSerializer(StrictSerializer):
    """The host clock's synchronization; every field is required, so a clock is whole or refused."""

    synchronized = JSONBooleanField()
    max_error_ms = JSONNumberField(
        min_value=0, max_value=MAX_CLOCK_ERROR_MS, allow_null=True, help_text="null when the clock could not be read"
    )
    # DRF moves declared fields off the class, so this name does not clash with Field's own.
    source = serializers.ChoiceField(choices=CLOCK_SOURCES)  # type: ignore[assignment]
    readable = JSONBooleanField()


class HostFactsSerializer(StrictSerializer):
    collected_at = serializers.DateTimeField()
    agent_version = serializers.CharField(max_length=64, required=False, allow_blank=True)
    hostname = serializers.CharField(max_length=255, required=False, allow_blank=True)
    kernel = serializers.CharField(max_length=255, required=False, allow_blank=True)
    os = serializers.CharField(max_length=255, required=False, allow_blank=True)
    cpus = serializers.IntegerField(min_value=1, max_value=100_000, required=False)
    iperf3_version = serializers.CharField(max_length=64, required=False, allow_blank=True)
    iperf3_port = serializers.IntegerField(min_value=1, max_value=65535, required=False, allow_null=True)
    iperf3_public_key = serializers.CharField(
        max_length=4096,
        required=False,
        allow_null=True,
        trim_whitespace=False,
        validators=[validate_rsa_public_key_pem],
    )
    interfaces = InterfaceSerializer(many=True, required=False)
    sysctls = SysctlsField(required=False)
    clock = ClockSerializer(required=False, help_text="absent from agents older than the field")


class HostFactsResponseSerializer(serializers.Serializer[Any]):
    changed = serializers.BooleanField()


class AgentChangeSerializer(StrictSerializer):
    """What PATCH may change of an agent: its name, and its address when its host moved (its
    credential is its own)."""

    name = serializers.RegexField(
        AGENT_NAME_RE,
        max_length=63,
        required=False,
        error_messages={"invalid": "1-63 characters of a-z, 0-9, '.', '-'"},
    )
    address = serializers.CharField(
        max_length=255, required=False, help_text="where peers reach it; checked as at enrolment"
    )
    other_addresses = serializers.ListField(
        child=serializers.CharField(max_length=255),
        max_length=1,
        required=False,
        help_text="its address in its other family, or [] for none; checked as at enrolment",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError({"name": ["give a name or an address to change"]})
        return attrs


def family_query_field() -> serializers.ChoiceField:
    """One path's address family in a query: 4 (the default) or 6. A dual-stack pair is two
    paths, one per family."""
    return serializers.ChoiceField(
        choices=AddressFamily.choices,
        default=AddressFamily.IPV4,
        help_text="the path's address family: 4 (IPv4, the default) or 6 (IPv6)",
    )


def family_filter_field() -> serializers.ChoiceField:
    """An address family to filter by: every family when left out."""
    return serializers.ChoiceField(
        choices=AddressFamily.choices, required=False, help_text="only paths of this family: 4 (IPv4) or 6 (IPv6)"
    )


def family_field() -> serializers.IntegerField:
    """A path's address family in a response."""
    return serializers.IntegerField(help_text="the path's address family: 4 (IPv4) or 6 (IPv6)")


class AgentRefSerializer(serializers.Serializer[Any]):
    """An agent as other responses name it: a path's source or destination."""

    id = serializers.UUIDField()
    name = serializers.CharField()


class AgentSerializer(serializers.ModelSerializer[Agent]):
    status = serializers.SerializerMethodField()

    class Meta:
        model = Agent
        fields = [
            "id",
            "name",
            "kind",
            "address",
            "other_addresses",
            "status",
            "last_seen_at",
            "enrolled_at",
            "revoked_at",
            "decommissioned_at",
            "agent_version",
            "host_facts",
            "host_facts_at",
            "clock_offset_s",
            "spool_results",
            "spool_bytes",
        ]
        extra_kwargs = {
            "clock_offset_s": {"help_text": "the agent's clock less the server's when last seen (less the request's "
                               "one-way delay); null when the agent did not say"},
            "spool_results": {"help_text": "results waiting in the agent's spool when last seen"},
            "spool_bytes": {"help_text": "the bytes those results take on the agent's disk"},
        }  # fmt: skip

    @extend_schema_field(ChoiceSerializer)
    def get_status(self, agent: Agent) -> dict[str, str]:
        status = agent.status()
        return {"value": status.value, "label": status.label, "color": AGENT_STATUS_COLORS[status]}


TOKEN_AUDIT_FIELDS = ("prefix", "note", "agent_name", "rekey", "expires_at", "revoked_at")
AGENT_AUDIT_FIELDS = ("name", "address", "other_addresses", "revoked_at", "decommissioned_at")


def token_snapshot(token: EnrollmentToken) -> dict[str, Any]:
    """An enrolment token as the audit log keeps it (as the API writes it): never the token
    itself, only its prefix."""
    data = EnrollmentTokenSerializer(token).data
    return {key: data[key] for key in TOKEN_AUDIT_FIELDS}


def agent_snapshot(agent: Agent) -> dict[str, Any]:
    """An agent as the audit log keeps it: what an operator changes of it, as the API writes it."""
    data = AgentSerializer(agent).data
    return {key: data[key] for key in AGENT_AUDIT_FIELDS}
