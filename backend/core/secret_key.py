"""Django's signing key, which perfSONAR archive tokens and iperf3 slot passwords derive from
too: a weak one lets anyone who guesses it forge them, so a weak key stops the start.

A debug run (tests, development) with no key set takes the checkout's own random key from
var/secrets (the file `make demo` uses), made on first use: never a key anyone could read in
the source.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Django's own bar (its security.W009 check): long, varied and not its placeholder.
MIN_LENGTH = 50
MIN_UNIQUE = 5
PLACEHOLDER_PREFIX = "django-insecure"


def weakness(key: str) -> str | None:
    """Why the key is too weak to sign with, or None."""
    if len(key) < MIN_LENGTH:
        return f"shorter than {MIN_LENGTH} characters"
    if len(set(key)) < MIN_UNIQUE:
        return f"fewer than {MIN_UNIQUE} different characters"
    if key.startswith(PLACEHOLDER_PREFIX):
        return "Django's placeholder"
    return None


def checked(key: str, name: str = "FATHOM_SECRET_KEY") -> str:
    problem = weakness(key)
    if problem:
        hint = 'python3 -c "import secrets; print(secrets.token_urlsafe(50))"'
        raise ImproperlyConfigured(f"{name} is too weak ({problem}): set 50+ random characters, e.g. from {hint}")
    return key


def checkout_key(var_dir: Path) -> str:
    """The checkout's own debug key in var_dir/secrets/django_secret_key (0600), made once.
    Two processes starting together (web and worker) read the same key: the file is created
    whole under a temporary name and linked into place, and whoever links second reads the
    first one's."""
    folder = var_dir / "secrets"
    path = folder / "django_secret_key"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        draft = folder / f".django_secret_key.{os.getpid()}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return checked(path.read_text().strip(), str(path))


def secret_key(debug: bool, var_dir: Path) -> str:
    """FATHOM_SECRET_KEY, checked; in a debug run without one, the checkout's own."""
    key = os.environ.get("FATHOM_SECRET_KEY", "")
    if key:
        return checked(key)
    if debug:
        return checkout_key(var_dir)
    raise ImproperlyConfigured("FATHOM_SECRET_KEY must be set")
