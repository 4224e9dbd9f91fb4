#!/usr/bin/env bash
# Runs every Fathom test suite, even after one fails, and ends with one line per suite and a
# closing "N passed, N failed" count. Called by `make test` after install and services-start.
# Each suite's full output goes to var/test-logs/<suite>.log and is echoed as it runs.
#
# FATHOM_SUITES="ruff mypy ..." runs a subset.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV=$ROOT/var/venv
LOGS=$ROOT/var/test-logs
mkdir -p "$LOGS"
set -a
eval "$(bash deploy/services.sh env)"
FATHOM_DEBUG=1
set +a

ALL_SUITES="ruff mypy migrations openapi contract pytest interop go frontend compose system lab"
SUITES=${FATHOM_SUITES:-$ALL_SUITES}
declare -a SUMMARY=()
passed=0
failed=0

suite_ruff() {
  cd backend && "$VENV/bin/ruff" check . ../tests ../contract && "$VENV/bin/ruff" format --check . ../tests ../contract
}
suite_mypy() {
  (cd backend && "$VENV/bin/mypy" . ../contract/codegen.py) && (cd tests && "$VENV/bin/mypy" --config-file mypy.ini system lab compose interop fakes)
}
suite_migrations() { cd backend && "$VENV/bin/python" manage.py makemigrations --check --dry-run; }
suite_openapi() { make -s openapi-check; }
# The UI's contract types are what contract/codegen.py makes of the schemas; the Go and
# Python views are held to the same schemas by tests in the go and pytest suites.
suite_contract() { make -s contract-check; }
# The perfsonar app's tests run in the interop suite (make interop-test), one line per case.
suite_pytest() { cd backend && "$VENV/bin/pytest" -q -p no:cacheprovider --ignore=perfsonar; }
suite_interop() { make -s interop-test; }
suite_go() {
  cd agents
  local unformatted verbose=$LOGS/go-verbose.log rc
  unformatted=$(gofmt -l .)
  if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; return 1; fi
  go vet ./... || return 1
  go test -race -count=1 -v ./... >"$verbose" 2>&1
  rc=$?
  # Package lines and failures only; the verbose log keeps everything.
  grep -E '^(ok|FAIL|---\s*FAIL|panic:|\s+\S+_test\.go:[0-9]+:)' "$verbose"
  echo "go test: $(grep -c -- '--- PASS' "$verbose") passed, $(grep -c -- '--- FAIL' "$verbose") failed, $(grep -c -- '--- SKIP' "$verbose") skipped"
  return $rc
}
suite_frontend() {
  # check:api fails when src/api/schema.d.ts no longer matches backend/openapi.yaml.
  export NO_COLOR=1
  cd frontend && npm run -s check:api && npm run -s typecheck && npm run -s lint && npm test --silent &&
    npm run -s build
}
# The frontend suite has just built the UI; build it again only when its sources are newer.
frontend_is_built() {
  [ -f frontend/dist/index.html ] &&
    [ -z "$(find frontend/src frontend/index.html frontend/package.json -newer frontend/dist/index.html | head -1)" ]
}
suite_system() {
  make -s agents && { frontend_is_built || make -s frontend; } &&
    FATHOM_ARTIFACTS=$ROOT/tests/artifacts "$VENV/bin/pytest" -q -p no:cacheprovider --durations=12 -c tests/pytest.ini tests/system
}
# The compose deployment built and run for real (tests/compose): its images were being
# built in the background since the start (compose_prepare below).
suite_compose() {
  if [ "$(id -u)" -ne 0 ]; then echo "compose: skipped, needs root (Docker engine, debootstrap)"; return 0; fi
  local rc=0 waited=0
  if [ -n "${COMPOSE_PREPARE_PID:-}" ]; then
    echo "waiting for the image builds (log: var/test-logs/compose-prepare.log)"
    # Not this subshell's child: wait for the exit status it leaves.
    while [ ! -f "$LOGS/compose-prepare.rc" ] && [ "$waited" -lt 1800 ]; do sleep 5; waited=$((waited + 5)); done
    [ "$(cat "$LOGS/compose-prepare.rc" 2>/dev/null)" = 0 ] || { tail -40 "$LOGS/compose-prepare.log"; rc=1; }
    tail -1 "$LOGS/compose-prepare.log"
  fi
  [ "$rc" -eq 0 ] && { make -s agents && FATHOM_ARTIFACTS=$ROOT/tests/artifacts "$VENV/bin/pytest" -q -s \
    -p no:cacheprovider -c tests/pytest.ini tests/compose || rc=$?; }
  bash tests/compose/dockerd.sh stop
  return "$rc"
}
suite_lab() {
  # The lab needs network namespaces and TUN devices: root. CI runs as root.
  if [ "$(id -u)" -ne 0 ]; then echo "lab: skipped, needs root"; return 0; fi
  make -s agents && "$VENV/bin/python" -m tests.lab.lab_check
}

# The count a suite's runner printed, for the summary line.
suite_count() {
  local log=$1
  grep -Eo '[0-9]+ passed[^|]*|no issues found in [0-9]+ source files|[0-9]+ files already formatted' "$log" |
    tail -1 | cut -c1-60 || true
}

# Docker image builds take minutes and mostly wait on downloads: start them now, beside the
# quick suites, niced (tests/compose/dockerd.sh).
if [[ " $SUITES " == *" compose "* ]] && [ "$(id -u)" -eq 0 ]; then
  rm -f "$LOGS/compose-prepare.rc"
  { bash tests/compose/prepare.sh >"$LOGS/compose-prepare.log" 2>&1; echo $? >"$LOGS/compose-prepare.rc"; } &
  COMPOSE_PREPARE_PID=$!
fi

for suite in $SUITES; do
  log=$LOGS/$suite.log
  echo "=== suite $suite ==="
  start=$(date +%s)
  ( "suite_$suite" ) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  took=$(( $(date +%s) - start ))
  count=$(suite_count "$log")
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); SUMMARY+=("$(printf 'PASS  %-11s %4ss  %s' "$suite" "$took" "$count")")
  else
    failed=$((failed + 1)); SUMMARY+=("$(printf 'FAIL  %-11s %4ss  %s (log: var/test-logs/%s.log)' "$suite" "$took" "$count" "$suite")")
  fi
done

echo
echo "=== summary ==="
printf '%s\n' "${SUMMARY[@]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
