#!/bin/sh
# An initdb script (the database image runs /docker-entrypoint-initdb.d/*.sh once, when it
# creates the cluster): the `scale` profile's read replica streams the primary's WAL over the
# compose network, which needs a pg_hba line for replication connections ("all" in pg_hba's
# database column does not cover them). Password logins only, as for every other connection.
set -eu
echo "host replication all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
