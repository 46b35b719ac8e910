#!/usr/bin/env bash
# Container runtimes other than Debian's containerd 1.6, built from the Go module proxy at pinned
# releases as test infrastructure (never committed), cached under /var/tmp keyed by release; prints
# the directory of the binaries.
#
#   scripts/host/runtimes.sh containerd          # containerd 2.x: containerd, ctr, containerd-shim-runc-v2
#   scripts/host/runtimes.sh containerd --path   # print the directory, build nothing (exit 1 if incomplete)
#   scripts/host/runtimes.sh runc                # runc ≥ 1.2 (user namespaces: idmapped mounts), with seccomp
#   scripts/host/runtimes.sh runc --path
#
# Run a private containerd 2 (and the tests on it) with those binaries first on PATH:
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" scripts/host/containerd.sh start
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" bun test test/integration/pod
# runc stays Debian's (and crun, when installed) unless BUNLET_RUNC_BIN names the directory of the runc
# built here, which containerd.sh then makes the runtimes' BinaryName:
#   BUNLET_RUNC_BIN="$(scripts/host/runtimes.sh runc)" BUNLET_CONTAINERD_BIN=… scripts/host/containerd.sh start
# containerd: static builds without cgo: no btrfs, devmapper or zfs snapshotters, which bunlet's tests do
# not use (overlayfs and native are built in). runc: cgo with libseccomp (scripts/host/setup.sh installs
# libseccomp-dev), its Makefile's build tags.
set -euo pipefail

CONTAINERD_RELEASE="${BUNLET_CONTAINERD2_RELEASE:-v2.4.2}"
RUNC_RELEASE="${BUNLET_RUNC_RELEASE:-v1.3.7}"
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

runc_() {
  local bin="$CACHE/runc-$RUNC_RELEASE/bin"
  if [ -x "$bin/runc" ]; then echo "$bin"; return 0; fi
  [ "${1:-}" = "--path" ] && return 1
  command -v go >/dev/null || { say "go is not installed: building runc $RUNC_RELEASE needs Go"; exit 1; }
  [ -f /usr/include/seccomp.h ] || { say "libseccomp-dev is not installed: run scripts/host/setup.sh"; exit 1; }
  say "building runc $RUNC_RELEASE into $bin"
  mkdir -p "$bin.tmp"
  GOBIN="$bin.tmp" CGO_ENABLED=1 GOFLAGS=-mod=mod go install -trimpath -tags "seccomp urfave_cli_no_docs" \
    -ldflags "-s -w -X main.gitCommit=$RUNC_RELEASE" "github.com/opencontainers/runc@$RUNC_RELEASE" >&2
  mkdir -p "$bin"
  mv "$bin.tmp/runc" "$bin/runc"
  rmdir "$bin.tmp"
  echo "$bin"
}

case "${1:-}" in
  containerd) shift; containerd2 "$@" ;;
  runc) shift; runc_ "$@" ;;
  *) say "usage: runtimes.sh containerd|runc [--path]"; exit 2 ;;
esac
