#!/usr/bin/env bash
# Host setup for bunlet on Debian: installs the container runtime packages and builds the offline test
# images (OCI tarballs) from Debian's static busybox. Idempotent; a second run only checks and returns.
#   scripts/host/setup.sh            # packages + images
#   scripts/host/setup.sh images     # images only (prints the cache dir)
#   scripts/host/setup.sh v2-guest   # optional (CI runs it): the cgroup v2 test guest's UML kernel, built
#                                    # once (~6 min on 2 free CPUs) by uml-kernel.sh, cached in /var/tmp
# Env: BUNLET_IMAGE_CACHE (default /var/cache/bunlet/images) — tarballs are cached under a key of their
# inputs, so an unchanged busybox/pause/memhog source never rebuilds.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${BUNLET_IMAGE_CACHE:-/var/cache/bunlet/images}"
# gcc + libc6-dev build the static pause and memhog programs (pause falls back to busybox without them).
PACKAGES=(containerd runc crun containernetworking-plugins busybox-static umoci gcc libc6-dev etcd-server)
# prometheus (+ promtool): the monitoring tests scrape bunlet with a real Prometheus and check the rules.
PACKAGES+=(prometheus)
# openssl: the control-plane stand-in images serve their HTTPS health probes with `openssl s_server`.
PACKAGES+=(openssl)
# make, bzip2: the e2e images' upstream BusyBox is built from its release tarball (scripts/upstream/busybox.sh).
PACKAGES+=(make bzip2)
# libseccomp-dev: runc ≥ 1.2 for user namespaces is built with seccomp (scripts/host/runtimes.sh runc).
PACKAGES+=(libseccomp-dev)
# conmon: CRI-O's container monitor (scripts/host/crio.sh; CRI-O itself is built by runtimes.sh crio);
# capsh (libcap2-bin): crio.sh names the capabilities the host's bounding set lacks.
PACKAGES+=(conmon libcap2-bin)
# qemu-user-static, libc6-arm64-cross: the arm64 build runs under emulation (scripts/host/arm64.sh, docs/arm64.md).
[ "$(uname -m)" = aarch64 ] || PACKAGES+=(qemu-user-static libc6-arm64-cross)
# Bump when the image layout built below changes, so cached tarballs are rebuilt.
IMAGE_RECIPE_VERSION=1

say() { echo "setup: $*" >&2; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then
    say "missing packages ${missing[*]} and not root: run as root"; exit 1
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/bunlet-apt.log 2>&1; then
    apt-get update >/tmp/bunlet-apt-update.log 2>&1
    apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/bunlet-apt.log 2>&1 \
      || { cat /tmp/bunlet-apt.log >&2; exit 1; }
  fi
}

# build_image, populate_busybox and copy_with_libs.
source "$HERE/image-lib.sh"

populate_pause() {
  local root="$1"
  if [ -x "$WORK_BIN/pause" ]; then
    cp "$WORK_BIN/pause" "$root/pause"
  else
    # No compiler: busybox sleep is an acceptable never-exiting entrypoint.
    mkdir -p "$root/bin"; cp /bin/busybox "$root/bin/busybox"
    printf '#!/bin/busybox sh\nexec /bin/busybox sleep 2147483647\n' >"$root/pause"; chmod 755 "$root/pause"
  fi
}

populate_memhog() {
  cp "$WORK_BIN/memhog" "$1/memhog"
}

