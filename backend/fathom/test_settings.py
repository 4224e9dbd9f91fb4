"""Settings for the test suite: debug defaults (no production secret needed), eager Celery.
Only the database and Redis URLs must come from the environment."""

import os

os.environ.setdefault("FATHOM_DEBUG", "1")
os.environ.setdefault("FATHOM_CELERY_EAGER", "1")
# The fixtures' agents live in the lab's range, as the lab's and the demo's do.
os.environ.setdefault("FATHOM_AGENT_ADDRESS_NETWORKS", "198.18.0.0/15,2001:2::/48")
# Enrolments are throttled per client address, and every test client is 127.0.0.1: a run
# that enrols more than 30 agents in a minute across its test cases must not be refused.
os.environ.setdefault("FATHOM_ENROLL_THROTTLE", "10000/min")
# The fake perfSONAR nodes and alert receivers the tests talk to listen on loopback, which
# the outbound policy refuses otherwise (core/tests/test_outbound.py turns it off).
os.environ.setdefault("FATHOM_OUTBOUND_ALLOW_NETWORKS", "127.0.0.0/8,::1/128")

from fathom.settings import *  # noqa: F403

# Fast hashing: tests create users in every class.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Tests never run collectstatic; whitenoise serves from the finders instead.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# Each test run counts throttles and failed sign-ins apart from every other (and from a
# server on the same Redis): the keys expire with their windows.
CACHES["default"]["KEY_PREFIX"] = f"fathom-test-{os.getpid()}-{os.urandom(4).hex()}"  # noqa: F405

# Tests see what they just wrote: no snapshot of the grid or the Paths list outlives its
# request (tests/test_grid.py turns them on to test them).
SNAPSHOT_TTL_S = 0
