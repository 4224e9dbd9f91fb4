"""Registering perfSONAR nodes, checking them, and removing them.

A node is checked when it is registered, on a beat, and on demand: is its API reachable
(with the trust the operator chose), which API level, tests, tools and archivers does it
offer, and how far is its clock from Fathom's. pScheduler schedules every run at an agreed
absolute time and needs clocks within a second or two, so a larger offset is a problem the
Agents page shows, as is a node without iperf3 or the http archiver.
"""

from __future__ import annotations

import hashlib
import re
import socket
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from audit.choices import AuditAction, AuditObject
from audit.services import Actor, record
from inventory.addresses import AddressError, agent_address
from inventory.choices import AgentKind
from inventory.models import Agent
from inventory.services import AGENT_NAME_RE, decommission_agent, decommissioned_name_message
from perfsonar.choices import MAY_BE_ON_NODE, TaskState, TlsMode
from perfsonar.client import PSchedulerClient, PSchedulerError, Trust
from perfsonar.models import Node, Task
from perfsonar.sync_lock import deadline, sync_lock

FINGERPRINT_RE = re.compile(r"^[0-9a-f]{64}$")
# What Fathom asks of a node for each of its test kinds (pScheduler test, preferred tool).
NEEDED_TESTS = {"throughput": "iperf3", "rtt": "ping", "trace": ""}