# kubeadm's control-plane images, offline: etcd is Debian's real etcd-server; kube-apiserver,
# kube-controller-manager and kube-scheduler are stand-ins (scripts/host/images/control-plane-standin.sh)
# that keep running and answer their HTTPS health probes on their default secure ports.
populate_etcd() {
  populate_busybox "$1"
  copy_with_libs "$1" /usr/bin/etcd
  mkdir -p "$1/usr/local/bin"; ln -s /usr/bin/etcd "$1/usr/local/bin/etcd"
}
populate_standin() {
  local root="$1" component="$2"
  populate_busybox "$root"
  copy_with_libs "$root" /usr/bin/openssl
  mkdir -p "$root/usr/lib/ssl" "$root/usr/local/bin"
  cp -L /usr/lib/ssl/openssl.cnf "$root/usr/lib/ssl/openssl.cnf"
  cp "$HERE/images/control-plane-standin.sh" "$root/usr/local/bin/$component"
  chmod 755 "$root/usr/local/bin/$component"
}
populate_kube_apiserver() { populate_standin "$1" kube-apiserver; }
populate_kube_controller_manager() { populate_standin "$1" kube-controller-manager; }
populate_kube_scheduler() { populate_standin "$1" kube-scheduler; }

CONTROL_PLANE_IMAGES=(etcd kube-apiserver kube-controller-manager kube-scheduler)

build_images() {
  local have_gcc=0
  command -v gcc >/dev/null 2>&1 && [ -e /usr/lib/x86_64-linux-gnu/libc.a -o -e /usr/lib/aarch64-linux-gnu/libc.a ] && have_gcc=1
  local key
  key="$( { echo "$IMAGE_RECIPE_VERSION gcc=$have_gcc"; sha256sum /bin/busybox "$HERE/images/pause.c" "$HERE/images/memhog.c" \
              "$HERE/images/control-plane-standin.sh" /usr/bin/etcd /usr/bin/openssl; \
            cat "$HERE/image-lib.sh"; sed -n '/^populate_pause()/,/^build_images()/p' "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)"
  local dir="$CACHE/$key" have_all=1 name
  for name in busybox pause "${CONTROL_PLANE_IMAGES[@]}"; do [ -f "$dir/$name.tar" ] || have_all=0; done
  if [ $have_all -eq 1 ] && { [ $have_gcc -eq 0 ] || [ -f "$dir/memhog.tar" ]; }; then
    echo "$dir"; return 0
  fi
  say "building images into $dir"
  mkdir -p "$dir"
  WORK_BIN="$(mktemp -d /tmp/bunlet-bin-XXXXXX)"
  if [ $have_gcc -eq 1 ]; then
    gcc -static -O2 -o "$WORK_BIN/pause" "$HERE/images/pause.c"
    gcc -static -O2 -o "$WORK_BIN/memhog" "$HERE/images/memhog.c"
  fi
  build_image busybox 1 "$dir/busybox.tar" \
    --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin --config.cmd /bin/sh --config.workingdir /
  build_image pause 1 "$dir/pause.tar" --config.entrypoint /pause --config.workingdir /
  if [ $have_gcc -eq 1 ]; then
    build_image memhog 1 "$dir/memhog.tar" --config.entrypoint /memhog --config.cmd 64 --config.workingdir /
  fi
  local cp_env=(--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.workingdir /)
  build_image etcd 1 "$dir/etcd.tar" "${cp_env[@]}" --config.cmd etcd
  build_image kube_apiserver 1 "$dir/kube-apiserver.tar" "${cp_env[@]}" --config.cmd kube-apiserver
  build_image kube_controller_manager 1 "$dir/kube-controller-manager.tar" "${cp_env[@]}" --config.cmd kube-controller-manager
  build_image kube_scheduler 1 "$dir/kube-scheduler.tar" "${cp_env[@]}" --config.cmd kube-scheduler
  rm -rf "$WORK_BIN"
  echo "$dir"
}

case "${1:-all}" in
  all) install_packages; build_images >/dev/null; say "ok (images in $(build_images))" ;;
  packages) install_packages ;;
  images) build_images ;;
  v2-guest) say "cgroup v2 guest kernel: $(bash "$HERE/uml-kernel.sh")" ;;
  *) echo "usage: $0 [all|packages|images|v2-guest]" >&2; exit 2 ;;
esac
