#!/usr/bin/env bash
# Container runtimes other than Debian's containerd 1.6, built from the Go module proxy at pinned
# releases as test infrastructure (never committed), cached under /var/tmp keyed by release; prints
# the directory of the binaries.
#
#   scripts/host/runtimes.sh containerd          # containerd 2.x: containerd, ctr, containerd-shim-runc-v2
#   scripts/host/runtimes.sh containerd --path   # print the directory, build nothing (exit 1 if incomplete)
#   scripts/host/runtimes.sh runc                # runc ≥ 1.2 (user namespaces: idmapped mounts), with seccomp
#   scripts/host/runtimes.sh runc --path
#   scripts/host/runtimes.sh crio                # CRI-O: crio, pinns, copyimg (loads image tarballs into its storage)
#   scripts/host/runtimes.sh crio --path
#
# Run a private containerd 2 (and the tests on it) with those binaries first on PATH:
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" scripts/host/containerd.sh start
#   BUNLET_CONTAINERD_BIN="$(scripts/host/runtimes.sh containerd)" bun test test/integration/pod
# runc stays Debian's (and crun, when installed) unless BUNLET_RUNC_BIN names the directory of the runc
# built here, which containerd.sh then makes the runtimes' BinaryName:
#   BUNLET_RUNC_BIN="$(scripts/host/runtimes.sh runc)" BUNLET_CONTAINERD_BIN=… scripts/host/containerd.sh start
# containerd: static builds without cgo: no btrfs, devmapper or zfs snapshotters, which bunlet's tests do
# not use (overlayfs and native are built in). runc: cgo with libseccomp (scripts/host/setup.sh installs
# libseccomp-dev), its Makefile's build tags. crio: cgo with libseccomp, the tags of CRI-O's Makefile
# on a host without btrfs, devicemapper, gpgme, SELinux or AppArmor libraries; pinns (C) with gcc from
# the module's pinns/ (static, as its Makefile builds it); copyimg from the module's test/copyimg, the
# image copier of CRI-O's own integration tests, on the same containers/storage as crio.
set -euo pipefail

CONTAINERD_RELEASE="${BUNLET_CONTAINERD2_RELEASE:-v2.4.2}"
RUNC_RELEASE="${BUNLET_RUNC_RELEASE:-v1.3.7}"
CRIO_RELEASE="${BUNLET_CRIO_RELEASE:-v1.36.2}"
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

# crio_src DIR: the module's source, writable, its go.mod made buildable from the module proxy.
crio_src() {
  local src="$1" mod
  [ -f "$src/go.mod" ] && return 0
  mod="$(GOFLAGS=-mod=mod go mod download -json "github.com/cri-o/cri-o@$CRIO_RELEASE" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [ -d "$mod" ] || { say "go mod download github.com/cri-o/cri-o@$CRIO_RELEASE failed"; exit 1; }
  rm -rf "$src.tmp" && cp -r "$mod" "$src.tmp" && chmod -R u+w "$src.tmp"
  # A release may require Kubernetes staging modules at a release candidate the proxy no longer serves
  # (v1.36.2: k8s.io/cri-client v0.36.0-rc.0); those are replaced by their release.
  local m v
  while read -r m v; do
    if ! GOFLAGS=-mod=mod go mod download "$m@$v" >/dev/null 2>&1; then
      say "$m $v is not served: replaced by ${v%%-*}"
      (cd "$src.tmp" && go mod edit -replace "$m=$m@${v%%-*}")
    fi
  done < <(sed -nE 's/^\s+(k8s\.io\/[a-z0-9-]+) (v[0-9.]+-(rc|alpha|beta)\.[0-9]+).*/\1 \2/p' "$src.tmp/go.mod")
  mv "$src.tmp" "$src"
}

crio_() {
  local dir="$CACHE/crio-$CRIO_RELEASE" want=(crio pinns copyimg) missing=() b
  local bin="$dir/bin"
  for b in "${want[@]}"; do [ -x "$bin/$b" ] || missing+=("$b"); done
  if [ ${#missing[@]} -eq 0 ]; then echo "$bin"; return 0; fi
  [ "${1:-}" = "--path" ] && return 1
  command -v go >/dev/null || { say "go is not installed: building CRI-O $CRIO_RELEASE needs Go >= 1.26"; exit 1; }
  command -v gcc >/dev/null && [ -f /usr/include/seccomp.h ] || { say "gcc or libseccomp-dev is not installed: run scripts/host/setup.sh"; exit 1; }
  say "building CRI-O $CRIO_RELEASE (${missing[*]}) into $bin"
  crio_src "$dir/src"
  mkdir -p "$bin"
  # CRI-O's Makefile's BUILDTAGS where no btrfs, devicemapper, gpgme, SELinux or AppArmor headers exist.
  local tags="containers_image_ostree_stub containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper btrfs_noversion seccomp"
  local ldflags="-s -w -X github.com/cri-o/cri-o/internal/version.buildCommit=$CRIO_RELEASE"
  local pkgs=()
  [[ " ${missing[*]} " == *" crio "* ]] && pkgs+=(./cmd/crio)
  [[ " ${missing[*]} " == *" copyimg "* ]] && pkgs+=(./test/copyimg)
  if [ ${#pkgs[@]} -gt 0 ]; then
    (cd "$dir/src" && CGO_ENABLED=1 GOFLAGS="-mod=mod -trimpath" go build -tags "$tags" -ldflags "$ldflags" -o "$bin.tmp/" "${pkgs[@]}" >&2)
    for b in "$bin.tmp"/*; do mv "$b" "$bin/"; done
    rmdir "$bin.tmp"
  fi
  if [[ " ${missing[*]} " == *" pinns "* ]]; then
    make -C "$dir/src/pinns" CC=gcc >&2
    mv "$dir/src/bin/pinns" "$bin/pinns"
  fi
  echo "$bin"
}

case "${1:-}" in
  containerd) shift; containerd2 "$@" ;;
  runc) shift; runc_ "$@" ;;
  crio) shift; crio_ "$@" ;;
  *) say "usage: runtimes.sh containerd|runc|crio [--path]"; exit 2 ;;
esac
