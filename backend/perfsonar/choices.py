"""Choice sets of the perfsonar app."""

from django.db import models

from core import choices as registry


class TlsMode(models.TextChoices):
    """How Fathom checks a node's HTTPS certificate (many nodes are self-signed)."""

    SYSTEM = "system", "System CAs"
    CA_BUNDLE = "ca_bundle", "Given CA bundle"
    PINNED = "pinned", "Pinned certificate (SHA-256)"


class TaskState(models.TextChoices):
    ACTIVE = "active", "Active"  # created on the node, runs expected
    REFUSED = "refused", "Refused"  # the node said no (limits, 400, 422): reason kept, retried later
    DELETED = "deleted", "Deleted"  # deleted from the node (mesh changed) or expired there
    # The POST got no answer (timeout, dropped connection): the node may have made the task.
    # Each sync looks it up by its reference; found, it is adopted, else marked refused.
    UNANSWERED = "unanswered", "No answer"


# The states of a task that may exist on its node: what a sync keeps up and a removal deletes.
MAY_BE_ON_NODE = (TaskState.ACTIVE, TaskState.UNANSWERED)


class RunOutcome(models.TextChoices):
    """pScheduler run states that finish a run (run_state.sql)."""

    FINISHED = "finished"
    OVERDUE = "overdue"
    MISSED = "missed"
    FAILED = "failed"
    PREEMPTED = "preempted"
    NONSTART = "nonstart"
    CANCELED = "canceled"


# The one account of pScheduler's run states (run_state.sql) that intake and mapping read.
RUN_OVER = frozenset(RunOutcome)  # anything else may still change
RUN_FAILED = RUN_OVER - {RunOutcome.FINISHED}
# Runs that never started; with a planned slot they are Fathom's "missed".
RUN_NEVER_STARTED = frozenset({RunOutcome.NONSTART, RunOutcome.MISSED})
# Runs still to come or under way.
RUN_UNDERWAY = frozenset({"scheduling", "pending", "on-deck", "running", "cleanup"})


registry.register(
    "tls_mode", TlsMode, {TlsMode.SYSTEM: "#1a7f37", TlsMode.CA_BUNDLE: "#0969da", TlsMode.PINNED: "#8250df"}
)
registry.register(
    "perfsonar_task_state",
    TaskState,
    {
        TaskState.ACTIVE: "#1a7f37",
        TaskState.REFUSED: "#cf222e",
        TaskState.DELETED: "#6e7781",
        TaskState.UNANSWERED: "#9a6700",
    },
)
