"""The path's own throughput tests load it: a ping answered while one runs sees the queue the
test builds (and a policer's drops), not the path. The RTT and loss rules and the loss a run's
ceiling rests on leave those pings out; the charts still show every ping.

SQL pieces (constants: composing them takes no input) for a query with the parameters a, b
(the pair, either direction), start and end.
"""

# The pair's throughput runs (UDP ramps included) that overlap [start, end).
BUSY_CTE = """busy AS (
    SELECT started_at, ended_at FROM measurements_run
    WHERE test_type = 'throughput'
      AND ((source_id = %(a)s AND destination_id = %(b)s) OR (source_id = %(b)s AND destination_id = %(a)s))
      AND started_at < %(end)s AND ended_at > %(start)s
)"""
# A ping sample's time in none of them.
NOT_BUSY = "NOT EXISTS (SELECT 1 FROM busy WHERE time >= busy.started_at AND time < busy.ended_at)"
