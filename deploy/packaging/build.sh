#!/usr/bin/env bash
# `make packages`: fathom-agent as .deb and .rpm for amd64 and arm64 into var/packages/, with
# nfpm (pinned in this directory's go.mod). The binary carries the package's version, so
# `fathom-agent --version` and the Agents page show what the package manager shows.
#   PKG_VERSION  default: the VERSION file's release plus the commit (0.3.0+git.1a2b3c4)
#   PKG_ARCHES   default: "amd64 arm64"
#   PKG_OUT      default: var/packages (the binaries build under its build/)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/deploy/packaging"
OUT=${PKG_OUT:-$ROOT/var/packages}
release=$(cat "$ROOT/VERSION")
commit=$(git -C "$ROOT" rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
export PKG_VERSION=${PKG_VERSION:-$release+git.$commit}
case "$PKG_VERSION" in
  [0-9]*) ;;
  *) echo "PKG_VERSION must start with a digit (deb and rpm versions do): $PKG_VERSION" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
for arch in ${PKG_ARCHES:-amd64 arm64}; do
  bin="$OUT/build/$arch/fathom-agent"
  (cd "$ROOT/agents" && CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
    -ldflags "-X main.version=$PKG_VERSION" -o "$bin" ./cmd/fathom-agent)
  # nfpm expands the environment in a few fields only (not a file's source): fill them here.
  config="$OUT/build/$arch/nfpm.yaml"
  sed -e "s|\${PKG_ARCH}|$arch|" -e "s|\${PKG_VERSION}|$PKG_VERSION|" -e "s|\${BIN}|$bin|" \
    "$HERE/nfpm.yaml" >"$config"
  for packager in deb rpm; do
    # Sources are relative to deploy/packaging, where nfpm runs (its go.mod pins it).
    (cd "$HERE" && go tool nfpm package --config "$config" --packager "$packager" --target "$OUT/" >/dev/null)
  done
done
ls -1 "$OUT"/*.deb "$OUT"/*.rpm
