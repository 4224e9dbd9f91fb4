#!/usr/bin/env bash
# `make demo-screenshots`: the README's screenshots from the demo's own data. Runs the demo
# (deploy/demo.sh: as root, the lab's four sites), waits until frankfurt -> athens has
# FATHOM_SHOTS_MIN_RUNS analysed throughput runs and a trace (the demo tests throughput every
# 10 minutes, so a first run takes about 45 minutes; the data stays in var/, so later runs
# start with history), photographs the views with Chromium (tests/browser/demo-screenshots.spec.ts)
# into docs/screenshots/, and stops the demo. PostgreSQL and Redis are left running.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
HTTP_BIND=${FATHOM_HTTP_BIND:-127.0.0.1:8000}
SHOTS=${FATHOM_SHOTS_DIR:-$ROOT/docs/screenshots}
mkdir -p var/demo/logs

log() { printf '[demo-screenshots] %s\n' "$*" >&2; }

# Its own process group, so stopping it stops every process the demo started.
FATHOM_DEMO_KEEP_SERVICES=1 FATHOM_HTTP_BIND=$HTTP_BIND setsid bash deploy/demo.sh >var/demo/logs/screenshots-demo.log 2>&1 &
demo=$!
stop_demo() {
  kill -TERM -- "-$demo" 2>/dev/null || true
  wait "$demo" 2>/dev/null || true
}
trap stop_demo EXIT
log "demo started (log var/demo/logs/screenshots-demo.log)"

for _ in $(seq 600); do
  curl -fs "http://$HTTP_BIND/api/v1/auth/csrf/" >/dev/null 2>&1 && break
  kill -0 "$demo" 2>/dev/null || { log "the demo exited; see var/demo/logs/"; exit 1; }
  sleep 1
done

# The runner's own output (a failure's trace) goes to var/, not beside the screenshots.
(cd tests && FATHOM_URL="http://$HTTP_BIND" FATHOM_USER=admin FATHOM_PASSWORD="$(cat ../var/secrets/admin_password)" \
  FATHOM_ARTIFACTS="$SHOTS" npx playwright test demo-screenshots.spec.ts -c browser/playwright.config.ts \
  --output "$ROOT/var/demo/playwright")
log "screenshots in $SHOTS"
