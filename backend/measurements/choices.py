"""Choice sets of measurements, with the labels and colours the UI shows."""

from django.db import models


class TestType(models.TextChoices):
    PING = "ping", "Ping"


class RunStatus(models.TextChoices):
    OK = "ok", "OK"
    FAILED = "failed", "Failed"


RUN_STATUS_COLORS = {
    RunStatus.OK: "#1a7f37",
    RunStatus.FAILED: "#cf222e",
}
