#!/bin/sh
# First start: a cluster with the public image's settings (POSTGRES_USER as superuser with
# POSTGRES_PASSWORD, POSTGRES_DB, password logins from the network, TimescaleDB preloaded,
# then /docker-entrypoint-initdb.d/*.sh).
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username "$POSTGRES_USER" --pwfile "$pwfile" --auth-local trust --auth-host scram-sha-256 >/dev/null
  rm -f "$pwfile"
  {
    echo "listen_addresses = '*'"
    echo "shared_preload_libraries = 'timescaledb'"
  } >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -w -o "-c listen_addresses=''" start >/dev/null
  if [ "${POSTGRES_DB:-$POSTGRES_USER}" != postgres ]; then
    createdb --username "$POSTGRES_USER" "${POSTGRES_DB:-$POSTGRES_USER}"
  fi
  # As the public image does: the mounted initdb scripts, once, with the new cluster up.
  for script in /docker-entrypoint-initdb.d/*.sh; do
    [ -e "$script" ] || continue
    echo "timescaledb-entrypoint: running $script"
    sh "$script"
  done
  pg_ctl -w stop >/dev/null
fi
exec postgres
