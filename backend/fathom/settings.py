"""Django settings for Fathom, all from environment variables (see deploy/.env.example)."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from core.env import (
    database_from_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_networks,
    env_str,
    replica_from_url,
)
from core.secret_key import secret_key

BACKEND_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BACKEND_DIR.parent

DEBUG = env_bool("FATHOM_DEBUG", default=False)
# Checked for strength; a debug run without one uses the checkout's own (core/secret_key.py).
SECRET_KEY = secret_key(DEBUG, Path(env_str("FATHOM_VAR", str(REPO_DIR / "var"))))
ALLOWED_HOSTS = env_list("FATHOM_ALLOWED_HOSTS", ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env_list("FATHOM_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # First, so its ready() runs before the admin imports ModelAdmin subclasses.
    "fathom.apps.FathomConfig",
    "accounts.admin_site.FathomAdminConfig",  # the admin, its sign-in limited like the API's
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "core",
    "accounts",
    "audit",
    "inventory",
    "meshes",
    "measurements",
    "history",
    "perfsonar",
    "analysis",
    "alerts",
    "metrics",
]

MIDDLEWARE = [
    "core.body_limit.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "fathom.urls"
WSGI_APPLICATION = "fathom.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": database_from_url("FATHOM_DATABASE_URL")}
# A streaming replica serving the history views' reads (core/replica.py), when configured.
_replica = replica_from_url("FATHOM_DATABASE_REPLICA_URL", DATABASES["default"])
if _replica is not None:
    DATABASES["replica"] = _replica
DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
# Seconds a replica that did not answer is left out before it is tried again.
DATABASE_REPLICA_RETRY_S = env_int("FATHOM_DATABASE_REPLICA_RETRY_S", 30, minimum=1, maximum=3600)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# The UI: Vite builds into FATHOM_FRONTEND_DIST with base /static/; whitenoise serves it.
FRONTEND_DIST = Path(env_str("FATHOM_FRONTEND_DIST", str(REPO_DIR / "frontend" / "dist")))
STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("FATHOM_STATIC_ROOT", str(REPO_DIR / "var" / "static")))
STATICFILES_DIRS = [FRONTEND_DIST] if FRONTEND_DIST.is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Vite names every bundle file by its content's hash (assets/index-Bw42Z2RV.js): a browser may
# keep it for good (whitenoise then sends max-age of ten years, immutable); index.html, which
# names them, is served with no-cache (fathom/spa.py).
VITE_ASSET = re.compile(r"/assets/[^/]+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$")


def immutable_vite_asset(path: str, url: str) -> bool:
    return VITE_ASSET.search(url) is not None


WHITENOISE_IMMUTABLE_FILE_TEST = immutable_vite_asset

SESSION_COOKIE_SECURE = env_bool("FATHOM_SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_AGE = 12 * 3600
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# One result may be large (a 300 s, 128-stream throughput run holds 46,208 intervals): the
# results endpoint takes the largest single result the contract allows, so a valid result
# always fits alone (measurements/tests/test_result_bounds.py computes it from the schema).
# Agents keep their batches far below (4 MiB) and split any the server refuses.
INGEST_MAX_BODY_BYTES = 32 * 1024 * 1024
# Every other body: meshes, host facts, sign-in and enrolment (which strangers reach too).
REQUEST_MAX_BODY_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = INGEST_MAX_BODY_BYTES

# How many reverse proxies in front of the web process append to X-Forwarded-For. 0 (no
# proxy): the header is ignored, so a client cannot pick the address it is counted under.
TRUSTED_PROXIES = env_int("FATHOM_TRUSTED_PROXIES", 0, minimum=0, maximum=5)
# Behind a trusted TLS-terminating proxy (compose's Caddy), the proxy says whether the client
# spoke HTTPS; without this Django would take every request for plain HTTP and refuse the
# UI's https Origin on sign-in (CSRF). Never trusted without a proxy: a client could claim it.
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Failed sign-ins allowed per client address and per username (API and admin).
LOGIN_FAILURES_PER_ADDRESS = env_str("FATHOM_LOGIN_FAILURES_PER_ADDRESS", "10/min")
LOGIN_FAILURES_PER_USERNAME = env_str("FATHOM_LOGIN_FAILURES_PER_USERNAME", "30/hour")
# The longest an API token lives, from its creation: a token asked for without an end, or
# created before a shorter limit was set, ends then too.
API_TOKEN_MAX_DAYS = env_int("FATHOM_API_TOKEN_MAX_DAYS", 365, minimum=1, maximum=3650)

REST_FRAMEWORK = {
    # Sessions first: an anonymous request gets 403, as the UI expects; then personal API tokens.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.SessionOrBearerAuthentication",
        "accounts.authentication.ApiTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.SignedIn"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_RATES": {"enroll": env_str("FATHOM_ENROLL_THROTTLE", "30/min")},
    # Throttles key on the TCP peer, or as far into X-Forwarded-For as the proxies we trust.
    "NUM_PROXIES": TRUSTED_PROXIES,
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

# Imported here, beside the one setting that needs it, rather than at the top of the file.
from core.openapi import contract_components  # noqa: E402

SPECTACULAR_SETTINGS = {
    "TITLE": "Fathom API",
    "DESCRIPTION": "Measurement mesh: agent enrolment, plans, result ingest, paths. See docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Operation ids without the /api/v1/ prefix, whatever is routed outside it.
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "HealthStateEnum": "core.api.health.STATES",
        "AgentStatusEnum": "inventory.choices.AgentStatus",
        "IngestItemStatusEnum": ["created", "duplicate"],
        "AgentKindEnum": "inventory.choices.AgentKind",
        "RunStatusEnum": "measurements.choices.RunStatus",
        "HistoryResolutionEnum": "history.buckets.RESOLUTION_NAMES",
        "TlsModeEnum": "perfsonar.choices.TlsMode",
        "PerfsonarTaskStateEnum": "perfsonar.choices.TaskState",
        "TokenStateEnum": "inventory.choices.TokenState",
        "ClockSourceEnum": "inventory.choices.CLOCK_SOURCES",
        "LabelNameEnum": "alerts.matchers.LABEL_NAMES",
        "MatcherOpEnum": "alerts.matchers.OPS",
        "RuleKindEnum": "alerts.choices.RuleKind",
        "ChannelKindEnum": "alerts.choices.ChannelKind",
        "NotificationKindEnum": "alerts.choices.NotificationKind",
        "IncidentStatusEnum": "alerts.choices.IncidentStatus",
        "DeliveryStatusEnum": "alerts.choices.DeliveryStatus",
        "AlertStateEnum": "alerts.choices.AlertState",
        "AlertSeverityEnum": "alerts.choices.Severity",
        "ComparisonEnum": "alerts.choices.Comparison",
        "RoleEnum": "core.roles.Role",
        "TokenScopeEnum": "accounts.choices.TokenScope",
        "ApiTokenStateEnum": "accounts.choices.API_TOKEN_STATES",
        "AuditObjectEnum": "audit.choices.AuditObject",
        "AuditActionEnum": "audit.choices.AuditAction",
    },
    # The analysis payloads (ceilings, evidence, inputs, time modes) are defined once, in
    # contract/analysis.v1.schema.json: its $defs become components that the analysis
    # serializers' JSON fields refer to, so the UI's types come from the contract.
    "APPEND_COMPONENTS": {"schemas": contract_components("analysis.v1.schema.json")},
}

REDIS_URL = env_str("FATHOM_REDIS_URL", "redis://127.0.0.1:6379/0")
# Shared by every web process (throttles, failed sign-ins): a per-process cache would let
# each process count on its own.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "fathom",
    }
}

# Celery: Redis as broker and result store; tasks are thin wrappers around services.
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_TASK_ALWAYS_EAGER = env_bool("FATHOM_CELERY_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# Alerting has its own queue and worker: a slow SMTP server or webhook (15 s timeouts) must
# never hold a slot that analysis needs.
CELERY_TASK_ROUTES = {"alerts.tasks.*": {"queue": "alerts"}}

# Addresses that may scrape /metrics without a token (a Prometheus server), e.g. 10.0.0.5/32.
METRICS_ALLOW_NETWORKS = env_networks("FATHOM_METRICS_ALLOW_NETWORKS", [])

# Measurements.
AGENT_OFFLINE_AFTER_S = env_int("FATHOM_AGENT_OFFLINE_AFTER_S", 180, minimum=10)
# Besides global addresses, the networks an agent's address may be in (private, lab, loopback
# ranges): every peer probes the address an agent registers (inventory/addresses.py).
AGENT_ADDRESS_NETWORKS = env_networks("FATHOM_AGENT_ADDRESS_NETWORKS", [])
# Where the server connects on someone's say-so (core/outbound.py): loopback, link-local and
# these ranges are refused, unless allowed back here.
OUTBOUND_DENY_NETWORKS = env_networks("FATHOM_OUTBOUND_DENY_NETWORKS", [])
OUTBOUND_ALLOW_NETWORKS = env_networks("FATHOM_OUTBOUND_ALLOW_NETWORKS", [])
RAW_RETENTION_DAYS = env_int("FATHOM_RAW_RETENTION_DAYS", 30, minimum=1)
# Per-run analyses, sweep modes and cleared findings outlive the raw data they were computed
# from: the slow throughput rule reads 120 days of analyses, and the path page draws each run.
ANALYSIS_RETENTION_DAYS = env_int("FATHOM_ANALYSIS_RETENTION_DAYS", 180, minimum=1)
# How long the grid's and the Paths list's snapshots live (analysis/services/snapshots.py): longer
# than beat's minute, so one lives until the next refresh replaces it; 0 computes every request.
SNAPSHOT_TTL_S = env_int("FATHOM_SNAPSHOT_TTL_S", 150, minimum=0)
# Rollups (history app): days each resolution keeps; 0 keeps it forever.
ROLLUP_MINUTE_RETENTION_DAYS = env_int("FATHOM_ROLLUP_MINUTE_RETENTION_DAYS", 30, minimum=0)
ROLLUP_HOURLY_RETENTION_DAYS = env_int("FATHOM_ROLLUP_HOURLY_RETENTION_DAYS", 730, minimum=0)
ROLLUP_DAILY_RETENTION_DAYS = env_int("FATHOM_ROLLUP_DAILY_RETENTION_DAYS", 0, minimum=0)
PLAN_VALID_FOR_S = 24 * 3600
# Exclusive (throughput) slots are planned this far ahead; the beat task extends the plan.
# New throughput slots start at least this far ahead, so every agent has fetched them before
# they start: longer than two of the agents' plan polls (plan_poll_interval_s, 30 s by default).
SLOT_PLANNING_LEAD_S = env_int("FATHOM_SLOT_PLANNING_LEAD_S", 90, minimum=10, maximum=3600)
SLOT_HORIZON_S = env_int("FATHOM_SLOT_HORIZON_S", 6 * 3600, minimum=600, maximum=7 * 86400)
# A planned slot with no result this long after its end is recorded as missed.
SLOT_RESULT_GRACE_S = env_int("FATHOM_SLOT_RESULT_GRACE_S", 900, minimum=60)

# Analysis (probes-and-detection.md section 4). RTT and loss rules work on windows of this
# many seconds, standardised against the baseline before them.
ANALYSIS_RTT_WINDOW_S = env_int("FATHOM_ANALYSIS_RTT_WINDOW_S", 300, minimum=5, maximum=3600)
ANALYSIS_RTT_BASELINE_S = env_int("FATHOM_ANALYSIS_RTT_BASELINE_S", 86400, minimum=60, maximum=30 * 86400)
# One-way delays of a latency test are trusted where both hosts' clocks say they are
# synchronised and their declared errors sum to at most this (ms); round trips always are.
LATENCY_CLOCK_ERROR_LIMIT_MS = env_float("FATHOM_LATENCY_CLOCK_ERROR_LIMIT_MS", 0.5, minimum=0, maximum=1000)
# A run is analysed this long after it ended: agents upload every 10 s, so by then the
# other agent's pings and sweeps from before the run have landed and a recompute finds the
# same inputs.
# How often new runs are analysed and the regression rules re-run.
ANALYSIS_EVERY_S = env_int("FATHOM_ANALYSIS_EVERY_S", 60, minimum=5, maximum=3600)
ANALYSIS_SETTLE_S = env_int("FATHOM_ANALYSIS_SETTLE_S", 120, minimum=20, maximum=3600)
# A path labelled a policer gets a paced UDP ramp in its next exclusive slot at most this
# often (hours; 0: never), which measures the policer's rate for the advice.
POLICER_RAMP_EVERY_H = env_int("FATHOM_POLICER_RAMP_EVERY_H", 24, minimum=0, maximum=24 * 90)
# A path whose single stream runs far below its ceilings gets a run of several streams in its
# next exclusive slot at most this often (hours; 0: never), which tells a per-flow limit from
# the path's.
STREAMS_PROBE_EVERY_H = env_int("FATHOM_STREAMS_PROBE_EVERY_H", 24, minimum=0, maximum=24 * 90)
# Seed 001: the daily volume capacity plans are made for (13 TiB of Copernicus products).
ANALYSIS_DAILY_VOLUME_BYTES = env_int("FATHOM_ANALYSIS_DAILY_VOLUME_BYTES", 13 * 2**40, minimum=1)
# The rate advice aims for when neither host reports its link speed.
ANALYSIS_GOAL_BPS = env_int("FATHOM_ANALYSIS_GOAL_BPS", 10**10, minimum=10**5)

# Alerting (reference/alerting.md). The address links in messages point at.
PUBLIC_URL = env_str("FATHOM_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

# perfSONAR nodes (docs/perfsonar.md). Bodies a node's archiver pushes, or a pSConfig template.
PERFSONAR_MAX_BODY_BYTES = env_int("FATHOM_PERFSONAR_MAX_BODY_BYTES", 8 * 1024 * 1024, minimum=65536)
# The port a Fathom agent opens a one-off iperf3 server on, for the slot a node tests it in.
# (5201 is its authenticated iperf3 server, 5202 its echo responder.)
PERFSONAR_IPERF3_PORT = env_int("FATHOM_PERFSONAR_IPERF3_PORT", 5203, minimum=1, maximum=65535)
# Repeating (rtt, trace) tasks last this long on a node and are renewed when a quarter is left,
# as pSConfig's agent does (task-min-ttl).
PERFSONAR_TASK_TTL_S = env_int("FATHOM_PERFSONAR_TASK_TTL_S", 24 * 3600, minimum=600, maximum=86400)
# Throughput slots get their one-shot task this far ahead (pScheduler plans a day ahead at most
# and places runs too close to now as missed).
PERFSONAR_SLOT_TASK_AHEAD_S = env_int("FATHOM_PERFSONAR_SLOT_TASK_AHEAD_S", 3600, minimum=120, maximum=86400)
# How far ahead a repeating task's first run is placed (pScheduler adds about 10 s anyway).
PERFSONAR_FIRST_RUN_LEAD_S = env_int("FATHOM_PERFSONAR_FIRST_RUN_LEAD_S", 15, minimum=1, maximum=600)
PERFSONAR_SLOT_TASK_MIN_LEAD_S = env_int("FATHOM_PERFSONAR_SLOT_TASK_MIN_LEAD_S", 30, minimum=5, maximum=600)
# A run whose push has not arrived this long after its end is fetched from the node.
PERFSONAR_POLL_AFTER_S = env_int("FATHOM_PERFSONAR_POLL_AFTER_S", 120, minimum=5, maximum=86400)
# How often tasks are reconciled and missing runs polled, and nodes checked (beat intervals).
PERFSONAR_SYNC_EVERY_S = env_int("FATHOM_PERFSONAR_SYNC_EVERY_S", 60, minimum=2, maximum=3600)
PERFSONAR_CHECK_EVERY_S = env_int("FATHOM_PERFSONAR_CHECK_EVERY_S", 300, minimum=5, maximum=86400)
# The most a node's clock may differ from Fathom's: pScheduler needs clocks within 1-2 s.
PERFSONAR_MAX_CLOCK_OFFSET_S = 1.0
PERFSONAR_HTTP_TIMEOUT_S = env_int("FATHOM_PERFSONAR_HTTP_TIMEOUT_S", 15, minimum=1, maximum=120)
# Whether nodes' archivers verify Fathom's certificate when they push (verify-ssl): on unless
# Fathom serves a self-signed certificate (the tests, a lab).
PERFSONAR_ARCHIVE_VERIFY_TLS = env_bool("FATHOM_PERFSONAR_ARCHIVE_VERIFY_TLS", True)
# Notification timers per incident, Alertmanager's defaults: the first message waits for
# siblings, changes go out at most once per interval, an unchanged open incident repeats.
ALERT_GROUP_WAIT_S = env_int("FATHOM_ALERT_GROUP_WAIT_S", 30, minimum=0, maximum=3600)
ALERT_GROUP_INTERVAL_S = env_int("FATHOM_ALERT_GROUP_INTERVAL_S", 300, minimum=1, maximum=86400)
ALERT_REPEAT_INTERVAL_S = env_int("FATHOM_ALERT_REPEAT_INTERVAL_S", 4 * 3600, minimum=60, maximum=30 * 86400)
# How often the rules are evaluated (a beat interval, in seconds).
ALERT_EVALUATE_EVERY_S = env_int("FATHOM_ALERT_EVALUATE_EVERY_S", 15, minimum=1, maximum=600)
# A new path alert joins an open incident sharing an agent, or one of the same mesh and metric
# opened within this window.
ALERT_GROUP_WINDOW_S = env_int("FATHOM_ALERT_GROUP_WINDOW_S", 900, minimum=0, maximum=86400)
# A delivery still "sending" this long after it started belongs to a worker that died: it is
# sent again with the same key (receivers dedupe on webhook-id).
ALERT_STALE_SENDING_S = env_int("FATHOM_ALERT_STALE_SENDING_S", 120, minimum=5, maximum=3600)
ALERT_EMAIL_DOMAIN = env_str("FATHOM_ALERT_EMAIL_DOMAIN", "fathom.invalid")
# SMTP for alert email (.env): STARTTLS (EMAIL_USE_TLS) or implicit TLS (EMAIL_USE_SSL).
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = env_str("FATHOM_EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = env_int("FATHOM_EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("FATHOM_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = env_str("FATHOM_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = env_bool("FATHOM_EMAIL_STARTTLS", default=False)
EMAIL_USE_SSL = env_bool("FATHOM_EMAIL_TLS", default=False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("FATHOM_EMAIL_STARTTLS and FATHOM_EMAIL_TLS exclude each other: pick one")
EMAIL_TIMEOUT = env_int("FATHOM_EMAIL_TIMEOUT_S", 15, minimum=1, maximum=300)
DEFAULT_FROM_EMAIL = env_str("FATHOM_EMAIL_FROM", f"Fathom <alerts@{ALERT_EMAIL_DOMAIN}>")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("FATHOM_LOG_LEVEL", "INFO")},
}
