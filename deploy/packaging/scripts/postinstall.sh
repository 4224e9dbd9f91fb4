#!/bin/sh
# deb: "configure" with the old version (empty on a first install); rpm: 1 install, 2 upgrade.
set -e
chown fathom-agent:fathom-agent /var/lib/fathom-agent
chmod 0700 /var/lib/fathom-agent
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
upgrade=no
if [ "${1:-}" = "configure" ] && [ -n "${2:-}" ]; then upgrade=yes; fi
if [ "${1:-}" = "2" ]; then upgrade=yes; fi
if [ "$upgrade" = yes ]; then
  # The running agent picks up the new binary; its credential and spool stay where they are.
  if [ -d /run/systemd/system ]; then
    systemctl try-restart fathom-agent.service || true
  fi
else
  cat <<'MSG'
fathom-agent is installed but not started. Set FATHOM_SERVER and FATHOM_ENROLL_TOKEN in
/etc/fathom-agent.env, check the host with `fathom-agent doctor`, then:
  systemctl enable --now fathom-agent
MSG
fi
