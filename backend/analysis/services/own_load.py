"""Fathom's own throughput tests load the hosts they run on: a ping answered while one runs
on either host of a path sees the queue the test builds on that host's link (and a
policer's drops), not the path. The RTT and loss rules and the loss a run's ceiling rests on
leave those pings out; the charts still show every ping.

A test between one host of the path and a third agent counts too: it fills that host's
access link and CPU, which the path's pings share.

A test counts from its slot, not only from its run: the run reaches the server only when the
agent uploads it, after the test, and an analysis pass in between judged the pings of a test
still running (a lab CI run found a +2.2 ms "RTT shift" on a path in the middle of its own
iperf3, cleared 30 s later when the run landed). Every exclusive slot that may have run
(planned, measured, failed or missed; not one the planner found no time for) covers its
reserved time, margins included.

SQL pieces (constants: composing them takes no input) for a query with the parameters a, b
(the path's two agents, either direction), start and end.
"""

# Throughput runs (UDP ramps included) and throughput slots with either agent of the path at
# either end that overlap [start, end).
BUSY_CTE = """busy AS (
    SELECT started_at, ended_at FROM measurements_run
    WHERE test_type = 'throughput'
      AND (source_id IN (%(a)s, %(b)s) OR destination_id IN (%(a)s, %(b)s))
      AND started_at < %(end)s AND ended_at > %(start)s
    UNION ALL
    SELECT start_at, end_at FROM meshes_slot
    WHERE test_type = 'throughput' AND state <> 'unschedulable'
      AND (source_id IN (%(a)s, %(b)s) OR destination_id IN (%(a)s, %(b)s))
      AND start_at < %(end)s AND end_at > %(start)s
)"""
# A ping sample's time in none of them.
NOT_BUSY = "NOT EXISTS (SELECT 1 FROM busy WHERE time >= busy.started_at AND time < busy.ended_at)"
