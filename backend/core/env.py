"""Typed readers for settings from environment variables.

Each fails fast with ImproperlyConfigured naming the variable, so a bad deployment stops at
start-up instead of misbehaving later. Every variable read here is documented in
deploy/.env.example (a test checks that).
"""

from __future__ import annotations

import math
import os
from ipaddress import IPv4Network, IPv6Network, ip_network
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None or value == "":
        if default is None:
            raise ImproperlyConfigured(f"{name} must be set")
        return default
    return value


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {value!r}")


def env_int(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {number}")
    return number


def env_float(name: str, default: float, minimum: float | None = None, maximum: float | None = None) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(number):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum:g}, got {number:g}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum:g}, got {number:g}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> tuple[IPv4Network | IPv6Network, ...]:
    """A comma-separated list of networks in CIDR notation, e.g. 10.0.0.0/8,fd00::/8."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ip_network(item, strict=True))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {item!r} is not a network such as 10.0.0.0/8 ({exc})") from exc
    return tuple(networks)


def replica_from_url(name: str, primary: dict[str, object]) -> dict[str, object] | None:
    """A streaming replica's DATABASES entry from its URL, or None when the variable is unset.

    User and password left out of the URL are the primary's (a replica built by
    pg_basebackup has the primary's roles), so the password is written down once.
    """
    if not env_str(name, ""):
        return None
    replica = database_from_url(name)
    for key in ("USER", "PASSWORD"):
        if not replica[key]:
            replica[key] = primary[key]
    # Read-only: nothing migrates it, and a test run points it at the primary's test database.
    replica["TEST"] = {"MIRROR": "default"}
    return replica


def database_from_url(name: str) -> dict[str, object]:
    """A Django DATABASES entry from postgresql://user:password@host:port/dbname."""
    url = env_str(name)
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(f"{name} must be a postgresql:// URL")
    database = parts.path.lstrip("/")
    if not database or not parts.hostname:
        raise ImproperlyConfigured(f"{name} must name a host and a database")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(database),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname,
        "PORT": str(parts.port or 5432),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
