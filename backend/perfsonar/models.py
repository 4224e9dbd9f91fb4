"""perfSONAR nodes and the pScheduler tasks Fathom keeps on them.

A node is an `inventory.Agent` of kind perfsonar (so meshes, paths, results and analysis
treat it as any member) plus a `Node` row: how to reach its pScheduler API and what the
last check found. A `Task` is one pScheduler task Fathom created on a node, with its URL,
so that every task can be renewed, found again and deleted: no orphan is left behind.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from inventory.models import Agent
from measurements.choices import TestType
from meshes.models import MeshTest, Slot
from perfsonar.choices import TaskState, TlsMode


class Node(models.Model):
    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="perfsonar_node", primary_key=True)
    # The pScheduler API base, e.g. https://ps.example.net/pscheduler
    api_url = models.URLField(max_length=300)
    tls_mode = models.CharField(max_length=16, choices=TlsMode.choices, default=TlsMode.SYSTEM)
    ca_bundle = models.TextField(blank=True)  # PEM, for tls_mode ca_bundle
    pinned_sha256 = models.CharField(max_length=64, blank=True)  # lower-case hex, for tls_mode pinned
    # Bumped to rotate the archive token (the token is derived, never stored).
    token_generation = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    # What the last check found.
    checked_at = models.DateTimeField(null=True, blank=True)
    reachable = models.BooleanField(null=True)
    api_level = models.IntegerField(null=True, blank=True)
    hostname = models.CharField(max_length=255, blank=True)
    tests = models.JSONField(default=list, blank=True)
    tools = models.JSONField(default=list, blank=True)
    archivers = models.JSONField(default=list, blank=True)
    clock_offset_s = models.FloatField(null=True, blank=True)  # node clock minus Fathom's
    clock_synchronized = models.BooleanField(null=True)
    # The last problem with the node (a check, a task refused, a poll), "" when none.
    last_error = models.CharField(max_length=2000, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    last_push_at = models.DateTimeField(null=True, blank=True)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    # A removal deletes the node's tasks from it in a worker (nodes.finish_removal): until it
    # is done the node is listed as being removed.
    removal_requested_at = models.DateTimeField(null=True, blank=True)
    removal_finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["agent__name"]

    def __str__(self) -> str:
        return f"perfSONAR node {self.agent_id} at {self.api_url}"


class Task(models.Model):
    """One pScheduler task on a node (the lead). Repeating tasks (rtt, trace) carry an
    `until` and are renewed before it; exclusive (throughput) ones run once, at their slot."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="tasks")
    # What the task measures, in Fathom's terms (the direction data flows).
    key = models.CharField(max_length=300)  # the desired-state key: test, path, slot
    mesh_test = models.ForeignKey(MeshTest, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    slot = models.ForeignKey(Slot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    test_type = models.CharField(max_length=32, choices=TestType.choices)
    source = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    target = models.CharField(max_length=255)
    test_id = models.CharField(max_length=200)  # the Fathom test id results carry
    body = models.JSONField()  # the task JSON posted, without secrets
    url = models.URLField(max_length=500, blank=True)  # the task on the node, once created
    state = models.CharField(max_length=16, choices=TaskState.choices, default=TaskState.ACTIVE)
    reason = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    starts_at = models.DateTimeField()
    until = models.DateTimeField()  # no run starts after this
    deleted_at = models.DateTimeField(null=True, blank=True)
    polled_until = models.DateTimeField(null=True, blank=True)  # runs before this were polled

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["state", "until"], name="pstask_state_until"),
            models.Index(fields=["node", "key"], name="pstask_node_key"),
        ]
        constraints = [models.UniqueConstraint(fields=["url"], condition=~models.Q(url=""), name="pstask_url_unique")]

    def __str__(self) -> str:
        return f"{self.test_type} task {self.url or '(not created)'}"
