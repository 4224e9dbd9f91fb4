"""A JSON body signed per Standard Webhooks 1.0: webhook-id (the delivery's key, the same on
every retry), webhook-timestamp (this attempt), webhook-signature (v1, base64 HMAC-SHA256 of
"id.timestamp.body" with the decoded whsec_ secret). Body: {type, timestamp, data}; data is
the notification as every transport sees it (docs/alerts.md)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from alerts.transports.base import ConfigError, Sent, Transport, clean_url, post, require_object

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def secret_key(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise ConfigError("secret must start with whsec_")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError("secret is not whsec_ followed by base64") from exc
    if not 24 <= len(key) <= 64:
        raise ConfigError("secret must decode to 24 to 64 bytes")
    return key


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def body_of(message: dict[str, Any]) -> bytes:
    event = {"type": f"incident.{message['kind']}", "timestamp": message["at"], "data": message}
    return json.dumps(event, separators=(",", ":"), sort_keys=True).encode()


class WebhookTransport(Transport):
    kind = "webhook"
    secret_keys = ("secret",)

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        config = require_object(raw, {"url", "secret"}, {"url"})
        config["url"] = clean_url(config["url"])
        config["secret"] = config.get("secret") or new_secret()
        if not isinstance(config["secret"], str):
            raise ConfigError("secret must be a string")
        secret_key(config["secret"])
        return config

    def send(self, message: dict[str, Any], key: str) -> Sent:
        body = body_of(message)
        msg_id = f"msg_{key}"
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self.config["secret"], msg_id, timestamp, body),
        }
        status, text = post(self.config["url"], body, headers, permanent_codes={401, 403, 404, 410})
        return Sent(status, text)
