"""Failed sign-ins counted per client address and per username, for the API and the admin.

Only failures count, so a NOC wall display that signs in every few minutes is never locked
out, while guessing passwords from one address, or one account's password from many, is.
The counters live in the shared cache (Redis), so every web process sees the same count and
a restart does not reset it. The client address is the TCP peer unless the deployment says
how many reverse proxies it trusts (FATHOM_TRUSTED_PROXIES): X-Forwarded-For is only read
that far from its right end, so a forged header cannot mint new addresses.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

# The rates "20/min" style, as DRF writes them.
PERIODS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    count: int
    period_s: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """'20/min' -> 20 per 60 s; raises ValueError on anything else."""
        count, _, period = text.partition("/")
        unit = period.strip()[:1]
        if not count.strip().isdigit() or unit not in PERIODS_S:
            raise ValueError(f"a rate is <count>/<sec|min|hour|day>, got {text!r}")
        return cls(int(count), PERIODS_S[unit])


def client_address(request: HttpRequest) -> str:
    """The address that sent the request, as far as the trusted proxies vouch for it."""
    peer = str(request.META.get("REMOTE_ADDR") or "")
    trusted = settings.TRUSTED_PROXIES
    if trusted <= 0:
        return peer
    forwarded = [hop.strip() for hop in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if hop.strip()]
    # Each trusted proxy appends the address it saw; the one the outermost trusted proxy
    # saw is `trusted` hops from the right. Anything further left the client wrote itself.
    if len(forwarded) >= trusted:
        return forwarded[-trusted]
    return forwarded[0] if forwarded else peer


def _key(kind: str, value: str, window: int) -> str:
    # Hashed: a username may hold characters a cache key must not.
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}:{window}"


@dataclass(frozen=True)
class LoginGuard:
    """Decides whether a sign-in may be tried, and records the ones that failed."""

    address: str
    username: str

    @classmethod
    def of(cls, request: HttpRequest, username: str) -> LoginGuard:
        return cls(client_address(request), username.strip().casefold())

    def _subjects(self) -> list[tuple[str, str, Rate]]:
        subjects = [("address", self.address, Rate.parse(settings.LOGIN_FAILURES_PER_ADDRESS))]
        if self.username:
            subjects.append(("username", self.username, Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME)))
        return subjects

    def retry_after_s(self, now: float | None = None) -> int:
        """0 while sign-ins may be tried, else the seconds until the current window ends."""
        now = time.time() if now is None else now
        for kind, value, rate in self._subjects():
            window = int(now // rate.period_s)
            if int(cache.get(_key(kind, value, window), 0)) >= rate.count:
                return max(1, int((window + 1) * rate.period_s - now))
        return 0

    def record_failure(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        for kind, value, rate in self._subjects():
            key = _key(kind, value, int(now // rate.period_s))
            # add() then incr(): atomic in Redis, so two processes never lose a count.
            cache.add(key, 0, timeout=rate.period_s + 1)
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.set(key, 1, timeout=rate.period_s + 1)


@dataclass(frozen=True)
class PasswordChangeGuard(LoginGuard):
    """Wrong current passwords given to a password change, per person: a stolen session must
    not guess the password it would need to take the account over. Counted apart from
    sign-ins, so such guesses never lock the person out of signing in."""

    def _subjects(self) -> list[tuple[str, str, Rate]]:
        return [("password-change", self.username, Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME))]


def throttled_message(retry_after_s: int) -> str:
    return f"too many failed sign-ins; try again in {retry_after_s} s"
