#!/usr/bin/env bash
# `make backup` / `make restore`: the Fathom database and the server's secrets in one
# directory, and back.
#
#   deploy/backup.sh backup DIR    pg_dump (custom format) of FATHOM_DATABASE_URL into DIR/fathom.dump,
#                                  the secrets directory into DIR/secrets, versions into DIR/manifest
#   deploy/backup.sh restore DIR   drops and recreates that database (connections are closed),
#                                  restores it between timescaledb_pre_restore() and _post_restore(),
#                                  and puts the secrets back
#
# FATHOM_DATABASE_URL defaults to the private cluster's (deploy/services.sh env); FATHOM_SECRETS_DIR
# to var/secrets. A restore needs the TimescaleDB version the backup was taken with (pg_restore
# of a hypertable across versions is not supported): it refuses another. Agents keep their own
# credential in /var/lib/fathom-agent; a restored server accepts it again, since the database
# holds its hash.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${FATHOM_DATABASE_URL:-}" ]; then
  eval "$(bash "$ROOT/deploy/services.sh" env)"
fi
URL=$FATHOM_DATABASE_URL
SECRETS=${FATHOM_SECRETS_DIR:-$ROOT/var/secrets}
PG_BIN=${FATHOM_PG_BIN:-/usr/lib/postgresql/15/bin}

log() { printf '[backup] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The database's name, and the URL of the same server's maintenance database.
db_name() { python3 -c 'import sys, urllib.parse as u; print(u.urlsplit(sys.argv[1]).path.lstrip("/"))' "$URL"; }
maintenance_url() {
  python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/postgres")))' "$URL"
}
timescaledb_version() {
  "$PG_BIN/psql" -X -q -t -A -d "$1" -c "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'"
}

backup() {
  local dir=$1
  [ -e "$dir/fathom.dump" ] && die "$dir already holds a backup: choose a new directory"
  mkdir -p "$dir"
  chmod 700 "$dir"
  local version
  version=$(timescaledb_version "$URL")
  [ -n "$version" ] || die "the database has no timescaledb extension: is FATHOM_DATABASE_URL Fathom's?"
  log "dumping $(db_name) (TimescaleDB $version)"
  # TimescaleDB's catalog has circular foreign keys, which pg_dump warns about: harmless.
  "$PG_BIN/pg_dump" --format=custom --file="$dir/fathom.dump.partial" --dbname="$URL" \
    2> >(grep -v -E '^pg_dump: (warning: there are circular foreign-key constraints|detail: |hint: )' >&2 || true)
  mv "$dir/fathom.dump.partial" "$dir/fathom.dump"
  if [ -d "$SECRETS" ]; then
    cp -a "$SECRETS" "$dir/secrets"
  fi
  {
    echo "taken_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "database=$(db_name)"
    echo "timescaledb=$version"
    echo "postgresql=$("$PG_BIN/psql" -X -q -t -A -d "$URL" -c 'SHOW server_version')"
  } >"$dir/manifest"
  log "backup in $dir ($(du -sh "$dir" | cut -f1))"
}

restore() {
  local dir=$1 name wanted have
  [ -s "$dir/fathom.dump" ] && [ -s "$dir/manifest" ] || die "$dir holds no complete backup (fathom.dump and manifest)"
  name=$(db_name)
  wanted=$(sed -n 's/^timescaledb=//p' "$dir/manifest")
  have=$("$PG_BIN/psql" -X -q -t -A -d "$(maintenance_url)" -c "SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb'")
  [ "$wanted" = "$have" ] || die "the backup needs TimescaleDB $wanted; this server has $have"
  log "recreating $name (its connections are closed)"
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$(maintenance_url)" \
    -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" -c "CREATE DATABASE \"$name\""
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$URL" \
    -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS timescaledb VERSION '$wanted'" \
    -c "SELECT timescaledb_pre_restore()" >/dev/null
  log "restoring $dir/fathom.dump"
  # The extension exists already (pre_restore needs it; template1 may hold it): its own
  # entry in the dump is skipped.
  "$PG_BIN/pg_restore" --exit-on-error --no-owner --dbname="$URL" \
    --use-list=<("$PG_BIN/pg_restore" --list "$dir/fathom.dump" | grep -v -E ' EXTENSION - timescaledb$| COMMENT - EXTENSION timescaledb$') \
    "$dir/fathom.dump"
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$URL" -c "SELECT timescaledb_post_restore()" -c "ANALYZE" >/dev/null
  if [ -d "$dir/secrets" ]; then
    mkdir -p "$SECRETS"
    cp -a "$dir/secrets/." "$SECRETS/"
  fi
  log "restored $name from the backup taken $(sed -n 's/^taken_at=//p' "$dir/manifest")"
}

case "${1:-}" in
  backup) [ -n "${2:-}" ] || die "usage: $0 backup DIR"; backup "$2" ;;
  restore) [ -n "${2:-}" ] || die "usage: $0 restore DIR"; restore "$2" ;;
  *) die "usage: $0 backup DIR | restore DIR" ;;
esac
