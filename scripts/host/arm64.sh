#!/usr/bin/env bash
# Runs an arm64 (aarch64) Linux program on this host: natively on an aarch64 host, else under QEMU
# user-mode emulation (Debian's qemu-user-static) with Debian's aarch64 glibc as the loader's root
# (libc6-arm64-cross: /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1, libc.so.6). qemu-aarch64-static
# is invoked directly: the host's binfmt_misc registration is not needed, nor relied on.
#   bash scripts/host/arm64.sh -- CMD [ARGS…]   # CMD is an aarch64 executable (dist/bunlet-linux-arm64)
#   bash scripts/host/arm64.sh --check          # exit 0 when CMDs can run; else the reason, exit 3
# Missing packages are installed with apt when run as root (scripts/host/setup.sh lists them too).
# Under emulation the syscalls reach the host kernel translated by QEMU, which converts the structs
# whose layout differs (struct epoll_event, struct stat) between the aarch64 guest and the x86_64 host:
# a binding that used the x86_64 layout on aarch64 reads garbage there exactly as it would on an arm64
# machine. A program the arm64 one executes (execve) must be an x86_64 one: without binfmt_misc the host
# kernel cannot start an aarch64 executable (ENOEXEC).
set -euo pipefail

SYSROOT="${BUNLET_ARM64_SYSROOT:-/usr/aarch64-linux-gnu}"
PACKAGES=(qemu-user-static libc6-arm64-cross)

say() { echo "arm64.sh: $*" >&2; }

native() { [ "$(uname -m)" = aarch64 ]; }

ready() { command -v qemu-aarch64-static >/dev/null 2>&1 && [ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ]; }

# Installs the packages when missing; prints why not and fails when it cannot.
ensure() {
  native && return 0
  ready && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "needs qemu-aarch64-static and $SYSROOT/lib/ld-linux-aarch64.so.1 (apt-get install ${PACKAGES[*]}; root and apt-get required)"
    return 3
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${PACKAGES[@]}" >/tmp/bunlet-apt-arm64.log 2>&1; then
    apt-get update >/dev/null 2>&1 || true
    apt-get install -y --no-install-recommends "${PACKAGES[@]}" >/tmp/bunlet-apt-arm64.log 2>&1 || true
  fi
  ready && return 0
  say "could not install ${PACKAGES[*]} with apt-get (log: /tmp/bunlet-apt-arm64.log)"
  return 3
}

case "${1:-}" in
  --check) ensure; exit $? ;;
  --) shift ;;
  *) say "usage: arm64.sh --check | arm64.sh -- CMD [ARGS…]"; exit 2 ;;
esac
[ $# -gt 0 ] || { say "no command given after --"; exit 2; }
ensure || exit $?
if native; then exec "$@"; fi
export QEMU_LD_PREFIX="$SYSROOT"
exec qemu-aarch64-static "$@"
