"""Choice sets of measurements, with the labels and colours the UI shows."""

from django.db import models

from core import choices as registry


class TestType(models.TextChoices):
    PING = "ping", "Ping"
    THROUGHPUT = "throughput", "Throughput"
    FLOWSWEEP = "flowsweep", "Flow sweep"
    TRACE = "trace", "Trace"
    LATENCY = "latency", "Latency"


# Throughput tests hold both agents exclusively (pScheduler's "exclusive" class); the others
# are background tests that run alongside anything, latency's continuous TWAMP-light session
# too (what it measured under an exclusive test's load is flagged, as pings are).
EXCLUSIVE_TEST_TYPES = frozenset({TestType.THROUGHPUT})


class RunStatus(models.TextChoices):
    OK = "ok", "OK"
    FAILED = "failed", "Failed"
    MISSED = "missed", "Missed"


RUN_STATUS_COLORS = {
    RunStatus.OK: "#1a7f37",
    RunStatus.FAILED: "#cf222e",
    RunStatus.MISSED: "#9a6700",
}

registry.register("run_status", RunStatus, RUN_STATUS_COLORS)
