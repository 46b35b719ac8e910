#!/usr/bin/env bash
# Upstream BusyBox for the e2e images, built once from its source and cached; prints the binary's path.
#
#   scripts/upstream/busybox.sh      # /var/tmp/bunlet-upstream/busybox-1.37.0/busybox
#
# Why not Debian's busybox-static: Debian patches ash to drop environment variables whose names are not
# shell identifiers (`data-1`), which upstream BusyBox keeps and hands on to the programs it runs; the
# release's e2e busybox image is upstream BusyBox 1.37.0, and its ConfigMap and Secret `envFrom` tests
# read such names through `sh -c env`. The source is the orig tarball Debian's archive serves (the
# unpatched upstream release), checked against its SHA-256; defconfig, linked statically.
set -euo pipefail

VERSION=1.37.0
SHA256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4
URL="http://deb.debian.org/debian/pool/main/b/busybox/busybox_${VERSION}.orig.tar.bz2"
CACHE="${BUNLET_UPSTREAM_CACHE:-/var/tmp/bunlet-upstream}"
OUT="$CACHE/busybox-$VERSION"
say() { echo "upstream-busybox: $*" >&2; }

if [ ! -x "$OUT/busybox" ]; then
  say "building BusyBox $VERSION into $OUT"
  WORK="$(mktemp -d /tmp/bunlet-busybox-XXXXXX)"
  trap 'rm -rf "$WORK"' EXIT
  curl -fsSL --retry 3 -o "$WORK/src.tar.bz2" "$URL"
  echo "$SHA256  $WORK/src.tar.bz2" | sha256sum -c --quiet
  tar -xjf "$WORK/src.tar.bz2" -C "$WORK"
  (
    cd "$WORK/busybox-$VERSION"
    make defconfig >/dev/null
    sed -i 's/^# CONFIG_STATIC is not set$/CONFIG_STATIC=y/' .config
    make -j"$(nproc)" busybox >"$WORK/build.log" 2>&1 || { tail -n 30 "$WORK/build.log" >&2; exit 1; }
  )
  mkdir -p "$OUT"
  cp "$WORK/busybox-$VERSION/busybox" "$OUT/busybox.tmp"
  mv "$OUT/busybox.tmp" "$OUT/busybox"
fi
echo "$OUT/busybox"
