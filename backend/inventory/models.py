"""Agents, enrolment tokens and host-facts history.

Secrets are never stored: tokens and credentials are kept as SHA-256 digests of 256-bit
random values (a slow password hash adds nothing for secrets of that entropy).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from inventory.addresses import address_family
from inventory.choices import AddressFamily, AgentKind, AgentStatus, TokenState


def address_family_field() -> models.PositiveSmallIntegerField[int, int]:
    """A path's address family, part of every path key (a dual-stack pair is two paths); rows
    from before IPv6 are IPv4, as a database default too (raw inserts and COPY leave it out)."""
    return models.PositiveSmallIntegerField(
        choices=AddressFamily.choices, default=AddressFamily.IPV4, db_default=AddressFamily.IPV4
    )


class Agent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=63, unique=True)
    # A perfSONAR node is a mesh member like any agent (paths, results and analysis are the
    # same); it has no credential and never pulls a plan: Fathom drives its pScheduler.
    kind = models.CharField(max_length=16, choices=AgentKind.choices, default=AgentKind.FATHOM)
    # The address peers use to reach this agent (its iperf3 server, ping target).
    address = models.CharField(max_length=255)
    # Its addresses in its other families (a dual-stack agent's IPv6 beside its IPv4), one per
    # family: each family to each peer is a path of its own (inventory/addresses.py).
    other_addresses = ArrayField(models.CharField(max_length=255), default=list, blank=True)
    credential_sha256 = models.CharField(max_length=64)
    enrolled_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Retired for good: its results and history stay, its name stays taken, it is in no mesh.
    # Decommissioning also revokes, so every query that leaves revoked agents out leaves it out.
    decommissioned_at = models.DateTimeField(null=True, blank=True)
    agent_version = models.CharField(max_length=64, blank=True)
    host_facts = models.JSONField(null=True, blank=True)
    host_facts_at = models.DateTimeField(null=True, blank=True)
    # What the agent said of itself when last seen (inventory/agent_state.py); null where it
    # did not say. Its clock less the server's, and what waited in its spool.
    clock_offset_s = models.FloatField(null=True, blank=True)
    spool_results = models.IntegerField(null=True, blank=True)
    spool_bytes = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(decommissioned_at__isnull=True) | models.Q(revoked_at__isnull=False),
                name="agent_decommissioned_is_revoked",
                violation_error_message="a decommissioned agent stays revoked",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def addresses(self) -> list[str]:
        """Every address the agent measures from, its primary first."""
        return [self.address, *self.other_addresses]

    @property
    def families(self) -> list[int]:
        """The families it measures in (4, 6), its primary's first."""
        return [address_family(address) for address in self.addresses]

    def address_for(self, family: int) -> str | None:
        """Its address in that family; None when it has none there."""
        return next((address for address in self.addresses if address_family(address) == family), None)

    def address_in(self, family: int) -> str:
        """Its address in a path's family; its primary where it has none there (a
        single-address agent measured as before IPv6)."""
        return self.address_for(family) or self.address

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def status(self, now: datetime | None = None) -> AgentStatus:
        if self.decommissioned_at is not None:
            return AgentStatus.DECOMMISSIONED
        if self.revoked_at is not None:
            return AgentStatus.REVOKED
        if self.last_seen_at is None:
            return AgentStatus.NEVER_SEEN
        now = now or timezone.now()
        if (now - self.last_seen_at).total_seconds() > settings.AGENT_OFFLINE_AFTER_S:
            return AgentStatus.OFFLINE
        return AgentStatus.ONLINE


class EnrollmentToken(models.Model):
    token_sha256 = models.CharField(max_length=64, unique=True)
    # The first characters of the token, so an operator can tell tokens apart in lists.
    prefix = models.CharField(max_length=12)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The one agent name this token may enrol; blank: any name not enrolled yet.
    agent_name = models.CharField(max_length=63, blank=True)
    # A re-key token, issued for this enrolled agent: the only kind of token that replaces an
    # existing agent's credential (same id and history). None: the token enrols new agents only.
    rekey_agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.note or 'no note'})"

    def state(self, now: datetime | None = None) -> TokenState:
        if self.revoked_at is not None:
            return TokenState.REVOKED
        if self.used_at is not None:
            return TokenState.USED
        if self.expires_at <= (now or timezone.now()):
            return TokenState.EXPIRED
        return TokenState.ACTIVE


class HostFactsSnapshot(models.Model):
    """One row per change of an agent's host facts: tuning history for later analysis."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="host_facts_history")
    collected_at = models.DateTimeField()
    received_at = models.DateTimeField(default=timezone.now)
    facts = models.JSONField()
    digest = models.CharField(max_length=64)

    class Meta:
        ordering = ["agent", "-collected_at"]
        indexes = [models.Index(fields=["agent", "-collected_at"], name="hostfacts_agent_time")]

    def __str__(self) -> str:
        return f"{self.agent_id} facts at {self.collected_at:%Y-%m-%d %H:%M:%S}"
