"""Choice sets of the analysis, with the labels and colours the UI shows."""

from django.db import models

from core import choices as registry


class Diagnosis(models.TextChoices):
    """What limited one throughput run (tcp-ceilings.md section 4)."""

    RECEIVE_WINDOW = "receive_window", "Receive window limited"
    SEND_BUFFER = "send_buffer", "Send buffer limited"
    LOSS = "loss", "Loss limited"
    CAPACITY = "capacity", "Capacity limited"
    POLICER = "policer", "Policer suspected"
    BELOW_CEILINGS = "below_ceilings", "Below every ceiling"
    UNKNOWN = "unknown", "Unknown"


DIAGNOSIS_COLORS = {
    Diagnosis.RECEIVE_WINDOW: "#bc4c00",
    Diagnosis.SEND_BUFFER: "#9a6700",
    Diagnosis.LOSS: "#cf222e",
    Diagnosis.CAPACITY: "#1a7f37",
    Diagnosis.POLICER: "#8250df",
    Diagnosis.BELOW_CEILINGS: "#0969da",
    Diagnosis.UNKNOWN: "#6e7781",
}


class RttModeVerdict(models.TextChoices):
    SINGLE = "single", "One RTT mode"
    ECMP = "ecmp", "Bimodal RTT (ECMP)"
    INSUFFICIENT = "insufficient", "Too little data"


RTT_MODE_VERDICT_COLORS = {
    RttModeVerdict.SINGLE: "#1a7f37",
    RttModeVerdict.ECMP: "#bc4c00",
    RttModeVerdict.INSUFFICIENT: "#6e7781",
}


class FindingMetric(models.TextChoices):
    THROUGHPUT = "throughput", "Throughput"
    RTT = "rtt", "RTT"
    LOSS = "loss", "Loss"
    ROUTE = "route", "Route"
    ECMP = "ecmp", "ECMP members"
    # A latency test's, per direction: a finding's source -> destination is the direction.
    ONE_WAY_DELAY = "one_way_delay", "One-way delay"
    ONE_WAY_LOSS = "one_way_loss", "One-way loss"


class FindingState(models.TextChoices):
    OPEN = "open", "Open"
    CLEARED = "cleared", "Cleared"


FINDING_STATE_COLORS = {
    FindingState.OPEN: "#cf222e",
    FindingState.CLEARED: "#6e7781",
}


class FindingKind(models.TextChoices):
    """An alarm, or an annotation when a host's tuning or iperf3 changed at the same time."""

    ALARM = "alarm", "Alarm"
    ANNOTATION = "annotation", "Annotation"


class ChangeRelation(models.TextChoices):
    """How another change in a finding's moment stands to the finding's path (services/coinciding.py),
    in the order a NOC reads them."""

    SAME_PATH = "same_path", "On this path"
    REVERSE = "reverse", "The reverse direction"
    HOST = "host", "A host of this path"
    SHARED_AGENT = "shared_agent", "A path sharing an agent"
    SHARED_ROUTER = "shared_router", "A path sharing a router"


registry.register("diagnosis", Diagnosis, DIAGNOSIS_COLORS)
registry.register("rtt_mode_verdict", RttModeVerdict, RTT_MODE_VERDICT_COLORS)
registry.register("finding_state", FindingState, FINDING_STATE_COLORS)
# What a finding is about, as rules and filters name it (no colour of its own).
registry.register("finding_metric", FindingMetric, dict.fromkeys(FindingMetric, "#57606a"))
registry.register("change_relation", ChangeRelation, dict.fromkeys(ChangeRelation, "#57606a"))
