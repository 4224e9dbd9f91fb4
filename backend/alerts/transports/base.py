"""What every channel transport is: validate its config, send one frozen message. One module
per transport and one line in the registry (transports/__init__.py)."""

from __future__ import annotations

import email.utils
import json
import math
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from core import outbound

HTTP_TIMEOUT_S = 15
RESPONSE_KEEP = 500
# The longest a receiver's Retry-After holds a channel; past it the backoff takes over again.
MAX_RETRY_AFTER_S = 3600.0


class TransportError(Exception):
    """A send that failed: permanent ones disable the channel, the rest are retried (after
    retry_after_s when the receiver said so)."""

    def __init__(
        self,
        message: str,
        *,
        permanent: bool = False,
        retry_after_s: float | None = None,
        status_code: int | None = None,
        response: str = "",
        message_only: bool = False,
    ) -> None:
        super().__init__(message)
        self.permanent = permanent
        # The receiver refused this one message for good (a body it cannot take, an alert it
        # no longer knows): the delivery fails, the channel stays enabled for the next.
        self.message_only = message_only
        self.retry_after_s = retry_after_s
        self.status_code = status_code
        self.response = response[:RESPONSE_KEEP]


class ConfigError(ValueError):
    """A channel config that cannot work, with a message for the person who wrote it."""


@dataclass(frozen=True)
class Sent:
    status_code: int | None
    response: str


class Transport:
    kind: ClassVar[str]
    # The least time between two messages to one channel (Slack: one per second per webhook).
    min_interval_s: ClassVar[float] = 0.0
    # Config keys that are secrets: never shown, and kept when an edit leaves them out.
    secret_keys: ClassVar[tuple[str, ...]] = ()
    # Whether the service has an acknowledgement of its own that Fathom's is sent on to, so
    # the person it paged stops being paged (PagerDuty, Opsgenie).
    follows_acknowledgements: ClassVar[bool] = False

    @classmethod
    def target(cls, config: dict[str, Any]) -> str:
        """Where the channel sends, as anyone may see it: no secret, no URL path."""
        return mask(str(config.get("url", "")))

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    @classmethod
    def clean_config(cls, raw: Any) -> dict[str, Any]:
        raise NotImplementedError

    def send(self, message: dict[str, Any], key: str) -> Sent:
        """Sends, or raises TransportError. key is the idempotency key (webhook-id)."""
        raise NotImplementedError


