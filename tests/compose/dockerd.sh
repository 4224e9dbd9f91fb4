#!/usr/bin/env bash
# A Docker engine for the compose test: installs Debian's docker.io, docker-compose and
# debootstrap when missing, and starts a private dockerd when none answers. Its bridge and
# compose networks take addresses from 198.19.192.0/20 (RFC 2544's benchmarking block, clear
# of the lab's 198.18.0.0/16 and 198.19.0.0/24), never a private range. The host's iptables
# rules are saved first and put back by `stop`, so Docker's FORWARD policy does not outlive
# the test.
#
# Usage: tests/compose/dockerd.sh start|stop
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STATE=$ROOT/var/compose
PACKAGES=(docker.io docker-compose debootstrap iptables)

log() { printf '[dockerd] %s\n' "$*" >&2; }

install_packages() {
  local missing=() pkg
  for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start() {
  install_packages
  mkdir -p "$STATE"
  if docker info >/dev/null 2>&1; then log "using the running Docker engine"; return; fi
  iptables-save >"$STATE/iptables.before"
  log "starting dockerd (log: $STATE/dockerd.log)"
  # Niced: image builds share the 2 cores with the suites that run beside them.
  nice -n 10 dockerd --bip 198.19.192.1/24 --default-address-pool base=198.19.200.0/21,size=24 \
    --pidfile "$STATE/dockerd.pid" >"$STATE/dockerd.log" 2>&1 &
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return
    sleep 1
  done
  log "dockerd did not start"; tail -20 "$STATE/dockerd.log" >&2; return 1
}

stop() {
  [ -f "$STATE/dockerd.pid" ] || return 0
  local pid
  pid=$(cat "$STATE/dockerd.pid")
  log "stopping dockerd ($pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  pkill -f 'containerd --config /var/run/docker/containerd' 2>/dev/null || true
  rm -f "$STATE/dockerd.pid"
  ip link del docker0 2>/dev/null || true
  if [ -f "$STATE/iptables.before" ]; then
    iptables-restore <"$STATE/iptables.before" && rm -f "$STATE/iptables.before"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
