"""Meshes (groups of agents, as pSConfig has them), their tests and schedules, and the slots
the central planner reserves for exclusive (throughput) runs."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from inventory.models import Agent, address_family_field
from measurements.choices import TestType
from meshes.choices import MemberSide, MeshKind, SlotState
from meshes.names import NAME_MAX


class Mesh(models.Model):
    name = models.SlugField(max_length=NAME_MAX, unique=True)
    description = models.CharField(max_length=500, blank=True)
    kind = models.CharField(max_length=16, choices=MeshKind.choices, default=MeshKind.MESH)
    # Every active agent is a member (the default mesh): new agents join without an edit.
    all_agents = models.BooleanField(default=False)
    # disjoint meshes: test only A -> B, not back (pSConfig's "unidirectional").
    unidirectional = models.BooleanField(default=False)
    # list meshes: the external hosts every member tests to.
    targets = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    # Served as a pSConfig template, without sign-in, at /psconfig/<name>.json (for perfSONAR
    # nodes that subscribe to it); off by default: a mesh lists its hosts' addresses.
    psconfig_published = models.BooleanField(default=False)
    # The grid's colour thresholds an operator set, only the keys set (meshes.thresholds has
    # the defaults and the checks).
    thresholds = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class MeshMember(models.Model):
    mesh = models.ForeignKey(Mesh, on_delete=models.CASCADE, related_name="members")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="mesh_memberships")
    side = models.CharField(max_length=1, choices=MemberSide.choices, default=MemberSide.A)

    class Meta:
        ordering = ["mesh", "side", "agent__name"]
        constraints = [models.UniqueConstraint(fields=["mesh", "agent"], name="mesh_member_unique")]

    def __str__(self) -> str:
        return f"{self.mesh_id}: {self.agent_id} ({self.side})"


class MeshTest(models.Model):
    """One test of a mesh: its type, options and schedule (interval with slip, as pSConfig)."""

    mesh = models.ForeignKey(Mesh, on_delete=models.CASCADE, related_name="tests")
    name = models.SlugField(max_length=NAME_MAX)
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    spec = models.JSONField(default=dict, blank=True)
    interval_s = models.PositiveIntegerField()
    # A run may start anywhere in [period start, period start + slip_s], chosen at random.
    slip_s = models.PositiveIntegerField(default=0)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["mesh", "name"]
        constraints = [models.UniqueConstraint(fields=["mesh", "name"], name="mesh_test_name_unique")]

    def __str__(self) -> str:
        return f"{self.mesh_id}/{self.name} ({self.test_type})"


class Slot(models.Model):
    """One planned exclusive run on one directed path, and what became of it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    mesh_test = models.ForeignKey(MeshTest, null=True, on_delete=models.SET_NULL, related_name="slots")
    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    # The path's address family: a dual-stack pair's IPv4 and IPv6 runs are slots of their own.
    family = address_family_field()
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    period_start = models.DateTimeField()
    start_at = models.DateTimeField()
    # The end of the reservation: test length, omit and a margin; nothing else uses either
    # agent's exclusive time until then.
    end_at = models.DateTimeField()
    spec = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=SlotState.choices, default=SlotState.PLANNED)
    reason = models.CharField(max_length=500, blank=True)
    run_id = models.UUIDField(null=True, blank=True)
    planned_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["start_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["mesh_test", "source", "destination", "family", "period_start"], name="slot_period_unique"
            )
        ]
        indexes = [
            models.Index(fields=["source", "start_at"], name="slot_source_time"),
            models.Index(fields=["destination", "start_at"], name="slot_destination_time"),
            models.Index(fields=["state", "end_at"], name="slot_state_end"),
        ]

    def __str__(self) -> str:
        return f"{self.test_type} {self.source_id} -> {self.destination_id} at {self.start_at:%Y-%m-%d %H:%M:%S}"


class PlannerState(models.Model):
    """How far ahead exclusive slots are planned (one row)."""

    planned_until = models.DateTimeField()

    def __str__(self) -> str:
        return f"planned until {self.planned_until}"


class IssuedPlan(models.Model):
    """A plan version as served to an agent, with the background paths it asked for, so a
    result measured under it is judged by it: an agent spools results through outages and a
    mesh edit in between must not turn what it was asked to measure into refused results."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=64)
    # [[peer agent id or "", external target or "", test type], ...]
    paths = models.JSONField(default=list)
    issued_at = models.DateTimeField(default=timezone.now)
    last_served_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "version"], name="issued_plan_unique")]
        indexes = [models.Index(fields=["last_served_at"], name="issued_plan_served")]

    def __str__(self) -> str:
        return f"plan {self.version} of {self.agent_id}"
