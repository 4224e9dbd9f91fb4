#!/bin/sh
# Container entrypoint: enrol once with FATHOM_ENROLL_TOKEN (the credential is kept in the
# state volume), then run. Without a credential or a token it says what to do and exits.
set -eu
STATE=${FATHOM_STATE_DIR:-/var/lib/fathom-agent}
if [ ! -f "$STATE/credential.json" ]; then
  if [ -z "${FATHOM_ENROLL_TOKEN:-}" ]; then
    echo "not enrolled: create a token (python manage.py create_enrollment_token) and set FATHOM_ENROLL_TOKEN" >&2
    exit 2
  fi
  fathom-agent enroll --server "$FATHOM_SERVER" --token "$FATHOM_ENROLL_TOKEN" \
    --name "${FATHOM_AGENT_NAME:-$(hostname)}" --address "${FATHOM_AGENT_ADDRESS:-$(hostname -i | cut -d' ' -f1)}" \
    --state-dir "$STATE"
fi
exec fathom-agent run --state-dir "$STATE" "$@"
