"""Failed sign-ins counted per client address, per address and username, and per username,
for the API and the admin (LoginGuard); wrong current passwords on a password change per
person (PasswordChangeGuard).

Only failures count, so a NOC wall display that signs in every few minutes is never locked
out, while guessing passwords from one address, or one account's password from many, is;
and no one can lock an account's owner out by guessing at it from elsewhere.
The counters live in the shared cache (Redis), so every web process sees the same count and
a restart does not reset it. The client address is the TCP peer unless the deployment says
how many reverse proxies it trusts (FATHOM_TRUSTED_PROXIES): X-Forwarded-For is only read
that far from its right end, so a forged header cannot mint new addresses.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import time
from dataclasses import dataclass, field

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


# A username this many times over its limit keeps every address out, clean ones too.
HARD_FACTOR = 10


def counted_address(address: str) -> str:
    """The address failures are counted under: an IPv6 client by its /64 (one host commonly
    holds a whole /64 and could try from a new address each time), IPv4 as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _key(kind: str, value: str, window: int) -> str:
    # Hashed: a username may hold characters a cache key must not.
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"login-failures:{kind}:{digest}:{window}"


@dataclass
class LoginGuard:
    """Decides whether a sign-in may be tried, and counts the ones that failed.

    Three counters of failures: per client address (FATHOM_LOGIN_FAILURES_PER_ADDRESS), per
    address and username, and per username from any address (both
    FATHOM_LOGIN_FAILURES_PER_USERNAME). An address over its limit, or over it for one
    username, waits. A username over its limit does not lock its owner out: an address that
    has not failed for it may still try, once, so the right password from a clean address
    signs in while guesses spread over many addresses get one each. An attempt takes its
    place in the address counters before the password is checked (an atomic increment), so
    parallel guesses cannot all pass the check; a sign-in that works gives its place back.
    """

    address: str
    username: str
    _taken: list[str] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def of(cls, request: HttpRequest, username: str) -> LoginGuard:
        return cls(counted_address(client_address(request)), username.strip().casefold())

    def _held(self) -> list[tuple[str, str, Rate]]:
        """The counters an attempt takes its place in before the password is checked."""
        held = [("address", self.address, Rate.parse(settings.LOGIN_FAILURES_PER_ADDRESS))]
        if self.username:
            held.append(("pair", f"{self.address} {self.username}", Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME)))
        return held

    def begin(self, now: float | None = None) -> int:
        """Takes this attempt's place in the address counters: 0 when it may be tried (call
        succeeded() or failed() after), else the seconds to wait (nothing is held then)."""
        now = time.time() if now is None else now
        taken: list[str] = []
        for kind, value, rate in self._held():
            window = int(now // rate.period_s)
            key = _key(kind, value, window)
            count = _increment(key, rate)
            taken.append(key)
            if count > rate.count:
                _give_back(taken)
                return _wait_s(rate, now)
            over = self._username_over(now) if kind == "pair" else 0
            if over >= HARD_FACTOR or (over and count > 1):
                # A guesser's address, for an account guessed at from many: it has had its
                # turn. Past HARD_FACTOR times the limit, every address waits: guesses from
                # more addresses than that are an attack no single try should serve.
                _give_back(taken)
                return _wait_s(Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME), now)
        self._taken = taken
        return 0

    def _username_over(self, now: float) -> int:
        """How many times over its limit the username's failures are (0: under it)."""
        rate = Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME)
        return int(cache.get(_key("username", self.username, int(now // rate.period_s)), 0)) // rate.count

    def succeeded(self) -> None:
        """The attempt signed in: it was no failure, so it gives its places back."""
        _give_back(self._taken)
        self._taken = []

    def failed(self, now: float | None = None) -> None:
        """The attempt failed: its places stay counted, and the username's count grows."""
        now = time.time() if now is None else now
        if self.username:
            rate = Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME)
            _increment(_key("username", self.username, int(now // rate.period_s)), rate)


def _wait_s(rate: Rate, now: float) -> int:
    """Seconds until the rate's current fixed window ends (at least 1)."""
    return max(1, int((int(now // rate.period_s) + 1) * rate.period_s - now))


def _increment(key: str, rate: Rate) -> int:
    """The counter's new value: add() then incr(), atomic in Redis, so two processes never
    lose a count."""
    cache.add(key, 0, timeout=rate.period_s + 1)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=rate.period_s + 1)
        return 1


def _give_back(keys: list[str]) -> None:
    for key in keys:
        with contextlib.suppress(ValueError):  # its window ended meanwhile
            cache.decr(key)


@dataclass
class PasswordChangeGuard:
    """Wrong current passwords given to a password change, per person: a stolen session must
    not guess the password it would need to take the account over. Counted apart from
    sign-ins, so such guesses never lock the person out of signing in. As with sign-ins, a
    change takes its place before the password is checked, so parallel guesses cannot all
    pass the check; a right password gives it back."""

    username: str
    _taken: list[str] = field(default_factory=list, init=False, repr=False)

    def begin(self, now: float | None = None) -> int:
        """0 when the change may be tried (then succeeded() unless a guess was wrong), else
        seconds to wait."""
        now = time.time() if now is None else now
        rate = Rate.parse(settings.LOGIN_FAILURES_PER_USERNAME)
        key = _key("password-change", self.username, int(now // rate.period_s))
        if _increment(key, rate) > rate.count:
            _give_back([key])
            return _wait_s(rate, now)
        self._taken = [key]
        return 0

    def succeeded(self) -> None:
        """The current password was right (whatever else was wrong): no guess to count."""
        _give_back(self._taken)
        self._taken = []


def throttled_message(retry_after_s: int) -> str:
    return f"too many failed sign-ins; try again in {retry_after_s} s"
