"""Choice sets of the inventory app, with the labels and colours the UI shows."""

from django.db import models

from core import choices as registry
from core import contract


class AgentKind(models.TextChoices):
    """What measures at an endpoint: Fathom's own agent, or a perfSONAR node Fathom drives
    through its pScheduler API (the perfsonar app holds how to reach it)."""

    FATHOM = "fathom", "Fathom agent"
    PERFSONAR = "perfsonar", "perfSONAR node"


class AddressFamily(models.IntegerChoices):
    """An address's IP version. A dual-stack pair is two paths, one per family: their routes,
    MTUs and policers differ, so every path key carries its family."""

    IPV4 = 4, "IPv4"
    IPV6 = 6, "IPv6"


class AgentStatus(models.TextChoices):
    ONLINE = "online", "Online"
    OFFLINE = "offline", "Offline"
    NEVER_SEEN = "never_seen", "Never seen"
    REVOKED = "revoked", "Revoked"
    DECOMMISSIONED = "decommissioned", "Decommissioned"


AGENT_STATUS_COLORS = {
    AgentStatus.ONLINE: "#1a7f37",
    AgentStatus.OFFLINE: "#cf222e",
    AgentStatus.NEVER_SEEN: "#6e7781",
    AgentStatus.REVOKED: "#8250df",
    AgentStatus.DECOMMISSIONED: "#424a53",
}


class TokenState(models.TextChoices):
    ACTIVE = "active", "Active"
    USED = "used", "Used"
    EXPIRED = "expired", "Expired"
    REVOKED = "revoked", "Revoked"


TOKEN_STATE_COLORS = {
    TokenState.ACTIVE: "#1a7f37",
    TokenState.USED: "#6e7781",
    TokenState.EXPIRED: "#9a6700",
    TokenState.REVOKED: "#8250df",
}

# The TCP tuning sysctls an agent may report under "sysctls" (anything else is refused), as the
# contract names them; the agent's list is tested against the same enum.
REPORTED_SYSCTLS: tuple[str, ...] = tuple(contract.load("host-facts.v1.schema.json")["$defs"]["ReportedSysctl"]["enum"])

# Where an agent's clock state comes from: the kernel's adjtimex, or the lab's declared clock.
CLOCK_SOURCES: tuple[str, ...] = tuple(
    contract.load("host-facts.v1.schema.json")["$defs"]["Clock"]["properties"]["source"]["enum"]
)
# The largest error the kernel declares (its maxerror stops growing at 16 s).
MAX_CLOCK_ERROR_MS = 16_000

AGENT_KIND_COLORS = {AgentKind.FATHOM: "#0969da", AgentKind.PERFSONAR: "#bf3989"}

registry.register("agent_kind", AgentKind, AGENT_KIND_COLORS)
registry.register("agent_status", AgentStatus, AGENT_STATUS_COLORS)
registry.register("token_state", TokenState, TOKEN_STATE_COLORS)
