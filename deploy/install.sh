#!/usr/bin/env bash
# Installs everything Fathom needs on Debian 12, idempotently: Debian packages, TimescaleDB
# built from Debian 13's source package against PostgreSQL 15 (Debian 12 does not package
# it), the Python virtualenv, the frontend's npm packages and the Go module cache.
# Used by `make demo`, `make test` and CI alike, so what CI proves is what users run.
#
# Usage: deploy/install.sh [system|python|node|go|all]   (default: all)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PG_MAJOR=15
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
VENV=${FATHOM_VENV:-$ROOT/var/venv}
APT_PACKAGES=(
  postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR redis-server
  iperf3 iputils-ping traceroute mtr-tiny scamper iproute2 procps stress-ng rpm debootstrap systemd-container
  chromium cmake libssl-dev dpkg-dev gcc make ca-certificates curl
  prometheus # promtool checks /metrics' exposition (backend/metrics/tests); no daemon starts without systemd
)

log() { printf '[install] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

install_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "Debian packages present"; return; fi
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The Debian package starts a system-wide cluster and Redis; Fathom runs its own private
  # instances under ./var, so the system services are not needed.
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    as_root systemctl disable --now postgresql redis-server >/dev/null 2>&1 || true
  fi
}

timescaledb_installed() {
  [ -f "$("$PG_CONFIG" --pkglibdir)/timescaledb.so" ] &&
    ls "$("$PG_CONFIG" --sharedir)"/extension/timescaledb--*.sql >/dev/null 2>&1
}

install_timescaledb() {
  if timescaledb_installed; then log "TimescaleDB present"; return; fi
  log "building TimescaleDB from Debian 13's source package"
  local list=/etc/apt/sources.list.d/fathom-trixie-src.list
  if [ ! -f "$list" ]; then
    echo "deb-src http://deb.debian.org/debian trixie main" | as_root tee "$list" >/dev/null
    as_root apt-get update -qq
  fi
  local build
  build=$(mktemp -d)
  (
    cd "$build"
    apt-get source -qq timescaledb >/dev/null 2>&1 || apt-get source timescaledb
    cd timescaledb-*/
    cmake -S . -B build -DPG_CONFIG="$PG_CONFIG" -DAPACHE_ONLY=1 -DREGRESS_CHECKS=OFF \
      -DTAP_CHECKS=OFF -DSEND_TELEMETRY_DEFAULT=OFF -DUSE_TELEMETRY=OFF \
      -DWARNINGS_AS_ERRORS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j "$(nproc)" >/dev/null
    as_root cmake --install build >/dev/null
  )
  rm -rf "$build"
  timescaledb_installed || { log "TimescaleDB build did not install"; exit 1; }
  log "TimescaleDB installed"
}

install_python() {
  local stamp=$VENV/.requirements.sha256
  local want
  local reqs=("$ROOT/backend/requirements.txt" "$ROOT/backend/requirements-dev.txt" "$ROOT/tests/requirements.txt")
  want=$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then log "Python packages present"; return; fi
  log "installing Python packages into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q "${reqs[@]/#/-r}"
  echo "$want" >"$stamp"
}

install_node() {
  local dir stamp want
  for dir in frontend tests; do
    stamp=$ROOT/$dir/node_modules/.package-lock.sha256
    want=$(sha256sum "$ROOT/$dir/package-lock.json" | cut -d' ' -f1)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then log "npm packages present in $dir"; continue; fi
    log "installing npm packages in $dir"
    (cd "$ROOT/$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  done
}

install_go() {
  log "fetching Go modules"
  (cd "$ROOT/agents" && go mod download)
  (cd "$ROOT/deploy/packaging" && go mod download)
}

# The TimescaleDB build is CPU-bound and the package fetches wait on the network: run them
# side by side (a fresh machine saves minutes), and fail if any of them failed.
install_in_parallel() {
  local steps=("$@") pids=() i failed=0
  for i in "${!steps[@]}"; do
    "${steps[$i]}" &
    pids[i]=$!
  done
  for i in "${!steps[@]}"; do
    wait "${pids[$i]}" || { log "${steps[$i]} failed"; failed=1; }
  done
  return "$failed"
}

case "${1:-all}" in
  system) install_apt_packages; install_timescaledb ;;
  python) install_python ;;
  node) install_node ;;
  go) install_go ;;
  all) install_apt_packages; install_in_parallel install_timescaledb install_python install_node install_go ;;
  *) echo "usage: $0 [system|python|node|go|all]" >&2; exit 2 ;;
esac
