"""Agents, enrolment tokens and host facts in the admin site, to read only: agents move,
are renamed, revoked and decommissioned through the Agents API, which checks and audits it
(core.admin)."""

from django.contrib import admin

from core.admin import ReadOnlyAdmin
from inventory.models import Agent, EnrollmentToken, HostFactsSnapshot


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin, admin.ModelAdmin[Agent]):
    list_display = ("name", "address", "last_seen_at", "revoked_at", "decommissioned_at", "agent_version")
    readonly_fields = ("credential_sha256", "host_facts", "host_facts_at")


@admin.register(EnrollmentToken)
class EnrollmentTokenAdmin(ReadOnlyAdmin, admin.ModelAdmin[EnrollmentToken]):
    list_display = ("prefix", "note", "created_at", "expires_at", "used_at", "revoked_at")
    readonly_fields = ("token_sha256",)


@admin.register(HostFactsSnapshot)
class HostFactsSnapshotAdmin(ReadOnlyAdmin, admin.ModelAdmin[HostFactsSnapshot]):
    list_display = ("agent", "collected_at", "received_at")
