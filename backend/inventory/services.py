"""Enrolment, agent credentials and host facts: plain functions, no requests."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from inventory.addresses import AddressError, agent_addresses
from inventory.agent_state import read_state
from inventory.choices import AgentKind, TokenState
from inventory.models import Agent, EnrollmentToken, HostFactsSnapshot

TOKEN_PREFIX = "fet_"  # noqa: S105 - a marker, not a secret
AGENT_NAME_MAX = 63
AGENT_NAME_RE = re.compile(rf"^[a-z0-9][a-z0-9.-]{{0,{AGENT_NAME_MAX - 1}}}$")
# last_seen_at is written at most this often per agent, not on every request.
LAST_SEEN_RESOLUTION_S = 5


class EnrollmentError(Exception):
    """The enrolment token cannot be used; the message says why."""


class InvalidAddress(EnrollmentError):
    """The address is not one an agent may register (inventory/addresses.py)."""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    """256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class IssuedToken:
    token: EnrollmentToken
    plaintext: str


class TokenRequestError(Exception):
    """A token cannot be issued as asked; the message says why."""


def create_enrollment_token(
    expires_in_s: int,
    note: str = "",
    created_by: User | None = None,
    agent_name: str = "",
    rekey: bool = False,
) -> IssuedToken:
    """A single-use token. With agent_name it enrols only that name; with rekey it is issued
    for that enrolled, unrevoked agent and replaces its credential."""
    if agent_name and not AGENT_NAME_RE.match(agent_name):
        raise TokenRequestError("an agent name is 1-63 characters of a-z, 0-9, '.', '-'")
    named = Agent.objects.filter(name=agent_name).first() if agent_name else None
    if named is not None and named.decommissioned_at is not None:
        raise TokenRequestError(decommissioned_name_message(agent_name))
    rekey_agent = None
    if rekey:
        if not agent_name:
            raise TokenRequestError("a re-key token names the agent it re-keys")
        rekey_agent = named
        if rekey_agent is None:
            raise TokenRequestError(f"no enrolled agent named {agent_name!r} to re-key")
        if rekey_agent.revoked_at is not None:
            raise TokenRequestError(f"agent {agent_name!r} is revoked, and a revoked agent is never re-enrolled")
    elif named is not None:
        raise TokenRequestError(f"agent {agent_name!r} is already enrolled: a token for it must be a re-key token")
    plaintext = TOKEN_PREFIX + new_secret()
    now = timezone.now()
    token = EnrollmentToken.objects.create(
        token_sha256=digest(plaintext),
        prefix=plaintext[:10],
        note=note,
        created_by=created_by,
        created_at=now,
        expires_at=now + timedelta(seconds=expires_in_s),
        agent_name=agent_name,
        rekey_agent=rekey_agent,
    )
    return IssuedToken(token, plaintext)


def revoke_enrollment_token(token: EnrollmentToken) -> bool:
    """Revokes the token; False when it already was (nothing changed)."""
    if token.revoked_at is not None:
        return False
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return True


def decommissioned_name_message(name: str) -> str:
    return (
        f"{name!r} is the name of a decommissioned agent: its results keep the name, so it is never"
        " used again; choose another name"
    )


@dataclass(frozen=True)
class Enrollment:
    agent: Agent
    credential: str
    replaced: bool


_REFUSALS = {
    TokenState.USED: "enrolment token already used",
    TokenState.EXPIRED: "enrolment token expired",
    TokenState.REVOKED: "enrolment token revoked",
}