def require_object(raw: Any, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError("config must be an object")
    unknown, missing = set(raw) - allowed, required - set(raw)
    if unknown:
        raise ConfigError(f"unknown config keys: {', '.join(sorted(unknown))}")
    if missing:
        raise ConfigError(f"missing config keys: {', '.join(sorted(missing))}")
    return dict(raw)


def url_config(raw: Any) -> dict[str, Any]:
    """The config of a transport that is its URL alone (Slack, Teams)."""
    config = require_object(raw, {"url"}, {"url"})
    config["url"] = clean_url(config["url"])
    return config


def clean_url(raw: Any) -> str:
    if not isinstance(raw, str) or not raw or len(raw) > 2000:
        raise ConfigError("url must be a string of at most 2000 characters")
    try:
        parts = urlsplit(raw)
        _ = parts.port  # raises on a port that is no number, or out of range
    except ValueError as exc:  # "http://[::1", a port that is no number
        raise ConfigError(f"url is not a URL: {exc}") from exc
    if parts.scheme not in ("http", "https"):
        raise ConfigError(f"url must be http or https, not {parts.scheme or 'missing'!r}")
    if not parts.hostname:
        raise ConfigError("url has no host")
    if parts.username is not None or parts.password is not None:
        # Every error line and list would have to hide them; a receiver's secret belongs in
        # its path or the webhook's signing secret.
        raise ConfigError("url must not carry a user or password")
    return raw


def mask(url: str) -> str:
    """A webhook URL is a secret (anyone holding a Slack one can post): its scheme, host and
    port only, never the path, user or password a URL can carry."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}/…"


def clean_secret(raw: Any, name: str, pattern: str, shape: str) -> str:
    """A service's key, held to the shape the service issues, so a pasted URL or a key with a
    stray space fails when it is saved, not at the first incident."""
    if not isinstance(raw, str) or not re.fullmatch(pattern, raw):
        raise ConfigError(f"{name} must be {shape}")
    return raw


def cut(text: str, limit: int) -> str:
    """text within a service's limit, marked where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def incident_key(message: dict[str, Any], key: str) -> str:
    """One incident's identity at a service that deduplicates (PagerDuty's dedup_key,
    Opsgenie's alias, Alertmanager's labels): every message of the incident names the same
    alert there, and two Fathoms sending to one service never meet (the key carries the
    host of the incident's URL). A test message has one of its own."""
    if message.get("incident_id") is None:
        return f"fathom-test-{key}"
    return f"fathom:{instance_of(message)}:incident:{message['incident_id']}"


def instance_of(message: dict[str, Any]) -> str:
    """Which Fathom sent the message: the host (and port) of its URLs."""
    return urlsplit(str(message["url"])).netloc


def post_json(
    url: str,
    payload: Any,
    headers: dict[str, str] | None = None,
    *,
    permanent_codes: set[int],
    rejected_codes: frozenset[int] = frozenset(),
) -> tuple[int, str]:
    """post() of a JSON body; a code in rejected_codes fails this message only."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    try:
        return post(url, body, {"Content-Type": "application/json", **(headers or {})}, permanent_codes=permanent_codes)
    except TransportError as exc:
        if exc.status_code in rejected_codes:
            exc.permanent, exc.message_only = True, True
        raise


def _host(url: str) -> str:
    """The host and port an error line may name (never a URL's path or credentials)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds, from seconds or an HTTP date, at most MAX_RETRY_AFTER_S: one
    reply must not hold a channel for years ("inf" once crashed the delivery task)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):
            return None
        if when.tzinfo is None:  # "-0000" or no zone: RFC 9110 dates are GMT
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER_S)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is a failure, never followed (a moved receiver must be reconfigured)


# Every connection held to the outbound policy (core/outbound.py): a channel's URL must not
# reach the server's loopback, a metadata address or the deployment's internal network.
_opener = urllib.request.build_opener(_NoRedirect, outbound.CheckedHTTPHandler, outbound.CheckedHTTPSHandler)


def post(url: str, body: bytes, headers: dict[str, str], *, permanent_codes: set[int]) -> tuple[int, str]:
    """POSTs and returns (status, body) on 2xx; otherwise raises TransportError, permanent
    for the given codes, with Retry-After honoured on 429 and 503."""
    fields = {"User-Agent": "fathom-alerts", **headers}
    request = urllib.request.Request(url, data=body, method="POST", headers=fields)  # noqa: S310 - http(s) only
    started = time.monotonic()
    try:
        # clean_url admits http and https only.
        with _opener.open(request, timeout=HTTP_TIMEOUT_S) as reply:
            return reply.status, reply.read(RESPONSE_KEEP).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        text = exc.read(RESPONSE_KEEP).decode("utf-8", "replace") if exc.fp else ""
        code = exc.code
        if 300 <= code < 400:
            where = exc.headers.get("Location", "?")
            raise TransportError(
                f"HTTP {code} redirect to {where} (not followed): update the URL",
                permanent=True,
                status_code=code,
                response=text,
            ) from exc
        # The line everyone sees names the status, never the body (a URL pointed at an
        # internal service would read it back); the body is kept for admins (response).
        raise TransportError(
            f"HTTP {code} {exc.reason}".strip(),
            permanent=code in permanent_codes,
            retry_after_s=retry_after(exc.headers.get("Retry-After")) if code in (429, 503) else None,
            status_code=code,
            response=text,
        ) from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, outbound.OutboundRefused):
            raise TransportError(f"{_host(url)}: {reason}", permanent=True) from exc
        if isinstance(reason, socket.gaierror):
            raise TransportError(f"{urlsplit(url).hostname} does not resolve ({reason.strerror})") from exc
        raise TransportError(f"cannot reach {_host(url)}: {reason}") from exc
    except TimeoutError as exc:
        raise TransportError(
            f"no answer from {_host(url)} within {HTTP_TIMEOUT_S} s ({time.monotonic() - started:.0f} s)"
        ) from exc
    except OSError as exc:
        raise TransportError(f"cannot reach {_host(url)}: {exc}") from exc
