"""A faithful fake perfSONAR pScheduler node for tests (see README.md)."""

from .server import DEFAULT_FIXTURES, FakePScheduler

__all__ = ["DEFAULT_FIXTURES", "FakePScheduler"]