def enroll_agent(
    token_plaintext: str, name: str, address: str, agent_version: str = "", other_addresses: Sequence[str] = ()
) -> Enrollment:
    """Exchanges a single-use token for an agent credential, in one transaction.

    A token bound to a name enrols only that name. An enrolled agent's credential is replaced
    only by a re-key token issued for it (same id and history), and only at the addresses it
    is registered at: moving an agent is an operator's edit, never the agent's say. A
    revoked agent stays revoked. A refused enrolment leaves the token unused.
    `other_addresses` are its addresses in its other families (a dual-stack agent's IPv6).
    """
    try:
        address, others = agent_addresses(address, other_addresses, settings.AGENT_ADDRESS_NETWORKS)
    except AddressError as exc:
        raise InvalidAddress(str(exc)) from exc
    now = timezone.now()
    credential = new_secret()
    with transaction.atomic():
        token = EnrollmentToken.objects.select_for_update().filter(token_sha256=digest(token_plaintext)).first()
        if token is None:
            raise EnrollmentError("unknown enrolment token")
        state = token.state(now)
        if state in _REFUSALS:
            raise EnrollmentError(_REFUSALS[state])
        if token.agent_name and token.agent_name != name:
            raise EnrollmentError(f"this enrolment token is for agent {token.agent_name!r}")
        agent = Agent.objects.select_for_update().filter(name=name).first()
        _check_replacement(token, agent, name, [address, *others])
        replaced = agent is not None
        if agent is None:
            agent = Agent(name=name, address=address, other_addresses=others)
        agent.agent_version = agent_version
        agent.credential_sha256 = digest(credential)
        agent.enrolled_at = now
        agent.save()
        token.used_at = now
        token.used_by = agent
        token.save(update_fields=["used_at", "used_by"])
    return Enrollment(agent, credential, replaced)


def _check_replacement(token: EnrollmentToken, agent: Agent | None, name: str, addresses: list[str]) -> None:
    """Raises EnrollmentError unless this token may enrol `name` as things stand."""
    if agent is not None and agent.decommissioned_at is not None:
        raise EnrollmentError(decommissioned_name_message(name))
    if token.rekey_agent_id is None:
        if agent is None:
            return
        if agent.revoked_at is not None:
            raise EnrollmentError(f"agent {name!r} is revoked, and a revoked agent is never re-enrolled")
        raise EnrollmentError(
            f"an agent named {name!r} is already enrolled: replacing its credential needs a re-key token"
            f" issued for it (manage.py create_enrollment_token --name {name} --rekey)"
        )
    if agent is None or agent.pk != token.rekey_agent_id:
        raise EnrollmentError(f"this re-key token is not for an agent named {name!r}")
    if agent.revoked_at is not None:
        raise EnrollmentError(f"agent {name!r} is revoked, and a revoked agent is never re-enrolled")
    if addresses != agent.addresses:
        raise EnrollmentError(
            f"agent {name!r} is registered at {', '.join(agent.addresses)}, not {', '.join(addresses)}: an operator"
            " moves the agent (PATCH /api/v1/agents/<id>/ with its new addresses) before it re-enrols at others"
        )


def authenticate_agent(agent_id: str, secret: str) -> Agent | None:
    """The active agent whose credential this is, or None. Constant-time comparison."""
    try:
        key = uuid.UUID(agent_id)
    except ValueError:
        return None
    agent = Agent.objects.filter(
        pk=key, kind=AgentKind.FATHOM, revoked_at__isnull=True, decommissioned_at__isnull=True
    ).first()
    if agent is None or not hmac.compare_digest(agent.credential_sha256, digest(secret)):
        return None
    return agent


def touch_last_seen(agent: Agent, now: datetime | None = None, meta: dict[str, Any] | None = None) -> None:
    """When the agent was last seen and what its request's headers (`meta`) say of it (its
    clock, its spool), written at most every LAST_SEEN_RESOLUTION_S: the headers are read
    only then, not on every request."""
    now = now or timezone.now()
    if agent.last_seen_at is None or (now - agent.last_seen_at).total_seconds() >= LAST_SEEN_RESOLUTION_S:
        said = read_state(meta, now, agent.name).fields() if meta is not None else {}
        update: dict[str, Any] = {"last_seen_at": now, **said}
        Agent.objects.filter(pk=agent.pk).update(**update)
        for field, value in update.items():
            setattr(agent, field, value)


def revoke_agent(agent: Agent) -> bool:
    """Refuses the agent's credential from now on; False when it already was revoked."""
    if agent.revoked_at is not None:
        return False
    agent.revoked_at = timezone.now()
    agent.save(update_fields=["revoked_at"])
    return True


def decommission_agent(agent: Agent) -> bool:
    """Retires the agent for good: revoked (if it was not), out of every mesh, its name kept
    taken. Its results and host-facts history stay. False when it already was decommissioned.

    The caller holds the transaction, so the agent, its memberships and the audit row change
    together: saving decommissioned_at takes it out of its meshes and re-plans the exclusive
    slots (meshes.signals), dropping its own.
    """
    if agent.decommissioned_at is not None:
        return False
    now = timezone.now()
    agent.revoked_at = agent.revoked_at or now
    agent.decommissioned_at = now
    agent.save(update_fields=["revoked_at", "decommissioned_at"])
    return True