class NodeError(Exception):
    """The node cannot be registered or changed as asked; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def normalize_fingerprint(value: str) -> str:
    """A SHA-256 fingerprint as `openssl x509 -fingerprint -sha256` prints it, or as hex."""
    hex_digits = value.strip().lower().replace(":", "").replace(" ", "")
    if not FINGERPRINT_RE.match(hex_digits):
        raise NodeError("pinned_sha256", "a SHA-256 fingerprint is 64 hex digits (colons allowed)")
    return hex_digits


def normalize_api_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment or parts.username:
        raise NodeError("api_url", "the pScheduler API is https://host[:port]/pscheduler")
    path = parts.path.rstrip("/") or "/pscheduler"
    port = f":{parts.port}" if parts.port else ""
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"https://{host}{port}{path}"


def resolve_address(api_url: str, address: str) -> str:
    """The address Fathom agents probe the node at: as given, else the API host's address.
    Names are resolved once, here: a stored name could be re-pointed after the check."""
    candidate = address.strip()
    if not candidate:
        host = urlsplit(api_url).hostname or ""
        try:
            candidate = str(socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)[0][4][0])
        except (OSError, IndexError) as error:
            raise NodeError("address", f"{host!r} does not resolve ({error}); give the node's address") from None
    try:
        return agent_address(str(candidate), settings.AGENT_ADDRESS_NETWORKS)
    except AddressError as error:
        raise NodeError("address", str(error)) from None


def trust_settings(tls_mode: str, ca_bundle: str, pinned_sha256: str) -> tuple[str, str]:
    """The CA bundle and pin that go with a TLS mode (the others emptied)."""
    if tls_mode not in TlsMode.values:
        raise NodeError("tls_mode", f"one of {', '.join(TlsMode.values)}")
    if tls_mode == TlsMode.PINNED:
        return "", normalize_fingerprint(pinned_sha256)
    if tls_mode == TlsMode.CA_BUNDLE:
        if "-----BEGIN CERTIFICATE-----" not in ca_bundle or len(ca_bundle) > 200_000:
            raise NodeError("ca_bundle", "a CA bundle is PEM certificates (-----BEGIN CERTIFICATE-----), under 200 kB")
        return ca_bundle.strip() + "\n", ""
    return "", ""


def node_snapshot(node: Node) -> dict[str, Any]:
    """A node as the audit log keeps it: what an operator sets (never the CA bundle's text)."""
    return {
        "name": node.agent.name,
        "kind": AgentKind.PERFSONAR,
        "address": node.agent.address,
        "api_url": node.api_url,
        "tls_mode": node.tls_mode,
        "pinned_sha256": node.pinned_sha256,
        "ca_bundle_sha256": hashlib.sha256(node.ca_bundle.encode()).hexdigest()[:16] if node.ca_bundle else "",
    }


def register_node(
    name: str,
    api_url: str,
    address: str = "",
    tls_mode: str = TlsMode.SYSTEM,
    ca_bundle: str = "",
    pinned_sha256: str = "",
    actor: Actor | None = None,
) -> Node:
    """A new node (an agent of kind perfsonar with its Node row). Not checked here: the
    caller checks it after the commit, so a down node is registered with its error."""
    if not AGENT_NAME_RE.match(name):
        raise NodeError("name", "a name is 1-63 characters of a-z, 0-9, '.', '-'")
    url = normalize_api_url(api_url)
    resolved = resolve_address(url, address)
    bundle, pin = trust_settings(tls_mode, ca_bundle, pinned_sha256)
    existing = Agent.objects.filter(name=name).first()
    if existing is not None:
        if existing.decommissioned_at is not None:
            raise NodeError("name", decommissioned_name_message(name))
        raise NodeError("name", f"{name!r} is taken by another {existing.get_kind_display()}")
    try:
        with transaction.atomic():
            agent = Agent.objects.create(name=name, kind=AgentKind.PERFSONAR, address=resolved, credential_sha256="")
            node = Node.objects.create(agent=agent, api_url=url, tls_mode=tls_mode, ca_bundle=bundle, pinned_sha256=pin)
            record(
                actor or Actor.command(),
                AuditAction.CREATE,
                AuditObject.AGENT,
                agent.pk,
                name,
                after=node_snapshot(node),
            )
    except IntegrityError:
        raise NodeError("name", f"{name!r} is taken") from None
    return node


def update_node(node: Node, changes: dict[str, Any], actor: Actor) -> Node:
    """Changes where and how to reach a node; its tasks follow at the next reconcile."""
    before = node_snapshot(node)
    if "api_url" in changes:
        node.api_url = normalize_api_url(changes["api_url"])
    if "address" in changes:
        node.agent.address = resolve_address(node.api_url, changes["address"])
    if {"tls_mode", "ca_bundle", "pinned_sha256"} & changes.keys():
        mode = changes.get("tls_mode", node.tls_mode)
        node.ca_bundle, node.pinned_sha256 = trust_settings(
            mode, changes.get("ca_bundle", node.ca_bundle), changes.get("pinned_sha256", node.pinned_sha256)
        )
        node.tls_mode = mode
    with transaction.atomic():
        node.agent.save(update_fields=["address"])
        node.save()
        record(
            actor,
            AuditAction.UPDATE,
            AuditObject.AGENT,
            node.agent.pk,
            node.agent.name,
            before=before,
            after=node_snapshot(node),
        )
    return node


def client_for(node: Node) -> PSchedulerClient:
    trust = Trust(node.tls_mode, node.ca_bundle, node.pinned_sha256)
    return PSchedulerClient(node.api_url, trust, float(settings.PERFSONAR_HTTP_TIMEOUT_S))


def note_error(node: Node, message: str, now: datetime | None = None) -> None:
    # Whatever the message quotes from the node, it must be storable (no NUL in text).
    text = message.replace("\x00", "\ufffd")[:2000]
    Node.objects.filter(pk=node.pk).update(last_error=text, last_error_at=now or timezone.now())


def check_node(node: Node, now: Callable[[], datetime] = timezone.now) -> Node:
    """Asks the node what it is and offers, and how far its clock is; records the answer
    (or why there was none) on the node."""
    checked_at = now()
    fields: dict[str, Any] = {"checked_at": checked_at}
    try:
        client = client_for(node)
        fields["api_level"] = client.api_level()
        fields["hostname"] = client.hostname()[:255]
        fields["tests"] = client.names("tests")
        fields["tools"] = client.names("tools")
        fields["archivers"] = client.names("archivers")
        clock = client.clock(now)
        fields["clock_offset_s"] = round(clock.offset_s, 3)
        fields["clock_synchronized"] = clock.synchronized
        fields["reachable"] = True
        fields["last_error"] = ""
        fields["last_error_at"] = None
    except PSchedulerError as error:
        fields["reachable"] = error.kind not in ("unreachable", "tls")
        fields["last_error"] = f"check failed: {error}"[:2000]
        fields["last_error_at"] = checked_at
    Node.objects.filter(pk=node.pk).update(**fields)
    if fields["reachable"]:
        Agent.objects.filter(pk=node.pk).update(last_seen_at=checked_at)
    node.refresh_from_db()
    node.agent.refresh_from_db()
    return node


# The task states a node's row counts, each with the attribute with_task_counts() adds.
COUNTED_STATES = tuple(
    (state, f"{state.value}_task_count") for state in (TaskState.ACTIVE, TaskState.REFUSED, TaskState.UNANSWERED)
)


def with_task_counts(nodes: QuerySet[Node]) -> QuerySet[Node]:
    """Nodes with their task counts per state, counted in the database: the records of tasks
    that are over (thousands a day in a mixed mesh) are never loaded."""
    return nodes.annotate(**{field: Count("tasks", filter=Q(tasks__state=state)) for state, field in COUNTED_STATES})


def node_problems(node: Node) -> list[str]:
    """What stands between this node and measuring, in sentences for the Agents page."""
    if node.checked_at is None:
        return ["not checked yet"]
    problems = []
    if node.last_error:
        problems.append(node.last_error)
    if node.reachable:
        offset = node.clock_offset_s
        if offset is not None and abs(offset) > settings.PERFSONAR_MAX_CLOCK_OFFSET_S:
            problems.append(
                f"its clock is {offset:+.1f} s from Fathom's: pScheduler needs clocks within"
                f" ±{settings.PERFSONAR_MAX_CLOCK_OFFSET_S:g} s (runs become missed or non-starters)"
            )
        if node.clock_synchronized is False:
            problems.append("it says its clock is not synchronized (check NTP or chrony on the node)")
        for test, tool in NEEDED_TESTS.items():
            if test not in node.tests:
                problems.append(f"it offers no {test} test")
            elif tool and tool not in node.tools:
                problems.append(f"it has no {tool} tool for {test}")
        if "http" not in node.archivers:
            problems.append("it has no http archiver: results can only be polled")
    return problems


# How long a node's removal waits for a sync that is running (a sync ends by its deadline,
# sync_lock.SYNC_DEADLINE_S, so this is rarely reached).
REMOVE_WAIT_S = 60


def request_removal(node: Node, actor: Actor, queue: bool = True) -> Node:
    """Decommissions the node at once (out of every mesh, its archive token dead, its results
    kept) and leaves the deletion of its tasks from the node to a worker (finish_removal): a
    node with many tasks, or a slow one, would hold the web request past its timeout. The
    node is listed as being removed until then."""
    with transaction.atomic():
        before = node_snapshot(node)
        decommission_agent(node.agent)
        node.removal_requested_at = timezone.now()
        node.save(update_fields=["removal_requested_at"])
        record(
            actor,
            AuditAction.DECOMMISSION,
            AuditObject.AGENT,
            node.agent.pk,
            node.agent.name,
            before=before,
            after={**before, "decommissioned_at": node.agent.decommissioned_at},
        )
        if queue:
            transaction.on_commit(lambda: _queue_removal(node.pk))
    return node


def _queue_removal(node_id: uuid.UUID) -> None:
    from perfsonar.tasks import finish_perfsonar_node_removal  # the tasks module imports this one

    finish_perfsonar_node_removal.delay(str(node_id))


def finish_removal(node: Node) -> list[str]:
    """Deletes the node's tasks from it (best effort: what failed is returned, noted on the
    node and left to the syncs, which delete a decommissioned node's tasks too). Waits for a
    running sync first: a task it was creating meanwhile would otherwise be left on the node."""
    with sync_lock(wait_s=REMOVE_WAIT_S) as held:
        failures = delete_all_tasks(node, deadline())
        if not held:
            failures.append(f"a sync with the nodes ran for over {REMOVE_WAIT_S} s: the next one deletes what it left")
        now = timezone.now()
        if failures:
            more = f" (and {len(failures) - 1} more)" if failures[1:] else ""
            note_error(node, f"removal: {failures[0]}{more}", now)
        Node.objects.filter(pk=node.pk).update(removal_finished_at=now)
    return failures


def remove_node(node: Node, actor: Actor) -> list[str]:
    """The whole removal in the caller's thread (commands, tests): decommission, then delete
    the node's tasks from it."""
    return finish_removal(request_removal(node, actor, queue=False))


def url_on_node(client: PSchedulerClient, task_id: uuid.UUID) -> str:
    """The URL of the node's task that Fathom's task `task_id` made, found by the id in its
    reference (only that task's JSON contains it); "" when the node has none."""
    return next(iter(client.find_tasks({"reference": {"fathom": {"task": str(task_id)}}})), "")


def delete_all_tasks(node: Node, until: float | None = None) -> list[str]:
    """Deletes every task Fathom has on the node, and any whose POST got no answer but which
    the node made all the same; none is begun after `until` (monotonic; None: no limit)."""
    failures = []
    tasks = Task.objects.filter(node=node, state__in=MAY_BE_ON_NODE)
    try:
        client = client_for(node)
    except PSchedulerError as error:
        return [str(error)]
    for task in tasks:
        if until is not None and time.monotonic() >= until:
            left = Task.objects.filter(node=node, state__in=MAY_BE_ON_NODE).count()
            failures.append(f"{left} tasks left on the node at the deadline: the syncs delete them")
            break
        if task.state == TaskState.UNANSWERED:
            try:
                task.url = url_on_node(client, task.pk)
            except PSchedulerError as error:
                failures.append(f"could not look up the unanswered task {task.pk}: {error}")
                continue
            Task.objects.filter(pk=task.pk).update(url=task.url)
        failures.extend(delete_task(client, task))
    return failures


def delete_task(client: PSchedulerClient, task: Task, reason: str = "") -> list[str]:
    """Deletes one task from its node; a task the node no longer has counts as deleted."""
    if task.url:
        try:
            client.delete_task(task.url)
        except PSchedulerError as error:
            message = f"could not delete {task.url}: {error}"
            Task.objects.filter(pk=task.pk).update(reason=message[:2000])
            return [message]
    Task.objects.filter(pk=task.pk).update(state=TaskState.DELETED, deleted_at=timezone.now(), reason=reason[:2000])
    return []
