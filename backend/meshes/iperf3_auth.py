"""Per-slot credentials for the agents' iperf3 servers (iperf3's own RSA authentication).

An agent's iperf3 server admits only the users its plan lists. Each exclusive slot has one
credential: the slot's client gets the username and password (and the server's public key, to
which iperf3 encrypts them with a timestamp), the destination's plan lists the username with
the hash iperf3 compares. Both are derived from SECRET_KEY and the slot's id, so nothing is
stored, and a credential opens the server for one slot only: it leaves the server's list with
the slot.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings

# The prefix keeps slot credentials apart from any other use of SECRET_KEY.
DERIVATION_CONTEXT = b"fathom iperf3 slot credential v1:"


@dataclass(frozen=True)
class Iperf3Auth:
    """What a slot's client presents (iperf3 --username, IPERF3_PASSWORD, --rsa-public-key-path)."""

    username: str
    password: str
    public_key: str


@dataclass(frozen=True)
class Iperf3User:
    """One line of the destination's authorized-users file."""

    username: str
    password_sha256: str


def slot_username(slot_id: UUID) -> str:
    return f"slot-{slot_id.hex}"


def slot_password(slot_id: UUID) -> str:
    digest = hmac.new(settings.SECRET_KEY.encode(), DERIVATION_CONTEXT + slot_id.bytes, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def password_sha256(username: str, password: str) -> str:
    """The hash iperf3's authorized-users file holds: sha256 of "{username}password", hex."""
    return hashlib.sha256(f"{{{username}}}{password}".encode()).hexdigest()


def public_key_of(host_facts: dict[str, Any] | None) -> str | None:
    """The destination's iperf3 public key, or None when its server runs without authentication."""
    key = (host_facts or {}).get("iperf3_public_key")
    return key if isinstance(key, str) and key else None


def client_auth(slot_id: UUID, destination_facts: dict[str, Any] | None) -> Iperf3Auth | None:
    key = public_key_of(destination_facts)
    if key is None:
        return None
    return Iperf3Auth(slot_username(slot_id), slot_password(slot_id), key)


def server_user(slot_id: UUID) -> Iperf3User:
    username = slot_username(slot_id)
    return Iperf3User(username, password_sha256(username, slot_password(slot_id)))
