from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin

from inventory.addresses import AddressError, agent_address
from inventory.models import Agent, EnrollmentToken, HostFactsSnapshot


class AgentAdminForm(forms.ModelForm[Agent]):
    """An agent's address is changed here, by an operator (an agent cannot move itself), and
    checked as at enrolment: every peer will probe it."""

    class Meta:
        model = Agent
        fields = ("name", "address", "enrolled_at", "last_seen_at", "revoked_at", "decommissioned_at", "agent_version")

    def clean_address(self) -> str:
        value: Any = self.cleaned_data["address"]
        try:
            return agent_address(str(value), settings.AGENT_ADDRESS_NETWORKS)
        except AddressError as exc:
            raise forms.ValidationError(str(exc)) from exc


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin[Agent]):
    form = AgentAdminForm
    list_display = ("name", "address", "last_seen_at", "revoked_at", "decommissioned_at", "agent_version")
    readonly_fields = ("credential_sha256", "host_facts", "host_facts_at")


@admin.register(EnrollmentToken)
class EnrollmentTokenAdmin(admin.ModelAdmin[EnrollmentToken]):
    list_display = ("prefix", "note", "created_at", "expires_at", "used_at", "revoked_at")
    readonly_fields = ("token_sha256",)


@admin.register(HostFactsSnapshot)
class HostFactsSnapshotAdmin(admin.ModelAdmin[HostFactsSnapshot]):
    list_display = ("agent", "collected_at", "received_at")
