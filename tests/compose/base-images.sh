#!/usr/bin/env bash
# Local stand-ins for the public images docker-compose.yml builds on and runs, for machines
# that reach no container registry: a Debian 12 rootfs made by debootstrap and imported with
# `docker import`, and on it Python, Node.js, Go, PostgreSQL with TimescaleDB, Redis and Caddy
# (tests/compose/images/). Each is built once and kept until its recipe (its Dockerfile and
# the images/NAME-* files it copies) changes; FATHOM_BASE_REBUILD=1 builds anew.
# Prints the compose variables that point docker-compose.yml at them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/compose
PREFIX=fathom-base
DEBIAN=$PREFIX/debian:12
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config

log() { printf '[base-images] %s\n' "$*" >&2; }
have() { [ "${FATHOM_BASE_REBUILD:-0}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }
# The recipe of stand-in NAME: a digest of its Dockerfile and the files beside it it copies.
recipe() { cat "$HERE/images/$1.Dockerfile" "$HERE/images/$1"-* 2>/dev/null | sha256sum | cut -c1-16; }
# have_current NAME TAG: TAG exists and was built from NAME's current recipe.
have_current() {
  have "$2" && [ "$(docker image inspect --format '{{index .Config.Labels "fathom.recipe"}}' "$2")" = "$(recipe "$1")" ]
}

debian_image() {
  have "$DEBIAN" && return
  local rootfs
  rootfs=$(mktemp -d)
  log "debootstrap bookworm into $rootfs"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" \
    "${FATHOM_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$rootfs.log" 2>&1 ||
    { tail -20 "$rootfs.log" >&2; return 1; }
  # The host's trust store, with any local CA it adds (egress through a TLS-inspecting proxy
  # needs it for pip, npm and Go inside the builds).
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
  # The host's package sources (updates and security too): the images then get the same
  # package versions as the host, PostgreSQL's among them, which the host's TimescaleDB build
  # (copied into the timescaledb image) was compiled against.
  cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list" 2>/dev/null || : >"$rootfs/etc/apt/sources.list"
  # (Not deploy/install.sh's own fathom-* source lists: the images build nothing from source.)
  find /etc/apt/sources.list.d -maxdepth 1 \( -name '*.list' -o -name '*.sources' \) ! -name 'fathom-*' \
    -exec cp {} "$rootfs/etc/apt/sources.list.d/" \;
  tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$DEBIAN" >/dev/null
  rm -rf "$rootfs" "$rootfs.log"
  log "$DEBIAN imported"
}

# build NAME CONTEXT: images/NAME.Dockerfile on the Debian image, in CONTEXT.
build() {
  local name=$1 context=$2 tag=$3
  have_current "$name" "$tag" && return
  log "building $tag"
  # The legacy builder's deprecation notice is noise here; errors still show.
  docker build -q -f "$HERE/images/$name.Dockerfile" --build-arg BASE_IMAGE="$DEBIAN" \
    --label "fathom.recipe=$(recipe "$name")" -t "$tag" "$context" \
    2> >(grep -vE 'DEPRECATED|buildx|^\s*$|docs.docker.com' >&2) >/dev/null
}

context_with() {
  local dir
  dir=$(mktemp -d)
  "$@" "$dir"
  echo "$dir"
}
node_context() { mkdir -p "$1/node/bin" "$1/node/lib/node_modules"; cp "$(command -v node)" "$1/node/bin/";
  cp -r "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$1/node/lib/node_modules/npm"; }
go_context() { cp -r "$(go env GOROOT)" "$1/go"; }
timescaledb_context() {
  mkdir -p "$1/timescaledb/lib" "$1/timescaledb/extension"
  cp "$("$PG_CONFIG" --pkglibdir)"/timescaledb*.so "$1/timescaledb/lib/"
  cp "$("$PG_CONFIG" --sharedir)"/extension/timescaledb* "$1/timescaledb/extension/"
  cp "$HERE/images/timescaledb-entrypoint.sh" "$1/"
}

debian_image
empty=$(mktemp -d)
build python "$empty" "$PREFIX/python:3.11"
build redis "$empty" "$PREFIX/redis:7"
build caddy "$empty" "$PREFIX/caddy:2"
for spec in node:node:20 golang:go:1.26 timescaledb:timescaledb:pg15; do
  IFS=: read -r name ctx version <<<"$spec"
  have_current "$name" "$PREFIX/$name:$version" && continue
  dir=$(context_with "${ctx}_context")
  build "$name" "$dir" "$PREFIX/$name:$version"
  rm -rf "$dir"
done
rm -rf "$empty"

cat <<VARS
FATHOM_DEBIAN_IMAGE=$DEBIAN
FATHOM_PYTHON_IMAGE=$PREFIX/python:3.11
FATHOM_NODE_IMAGE=$PREFIX/node:20
FATHOM_GO_IMAGE=$PREFIX/golang:1.26
FATHOM_TIMESCALEDB_IMAGE=$PREFIX/timescaledb:pg15
FATHOM_REDIS_IMAGE=$PREFIX/redis:7
FATHOM_CADDY_IMAGE=$PREFIX/caddy:2
VARS
