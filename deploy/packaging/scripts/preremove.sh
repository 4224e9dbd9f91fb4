#!/bin/sh
# deb: "remove" or "upgrade"; rpm: 0 when the package goes, 1 on upgrade. Only going stops it.
set -e
case "${1:-}" in
  remove|0)
    if [ -d /run/systemd/system ]; then
      systemctl disable --now fathom-agent.service || true
    fi
    ;;
esac
