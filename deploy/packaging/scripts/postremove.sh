#!/bin/sh
# Removal keeps the credential and the spool (a reinstall carries on); purge (deb) removes them
# and the user.
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload || true
fi
if [ "${1:-}" = "purge" ]; then
  rm -rf /var/lib/fathom-agent
  if getent passwd fathom-agent >/dev/null; then userdel fathom-agent || true; fi
  if getent group fathom-agent >/dev/null; then groupdel fathom-agent || true; fi
fi
