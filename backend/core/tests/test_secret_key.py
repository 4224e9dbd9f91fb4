"""The signing key: a weak one stops the start, and a debug run never signs with a public one."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.secret_key import secret_key, weakness

BACKEND = Path(__file__).resolve().parents[2]
STRONG = "k3Jq9vX2mW7pL0sT5yB8nR1cF4hD6gZ-aE_uQiOoPlMkNjHbVcXz"  # 52 varied characters


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("build-only", "shorter than 50"),
        ("insecure-development-key", "shorter than 50"),
        ("ab" * 40, "fewer than 5 different"),
        ("django-insecure-" + STRONG, "placeholder"),
    ],
)
def test_a_weak_key_is_named_and_refused(key: str, why: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert why in (weakness(key) or "")
    monkeypatch.setenv("FATHOM_SECRET_KEY", key)
    for debug in (False, True):  # a weak key set on purpose is refused in debug runs too
        with pytest.raises(ImproperlyConfigured, match="FATHOM_SECRET_KEY is too weak"):
            secret_key(debug, tmp_path)


def test_a_strong_key_is_used_as_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FATHOM_SECRET_KEY", STRONG)
    assert secret_key(False, tmp_path) == STRONG
    assert not (tmp_path / "secrets").exists()


def test_production_without_a_key_does_not_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FATHOM_SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="FATHOM_SECRET_KEY must be set"):
        secret_key(False, tmp_path)


def test_a_debug_run_without_a_key_makes_its_own_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FATHOM_SECRET_KEY", raising=False)
    first = secret_key(True, tmp_path)
    assert weakness(first) is None
    assert first != "insecure-development-key"  # the public key debug runs signed with before
    path = tmp_path / "secrets" / "django_secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key(True, tmp_path) == first  # the web and the worker agree
    assert sorted(p.name for p in path.parent.iterdir()) == ["django_secret_key"]  # no draft left
    assert secret_key(True, tmp_path / "elsewhere") != first  # another checkout, another key


def test_a_weak_key_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FATHOM_SECRET_KEY", raising=False)
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "django_secret_key").write_text("short\n")
    with pytest.raises(ImproperlyConfigured, match="django_secret_key is too weak"):
        secret_key(True, tmp_path)


def test_the_backend_does_not_start_with_a_weak_key() -> None:
    env = {**os.environ, "FATHOM_SECRET_KEY": "build-only", "FATHOM_DEBUG": "0"}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=BACKEND, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "FATHOM_SECRET_KEY is too weak (shorter than 50 characters)" in done.stderr
