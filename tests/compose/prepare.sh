#!/usr/bin/env bash
# Everything the compose test needs before it starts the stack: a Docker engine, the local
# base images and Fathom's images built on them. tests/run-suites.sh runs this in the
# background while the quick suites run, so the image builds cost little of CI's time; the
# compose suite then finds the images built (test_stack.py builds them itself otherwise).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/compose
started=$(date +%s)
bash "$HERE/dockerd.sh" start
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Placeholders: building needs the variables compose interpolates, not real secrets.
bash "$HERE/base-images.sh" >"$work/build.env"
printf 'POSTGRES_PASSWORD=build\nREDIS_PASSWORD=build\n' >>"$work/build.env"
touch "$work/agent.env"
cd "$ROOT"
FATHOM_ENV_FILE=$work/build.env FATHOM_AGENT_ENV_FILE=$work/agent.env \
  docker-compose -p fathomtest --env-file "$work/build.env" build
echo "compose images built in $(( $(date +%s) - started )) s"
