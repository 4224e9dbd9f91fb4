"""The registry of test kinds ingest knows: kind -> its checks, summary and sample rows.

A new probe or a perfSONAR test kind plugs in with one module beside these and one entry
here (and its schema in contract/, which the registry is tested against).
"""

from __future__ import annotations

from measurements.kinds import flowsweep, latency, ping, throughput, trace
from measurements.kinds.base import KindIngest

REGISTRY: dict[str, KindIngest] = {
    kind.section: kind for kind in (ping.INGEST, throughput.INGEST, flowsweep.INGEST, trace.INGEST, latency.INGEST)
}
