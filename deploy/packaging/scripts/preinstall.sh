#!/bin/sh
# The agent's own system user: it owns the credential and the spool in /var/lib/fathom-agent.
set -e
if ! getent group fathom-agent >/dev/null; then
  groupadd --system fathom-agent
fi
if ! getent passwd fathom-agent >/dev/null; then
  nologin=$(command -v nologin || echo /usr/sbin/nologin)
  useradd --system --gid fathom-agent --home-dir /var/lib/fathom-agent --no-create-home \
    --shell "$nologin" --comment "Fathom measurement agent" fathom-agent
fi
