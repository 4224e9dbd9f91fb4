#!/usr/bin/env bash
# Runs Fathom's own PostgreSQL+TimescaleDB cluster and Redis as plain processes with all
# their state under ./var (nothing is configured system-wide), so `make demo`, `make test`
# and CI need no service manager and a second run reuses the same data.
#
# Usage: deploy/services.sh start|stop|status|env|restart-postgres [down_s]|restart-redis [down_s]
# `env` prints the FATHOM_* variables that point the backend at these instances.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VAR=${FATHOM_VAR:-$ROOT/var}
PG_BIN=${FATHOM_PG_BIN:-/usr/lib/postgresql/15/bin}
PG_DATA=$VAR/pg/data
# Below Linux's ephemeral range (32768-60999): a listener cannot bind a port that an outgoing
# connection holds as its source port, and PostgreSQL and Redis start (and the fault tests
# restart them) while the test lanes hold thousands of such connections.
PG_PORT=${FATHOM_PG_PORT:-25432}
REDIS_PORT=${FATHOM_REDIS_PORT:-26379}
RUN_DIR=$VAR/run
SECRETS=$VAR/secrets
DB_NAME=fathom
DB_USER=fathom

log() { printf '[services] %s\n' "$*" >&2; }

# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
pg_user() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

secret() {
  local file=$SECRETS/$1
  if [ ! -s "$file" ]; then
    mkdir -p "$SECRETS" && chmod 700 "$SECRETS"
    (umask 077 && head -c 32 /dev/urandom | base64 | tr -d '/+=\n' | head -c 40 >"$file")
  fi
  cat "$file"
}

pg_running() { [ -f "$PG_DATA/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

start_postgres() {
  mkdir -p "$VAR/pg" "$RUN_DIR"
  chmod 755 "$VAR" "$VAR/pg"
  if [ "$(id -u)" -eq 0 ]; then chown "$(pg_user)" "$VAR/pg" "$RUN_DIR"; fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    log "initialising PostgreSQL cluster in $PG_DATA"
    # The password file is readable by initdb's user alone (as root, postgres owns it).
    local pwfile
    pwfile=$(mktemp)
    secret db_password >"$pwfile"
    if [ "$(id -u)" -eq 0 ]; then chown "$(pg_user)" "$pwfile"; fi
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U "$DB_USER" --pwfile="$pwfile" \
      --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    cat >>"$PG_DATA/postgresql.conf" <<EOF
# Fathom's private cluster
listen_addresses = '127.0.0.1'
unix_socket_directories = '$RUN_DIR'
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = off
max_connections = 200
shared_buffers = 256MB
# Each database with the timescaledb extension keeps a scheduler in a background worker; the
# test suites make a dozen databases on this cluster, and PostgreSQL's default of 8 workers
# ran out ("out of background workers" every few seconds in the log).
max_worker_processes = 32
timescaledb.max_background_workers = 24
fsync = ${FATHOM_PG_FSYNC:-on}
EOF
  fi
  if pg_running; then log "PostgreSQL already running on port $PG_PORT"; else
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
    # The port is given here, not in postgresql.conf, so FATHOM_PG_PORT moves a cluster too.
    if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$VAR/pg/postgresql.log" -o "-p $PG_PORT" -w -t 60 start >/dev/null; then
      log "PostgreSQL did not start; the end of $VAR/pg/postgresql.log:"
      tail -n 20 "$VAR/pg/postgresql.log" >&2
      exit 1
    fi
  fi
  # The password goes to psql in its environment: every process list shows arguments.
  local url="postgresql://$DB_USER@127.0.0.1:$PG_PORT"
  PGPASSWORD=$(secret db_password)
  export PGPASSWORD
  if ! psql "$url/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname='$DB_NAME'" | grep -q 1; then
    psql "$url/postgres" -qc "CREATE DATABASE $DB_NAME"
  fi
  psql "$url/$DB_NAME" -qc "CREATE EXTENSION IF NOT EXISTS timescaledb" 2>&1 | grep -v WELCOME || true
  # template1 gets the extension too, so Django's test database has it from the start.
  psql "$url/template1" -qc "CREATE EXTENSION IF NOT EXISTS timescaledb" >/dev/null 2>&1 || true
}

redis_running() { [ -f "$RUN_DIR/redis.pid" ] && kill -0 "$(cat "$RUN_DIR/redis.pid")" 2>/dev/null; }

start_redis() {
  mkdir -p "$VAR/redis" "$RUN_DIR"
  if redis_running; then log "Redis already running on port $REDIS_PORT"; return; fi
  log "starting Redis on 127.0.0.1:$REDIS_PORT"
  local conf=$VAR/redis/redis.conf
  (umask 077 && cat >"$conf" <<EOF
bind 127.0.0.1
port $REDIS_PORT
dir $VAR/redis
pidfile $RUN_DIR/redis.pid
logfile $VAR/redis/redis.log
daemonize yes
requirepass $(secret redis_password)
save 60 1000
EOF
  )
  redis-server "$conf"
  for _ in $(seq 50); do redis_running && return; sleep 0.1; done
  log "Redis did not start; the end of $VAR/redis/redis.log:"
  tail -n 20 "$VAR/redis/redis.log" >&2
  exit 1
}

stop_all() {
  if pg_running; then log "stopping PostgreSQL"; as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null; fi
  if redis_running; then
    log "stopping Redis"
    kill "$(cat "$RUN_DIR/redis.pid")"
    for _ in $(seq 50); do redis_running || break; sleep 0.1; done
  fi
}

print_env() {
  echo "FATHOM_DATABASE_URL=postgresql://$DB_USER:$(secret db_password)@127.0.0.1:$PG_PORT/$DB_NAME"
  echo "FATHOM_REDIS_URL=redis://:$(secret redis_password)@127.0.0.1:$REDIS_PORT/0"
}

case "${1:-}" in
  start) start_postgres; start_redis ;;
  stop) stop_all ;;
  status) pg_running && echo "postgresql: running" || echo "postgresql: stopped"
          redis_running && echo "redis: running" || echo "redis: stopped" ;;
  env) print_env ;;
  # Fault tests (tests/system/test_faults.py): one service down and up again, data kept.
  restart-postgres)
    if pg_running; then as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null; fi
    sleep "${2:-0}"; start_postgres ;;
  restart-redis)
    if redis_running; then kill "$(cat "$RUN_DIR/redis.pid")"; for _ in $(seq 50); do redis_running || break; sleep 0.1; done; fi
    sleep "${2:-0}"; start_redis ;;
  *) echo "usage: $0 start|stop|status|env|restart-postgres [down_s]|restart-redis [down_s]" >&2; exit 2 ;;
esac
