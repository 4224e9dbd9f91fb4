#!/bin/sh
# The `scale` profile's read replica (docker-compose.yml): a hot standby of the timescaledb
# service. First start: a base backup of the primary over its replication connection
# (pg_basebackup -R writes standby.signal and the connection settings), then the standby
# streams the primary's WAL and answers read-only queries. POSIX sh and PostgreSQL's own
# tools only, so it runs in the public TimescaleDB image and in the test's stand-in alike.
set -eu
data=/var/lib/postgresql/data/standby
if [ ! -s "$data/PG_VERSION" ]; then
  rm -rf "$data"
  # The password through the environment: arguments are visible in every process list.
  PGPASSWORD="$POSTGRES_PASSWORD" pg_basebackup --host=timescaledb --username="$POSTGRES_USER" \
    --pgdata="$data" --write-recovery-conf --wal-method=stream --checkpoint=fast --progress
fi
# hot_standby_feedback: the primary keeps the rows a long history query on the standby still
# reads, instead of the standby cancelling that query when replay would remove them.
exec postgres -D "$data" -c hot_standby=on -c hot_standby_feedback=on
