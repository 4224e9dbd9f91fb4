"""What an agent says of itself on every request, in two headers (agents/internal/api):
`Fathom-Agent-Time`, its wall clock as it sent, and `Fathom-Spool`, what waits in its spool.

The clock offset is the agent's time less the server's when the request arrived: the true
offset less the request's one-way delay (milliseconds on a LAN, tens across an ocean), so it
reads a clock that is seconds off, which is what result timestamps and one-way figures need
to know, not one a few milliseconds off. The headers are advisory: a malformed one is left
out (and logged), never a reason to refuse a request that carries results.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

logger = logging.getLogger(__name__)

AGENT_TIME = "HTTP_FATHOM_AGENT_TIME"
SPOOL = "HTTP_FATHOM_SPOOL"
SPOOL_FORM = re.compile(r"results=(\d{1,12}),\s*bytes=(\d{1,18})")
# An agent time further than this from the server's is a broken header, not a clock.
MAX_OFFSET = timedelta(days=366)


@dataclass(frozen=True)
class AgentState:
    """None where the agent did not say (an older agent) or said it unreadably."""

    clock_offset_s: float | None
    spool_results: int | None
    spool_bytes: int | None

    def fields(self) -> dict[str, Any]:
        return {
            "clock_offset_s": self.clock_offset_s,
            "spool_results": self.spool_results,
            "spool_bytes": self.spool_bytes,
        }


def read_state(meta: dict[str, Any], received_at: datetime, agent: str) -> AgentState:
    """The state an agent's request headers give, measured against `received_at`."""
    return AgentState(_offset(meta.get(AGENT_TIME), received_at, agent), *_spool(meta.get(SPOOL), agent))


def _offset(raw: Any, received_at: datetime, agent: str) -> float | None:
    if not raw:
        return None
    try:
        sent = datetime.fromisoformat(str(raw))
    except ValueError:
        sent = None
    if sent is None or sent.tzinfo is None or abs(sent - received_at) > MAX_OFFSET:
        logger.warning(
            "agent %s: %s header %.80r is no RFC 3339 time near the server's", agent, "Fathom-Agent-Time", raw
        )
        return None
    return (sent - received_at).total_seconds()


def _spool(raw: Any, agent: str) -> tuple[int | None, int | None]:
    if not raw:
        return None, None
    found = SPOOL_FORM.fullmatch(str(raw).strip())
    if found is None:
        logger.warning("agent %s: Fathom-Spool header %.80r is not 'results=N, bytes=N'", agent, raw)
        return None, None
    return int(found.group(1)), int(found.group(2))
