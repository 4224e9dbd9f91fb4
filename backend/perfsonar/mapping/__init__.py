"""pScheduler runs as Fathom results: the pure mapping behind the archive receiver and the poller.

A run reaches Fathom either pushed by the node's http archiver (run_from_archive) or fetched
from the node's API (run_from_record); both become a PsRun (runs.py). to_result (results.py)
turns a PsRun, placed by the caller in a mesh (Placement, placement.py: which Fathom test,
which peer, which slot), into one item of contract/result-batch.v1, so that ingest, ceilings,
findings, charts and alerts treat it like an agent's upload; each kind's part comes from its
own module: throughput.py, rtt.py (Fathom's ping), trace.py, latency.py (latencybg and
latency, one way). The result's id is derived from the run's task and run UUIDs
(result_id), so a run pushed and then polled, or pushed twice, is one result. kinds.py says
which pScheduler tests are Fathom kinds and why the rest are not.

Nothing here touches the database. Input that cannot be mapped (a missing or mistyped field,
an absurd size, a test Fathom has no kind for) raises MappingError (fields.py, with the
typed readers), whose message starts with the path of the field, e.g.
"result/intervals/3/streams/0/throughput-bits: not a number".
"""

from perfsonar.mapping.fields import MappingError
from perfsonar.mapping.placement import Placement
from perfsonar.mapping.results import to_result
from perfsonar.mapping.runs import PsRun, result_id, run_from_archive, run_from_record, task_uuid
from perfsonar.mapping.trace import fingerprint

__all__ = [
    "MappingError",
    "Placement",
    "PsRun",
    "fingerprint",
    "result_id",
    "run_from_archive",
    "run_from_record",
    "task_uuid",
    "to_result",
]
