#!/usr/bin/env bash
# `make demo`: the whole product on one machine. Migrates, creates the admin user, starts the
# web process, the Celery worker and beat, and a demo mesh of agents, then waits; Ctrl-C
# stops everything it started. State lives under ./var, so a second run reuses it.
# The demo mesh is two agents on loopback (127.0.0.2 and 127.0.0.3) probing each other.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VAR=$ROOT/var
VENV=$VAR/venv
DEMO=$VAR/demo
HTTP_BIND=${FATHOM_HTTP_BIND:-127.0.0.1:8000}
AGENT=$ROOT/agents/bin/fathom-agent
mkdir -p "$DEMO/logs"

log() { printf '[demo] %s\n' "$*" >&2; }

secret_file() {
  local file=$VAR/secrets/$1
  if [ ! -s "$file" ]; then
    mkdir -p "$VAR/secrets" && chmod 700 "$VAR/secrets"
    (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '/+=\n' >"$file")
  fi
  echo "$file"
}

set -a
eval "$(bash deploy/services.sh env)"
FATHOM_SECRET_KEY=$(cat "$(secret_file django_secret_key)")
FATHOM_DEBUG=${FATHOM_DEBUG:-0}
FATHOM_ALLOWED_HOSTS=${FATHOM_ALLOWED_HOSTS:-*}
FATHOM_PING_INTERVAL_S=${FATHOM_PING_INTERVAL_S:-30}
set +a

PIDS=()
stop_all() {
  trap - INT TERM EXIT
  log "stopping"
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  bash deploy/services.sh stop || true
  log "stopped"
}
trap stop_all INT TERM EXIT

start() { # name, command...
  local name=$1; shift
  "$@" >"$DEMO/logs/$name.log" 2>&1 &
  PIDS+=($!)
  log "started $name (pid $!, log var/demo/logs/$name.log)"
}

log "building the web UI"
(cd frontend && npm run -s build >/dev/null)

cd backend
"$VENV/bin/python" manage.py migrate --no-input >/dev/null
"$VENV/bin/python" manage.py collectstatic --no-input >/dev/null
ADMIN=$("$VENV/bin/python" manage.py ensure_admin --username admin --password-file "$(secret_file admin_password)")
cd "$ROOT"

start web "$VENV/bin/gunicorn" --chdir backend --bind "$HTTP_BIND" --workers 3 --access-logfile - fathom.wsgi
start worker "$VENV/bin/celery" --workdir backend -A fathom worker --loglevel INFO --concurrency 2
start beat "$VENV/bin/celery" --workdir backend -A fathom beat --loglevel INFO --schedule "$DEMO/celerybeat-schedule"

for _ in $(seq 100); do
  curl -fs "http://$HTTP_BIND/api/v1/auth/csrf/" >/dev/null 2>&1 && break
  sleep 0.2
done

# enroll NAME ADDRESS: a first run enrols the agent with a fresh single-use token; later
# runs reuse the credential in var/demo/agents/NAME.
enroll() {
  local name=$1 address=$2 state=$DEMO/agents/$1 token
  [ -f "$state/credential.json" ] && return 0
  token=$(cd backend && "$VENV/bin/python" manage.py create_enrollment_token --note "demo $name")
  "$AGENT" enroll --server "http://$HTTP_BIND" --token "$token" --name "$name" --address "$address" \
    --state-dir "$state" --force >/dev/null
}

# Every agent is enrolled before any starts, so each one's first plan already lists its peers.
enroll demo-a 127.0.0.2
enroll demo-b 127.0.0.3
start agent-demo-a "$AGENT" run --state-dir "$DEMO/agents/demo-a" --iperf3-port 5201 --iperf3-bind 127.0.0.2
start agent-demo-b "$AGENT" run --state-dir "$DEMO/agents/demo-b" --iperf3-port 5202 --iperf3-bind 127.0.0.3

cat <<EOF

  Fathom is running: http://$HTTP_BIND/
  $ADMIN
  Ping results appear within a minute on the Paths page. Ctrl-C stops everything.

EOF
wait -n "${PIDS[@]}" || true
log "a process exited; see var/demo/logs/"
