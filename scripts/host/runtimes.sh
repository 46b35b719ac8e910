#!/usr/bin/env bash
# Container runtimes other than Debian's containerd 1.6, built from the Go module proxy at pinned
# releases as test infrastructure (never committed), cached under /var/tmp keyed by release; prints
# the directory of the binaries.
#
#   scripts/host/runtimes.sh containerd          # containerd 2.x: containerd, ctr, containerd-shim-runc-v2
#   scripts/host/runtimes.sh containerd --path   # print the directory, build nothing (exit 1 if incomplete)
#
# Run a private containerd 2 (and the tests on it) with those binaries first on PATH:
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" scripts/host/containerd.sh start
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" bun test test/integration/pod
# runc stays Debian's (and crun, when installed). Static builds without cgo: no btrfs, devmapper or
# zfs snapshotters, which bunlet's tests do not use (overlayfs and native are built in).
set -euo pipefail

CONTAINERD_RELEASE="${BUNLET_CONTAINERD2_RELEASE:-v2.4.2}"
CACHE="${BUNLET_RUNTIMES_CACHE:-/var/tmp/bunlet-runtimes}"

say() { echo "runtimes: $*" >&2; }

containerd2() {
  local bin="$CACHE/containerd-$CONTAINERD_RELEASE/bin" want=(containerd ctr containerd-shim-runc-v2) missing=() b
  for b in "${want[@]}"; do [ -x "$bin/$b" ] || missing+=("$b"); done
  if [ ${#missing[@]} -eq 0 ]; then echo "$bin"; return 0; fi
  [ "${1:-}" = "--path" ] && return 1
  command -v go >/dev/null || { say "go is not installed: building containerd $CONTAINERD_RELEASE needs Go >= 1.26"; exit 1; }
  say "building containerd $CONTAINERD_RELEASE (${missing[*]}) into $bin"
  mkdir -p "$bin.tmp"
  local pkgs=() m
  for m in "${missing[@]}"; do pkgs+=("github.com/containerd/containerd/v2/cmd/$m@$CONTAINERD_RELEASE"); done
  # The version stamp containerd prints (`containerd --version`, the CRI's runtimeVersion).
  local ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_RELEASE"
  GOBIN="$bin.tmp" CGO_ENABLED=0 GOFLAGS=-mod=mod go install -trimpath -ldflags "$ldflags" -tags "no_btrfs no_devmapper no_zfs" "${pkgs[@]}" >&2
  mkdir -p "$bin"
  for m in "${missing[@]}"; do mv "$bin.tmp/$m" "$bin/$m"; done
  rmdir "$bin.tmp"
  echo "$bin"
}

case "${1:-}" in
  containerd) shift; containerd2 "$@" ;;
  *) say "usage: runtimes.sh containerd [--path]"; exit 2 ;;
esac