class AgentNameError(Exception):
    """The agent cannot take this name; the message says why."""


def rename_agent(agent: Agent, name: str) -> bool:
    """Gives the agent a new name (same id, results and memberships); False when it already
    had it. A decommissioned agent keeps its name, and no agent takes one of theirs."""
    if name == agent.name:
        return False
    if not AGENT_NAME_RE.match(name):
        raise AgentNameError("an agent name is 1-63 characters of a-z, 0-9, '.', '-'")
    if agent.decommissioned_at is not None:
        raise AgentNameError("a decommissioned agent keeps its name")
    holder = Agent.objects.filter(name=name).exclude(pk=agent.pk).first()
    if holder is not None:
        if holder.decommissioned_at is not None:
            raise AgentNameError(decommissioned_name_message(name))
        raise AgentNameError(f"an agent named {name!r} already exists")
    try:
        with transaction.atomic():
            agent.name = name
            agent.save(update_fields=["name"])
    except IntegrityError as exc:  # taken meanwhile by a concurrent enrolment
        agent.refresh_from_db(fields=["name"])
        raise AgentNameError(f"an agent named {name!r} already exists") from exc
    return True


def move_agent(agent: Agent, address: str | None = None, other_addresses: Sequence[str] | None = None) -> bool:
    """Gives the agent a new address, or new addresses in its other families (its host moved
    or gained IPv6; an agent cannot move itself), checked as at enrolment: every peer will
    probe them. What is not given stays. False when nothing changed. Peers take it up at
    their next plan poll; a decommissioned agent stays where it was."""
    primary = agent.address if address is None else address
    others = agent.other_addresses if other_addresses is None else other_addresses
    canonical, rest = agent_addresses(primary, others, settings.AGENT_ADDRESS_NETWORKS)  # AddressError
    if canonical == agent.address and rest == agent.other_addresses:
        return False
    if agent.decommissioned_at is not None:
        raise AddressError("a decommissioned agent keeps its addresses")
    agent.address, agent.other_addresses = canonical, rest
    agent.save(update_fields=["address", "other_addresses"])
    return True


def error_decade(error_ms: float) -> float:
    """The power of ten at or below error_ms (0 for none), as the agent's digest keeps it."""
    return 10.0 ** math.floor(math.log10(error_ms)) if error_ms > 0 else 0.0


def facts_digest(facts: dict[str, Any]) -> str:
    """Digest of everything but the collection time, so re-reports of the same facts match.
    Of the clock's error it keeps the order of magnitude: the kernel grows it between the NTP
    daemon's updates, and a history row per report would bury the changes that matter."""
    comparable = {key: value for key, value in facts.items() if key != "collected_at"}
    clock = comparable.get("clock")
    if isinstance(clock, dict) and isinstance(clock.get("max_error_ms"), int | float):
        comparable["clock"] = {**clock, "max_error_ms": error_decade(clock["max_error_ms"])}
    return hashlib.sha256(json.dumps(comparable, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def record_host_facts(agent: Agent, facts: dict[str, Any], collected_at: datetime) -> bool:
    """Stores the agent's current facts; a history row only when they changed."""
    fingerprint = facts_digest(facts)
    with transaction.atomic():
        last = HostFactsSnapshot.objects.filter(agent=agent).order_by("-collected_at").first()
        changed = last is None or last.digest != fingerprint
        if changed:
            HostFactsSnapshot.objects.create(agent=agent, collected_at=collected_at, facts=facts, digest=fingerprint)
        update: dict[str, Any] = {"host_facts": facts, "host_facts_at": collected_at}
        version = facts.get("agent_version")
        if isinstance(version, str) and version:
            update["agent_version"] = version
        Agent.objects.filter(pk=agent.pk).update(**update)
    return changed


def purge_stale_enrollment_tokens(older_than_days: int = 30) -> int:
    """Deletes tokens that expired, were used or revoked more than older_than_days ago."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = EnrollmentToken.objects.filter(expires_at__lt=cutoff).delete()
    return deleted
