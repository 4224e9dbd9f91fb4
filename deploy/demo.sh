#!/usr/bin/env bash
# `make demo`: the whole product on one machine. Migrates, creates the admin user, starts the
# web process, the Celery worker and beat, and a demo mesh of agents, then waits; Ctrl-C
# stops everything it started. State lives under ./var, so a second run reuses it.
# As root, the demo mesh is the lab's four-site scenario (deploy/lab/scenarios/demo.yaml):
# an agent in each site's network namespace, real long-fat RTTs, ECMP and loss between
# them. Otherwise (or with FATHOM_DEMO_LAB=0) two agents on loopback (127.0.0.2, 127.0.0.3).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VAR=$ROOT/var
VENV=$VAR/venv
DEMO=$VAR/demo
HTTP_BIND=${FATHOM_HTTP_BIND:-127.0.0.1:8000}
AGENT=$ROOT/agents/bin/fathom-agent
LAB=$ROOT/agents/bin/fathom-lab
LAB_SCENARIO=$ROOT/deploy/lab/scenarios/demo.yaml
LAB_STATE=$DEMO/lab
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
# The demo's agents sit in the lab's range, or on loopback without the lab.
FATHOM_AGENT_ADDRESS_NETWORKS=${FATHOM_AGENT_ADDRESS_NETWORKS:-198.18.0.0/15,2001:2::/48,127.0.0.0/8}
# Alert email goes to a local mailbox (an SMTP server that keeps .eml files under var/mail).
MAILBOX_PORT=${FATHOM_DEMO_MAILBOX_PORT:-8025}
FATHOM_EMAIL_HOST=${FATHOM_EMAIL_HOST:-127.0.0.1}
FATHOM_EMAIL_PORT=${FATHOM_EMAIL_PORT:-$MAILBOX_PORT}
FATHOM_PUBLIC_URL=${FATHOM_PUBLIC_URL:-http://$HTTP_BIND}
# RTT judged on 1-minute windows (5 min in production), so the demo has its baseline (6
# windows) a few minutes after it starts and an injected RTT step becomes an incident soon.
FATHOM_ANALYSIS_RTT_WINDOW_S=${FATHOM_ANALYSIS_RTT_WINDOW_S:-60}
set +a

PIDS=()
LAB_UP=0
stop_all() {
  trap - INT TERM EXIT
  log "stopping"
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$LAB_UP" -eq 1 ]; then "$LAB" down --state-dir "$LAB_STATE" >/dev/null || true; fi
  # The screenshot run (deploy/demo-screenshots.sh) leaves them to whoever started them.
  [ "${FATHOM_DEMO_KEEP_SERVICES:-0}" = 1 ] || bash deploy/services.sh stop || true
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
# The default mesh on demo schedules (ping every 30 s, a throughput slot every 10 min per path).
"$VENV/bin/python" manage.py apply_mesh "${FATHOM_DEMO_MESH:-$ROOT/deploy/demo-mesh.json}" >/dev/null
"$VENV/bin/python" manage.py ensure_alert_channel --name demo-mailbox --kind email \
  --config '{"to": ["noc@fathom.invalid"]}' >/dev/null
cd "$ROOT"

use_lab=0
if [ "${FATHOM_DEMO_LAB:-1}" != 0 ] && [ "$(id -u)" -eq 0 ] && [ -x "$LAB" ]; then use_lab=1; fi
web_binds=(--bind "$HTTP_BIND")
if [ "$use_lab" -eq 1 ]; then
  "$LAB" down --state-dir "$LAB_STATE" >/dev/null 2>&1 || true # a previous run killed hard
  "$LAB" up --management --state-dir "$LAB_STATE" "$LAB_SCENARIO" >/dev/null
  LAB_UP=1
  log "lab up: four sites in network namespaces ($LAB_SCENARIO)"
  # Agents in the namespaces reach the server over the lab's management bridge.
  LAB_SERVER="198.19.0.1:${HTTP_BIND##*:}"
  web_binds+=(--bind "$LAB_SERVER")
else
  [ "$(id -u)" -eq 0 ] || log "not root: the lab needs network namespaces, so the demo agents run on loopback"
fi

# Threaded workers, as in docker-compose: the browser talks to gunicorn directly here, and a
# browser's spare idle connection holds a sync worker until gunicorn's timeout (30 s) kills it.
start web "$VENV/bin/gunicorn" --no-control-socket --chdir backend "${web_binds[@]}" --worker-class gthread --workers 3 --threads 8 \
  --access-logfile - fathom.wsgi
start worker "$VENV/bin/celery" --workdir backend -A fathom worker --loglevel INFO --concurrency 2
start alerts "$VENV/bin/celery" --workdir backend -A fathom worker -Q alerts -n alerts@%h --loglevel INFO --concurrency 2
start mailbox "$VENV/bin/python" backend/manage.py run_mailbox --dir "$VAR/mail" --port "$MAILBOX_PORT"
start beat "$VENV/bin/celery" --workdir backend -A fathom beat --loglevel INFO --schedule "$DEMO/celerybeat-schedule"

for _ in $(seq 100); do
  curl -fs "http://$HTTP_BIND/api/v1/auth/csrf/" >/dev/null 2>&1 && break
  sleep 0.2
done

# enroll STATE_DIR NAME ADDRESSES SERVER [PREFIX...]: a first run enrols the agent with a fresh
# single-use token; later runs reuse its credential. ADDRESSES: its address, and its IPv6
# address after a space on a dual-stack host. PREFIX runs it inside a lab host.
enroll() {
  local state=$1 name=$2 addresses=$3 server=$4 token address flags=()
  shift 4
  [ -f "$state/credential.json" ] && return 0
  token=$(cd backend && "$VENV/bin/python" manage.py create_enrollment_token --note "demo $name")
  for address in $addresses; do flags+=(--address "$address"); done
  "$@" "$AGENT" enroll --server "$server" --token "$token" --name "$name" "${flags[@]}" \
    --state-dir "$state" --allow-insecure-http --force >/dev/null
}

# Every agent is enrolled before any starts, so each one's first plan already lists its peers.
if [ "$use_lab" -eq 1 ]; then
  mapfile -t lab_hosts < <("$LAB" hosts --state-dir "$LAB_STATE")
  # "NAME ADDRESS MANAGEMENT [ADDRESS6]": a dual-stack host registers both addresses.
  for line in "${lab_hosts[@]}"; do
    read -r host address _ address6 <<<"$line"
    enroll "$DEMO/lab-agents/$host" "$host" "$address $address6" "http://$LAB_SERVER" \
      "$LAB" exec --state-dir "$LAB_STATE" "$host" --
  done
  for line in "${lab_hosts[@]}"; do
    read -r host address _ address6 <<<"$line"
    # A dual-stack host's servers listen on every address of its namespace.
    binds=(--iperf3-bind "$address" --twamp-bind "$address")
    [ -n "$address6" ] && binds=()
    start "agent-$host" "$LAB" exec --state-dir "$LAB_STATE" "$host" -- \
      "$AGENT" run --state-dir "$DEMO/lab-agents/$host" "${binds[@]}" --twamp-clock-shared true
  done
else
  enroll "$DEMO/agents/demo-a" demo-a 127.0.0.2 "http://$HTTP_BIND"
  enroll "$DEMO/agents/demo-b" demo-b 127.0.0.3 "http://$HTTP_BIND"
  # Both on the default ports (peers test to those), each bound to its own loopback address;
  # the lab's and these agents share one kernel clock, so their one-way figures are exact.
  start agent-demo-a "$AGENT" run --state-dir "$DEMO/agents/demo-a" --iperf3-bind 127.0.0.2 --echo-bind 127.0.0.2 \
    --twamp-bind 127.0.0.2 --twamp-clock-shared true
  start agent-demo-b "$AGENT" run --state-dir "$DEMO/agents/demo-b" --iperf3-bind 127.0.0.3 --echo-bind 127.0.0.3 \
    --twamp-bind 127.0.0.3 --twamp-clock-shared true
fi

cat <<EOF

  Fathom is running: http://$HTTP_BIND/
  $ADMIN
  Ping results appear within a minute on the Paths page. Ctrl-C stops everything.
  $( [ "$use_lab" -eq 1 ] && echo "Sites: athens, frankfurt, geneva, newyork (lab namespaces; fathom-lab set --state-dir $LAB_STATE LINK delay_ms=...)" )
  Alert email lands in $VAR/mail/ (one .eml per message); incidents at http://$HTTP_BIND/incidents
  $( [ "$use_lab" -eq 1 ] && echo "See one: once the demo has run ~10 minutes (the RTT baseline), add 10 ms each way between
  frankfurt and geneva; an incident, its page and its mail follow within ~5 minutes:
    $LAB set --state-dir $LAB_STATE fg delay_ms=14.5      (undo: delay_ms=4.5)" )

EOF
wait -n "${PIDS[@]}" || true
log "a process exited; see var/demo/logs/"
