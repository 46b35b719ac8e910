#!/usr/bin/env bash
# Runs one command inside a throw-away cgroup v2 Linux guest and exits with its exit code.
#
#   scripts/host/v2-guest.sh [--systemd] [--cgroup-v1] [-m MiB] [-t SECS] [-s SECS] [-w DIR]... [-e NAME[=VAL]]... [-d FILE] [-v] -- CMD [ARG]...
#     --systemd   boot systemd as PID 1 (D-Bus and systemd-logind up); CMD runs as a oneshot unit
#     --cgroup-v1 cgroup v1 instead (systemd's hybrid layout: v1 controllers, name=systemd, unified/)
#     -m MiB      guest memory (default 1024)
#     -t SECS     timeout for the whole run (default 600); exit 124 when it fires
#     -s SECS     stall limit (default 120, env BUNLET_V2_GUEST_STALL_S): no guest heartbeat and no new
#                 output for SECS → the run's UML processes are killed; exit 123 ("v2 guest stalled")
#     -w DIR      share host DIR read-write at the same path (everything else is the host's / read-only
#                 under a tmpfs overlay: writes succeed but vanish at poweroff)
#     -e NAME[=VAL]  pass an environment variable into the guest (PATH, HOME and LANG always pass)
#     -d FILE     a host file as the guest's block device /dev/ubda (e.g. for mkswap + swapon inside)
#     -v          print the guest console and boot timings on stderr
#   Exit: CMD's exit code; 123 the guest stalled; 124 timeout; 125 the guest failed or never ran CMD.
#
# The guest: a User-mode Linux 6.1 kernel (scripts/host/uml-kernel.sh; it runs as an ordinary host
# process, no /dev/kvm, no host cgroup touched) with cgroup v2 only at /sys/fs/cgroup — memory, cpu, io,
# pids, … enabled at the root — and PSI. One CPU. CMD runs as root in the guest's root cgroup (or in
# v2-guest-command.service with --systemd), cwd = the host's cwd, stdin = /dev/null; its stdout and
# stderr stream back live. /tmp, /run and /dev/shm are fresh tmpfs. Booting takes ~1.5 s with the
# busybox init, ~9 s with systemd; syscalls are slower than native, so compare agents inside one guest.
#
# Env: BUNLET_UML_KERNEL  a UML kernel to use instead of building one (needs PSI and overlayfs built in)
#      BUNLET_UML_CACHE   where the kernel and initramfs are cached (default /var/tmp/bunlet-uml)
# Packages (Debian, installed if missing): busybox-static; the kernel build installs its own.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${BUNLET_UML_CACHE:-/var/tmp/bunlet-uml}"
BUSYBOX=/bin/busybox

say() { echo "v2-guest: $*" >&2; }
usage() { sed -n '3,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
. "$HERE/v2-guest/stall.sh"

SYSTEMD=0 CGROUP_V1=0 MEMORY_MIB=1024 TIMEOUT_S=600 VERBOSE=0 STALL_S="${BUNLET_V2_GUEST_STALL_S:-120}"
RW_DIRS=() ENV_PASS=() DISK=
while [ $# -gt 0 ]; do
  case "$1" in
    --systemd) SYSTEMD=1 ;;
    --cgroup-v1) CGROUP_V1=1 ;;
    -m) MEMORY_MIB="${2:?-m needs MiB}"; shift ;;
    -t) TIMEOUT_S="${2:?-t needs seconds}"; shift ;;
    -s) STALL_S="${2:?-s needs seconds}"; shift ;;
    -w) RW_DIRS+=("$(realpath "${2:?-w needs a directory}")"); shift ;;
    -e) ENV_PASS+=("${2:?-e needs NAME[=VALUE]}"); shift ;;
    -d) DISK="$(realpath "${2:?-d needs a file}")"; [ -f "$DISK" ] || { say "-d: no such file: $DISK"; exit 2; }; shift ;;
    -v) VERBOSE=1 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) say "unknown option $1"; usage ;;
    *) break ;;
  esac
  shift
done
[ $# -gt 0 ] || usage
[[ "$MEMORY_MIB" =~ ^[0-9]+$ ]] || { say "-m: not a number of MiB: $MEMORY_MIB"; exit 2; }
[[ "$TIMEOUT_S" =~ ^[0-9]+$ ]] || { say "-t: not a number of seconds: $TIMEOUT_S"; exit 2; }
[[ "$STALL_S" =~ ^[1-9][0-9]*$ ]] || { say "-s: not a number of seconds: $STALL_S"; exit 2; }

if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
  say "installing busybox-static (the guest's initramfs)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends busybox-static file >&2
fi

KERNEL="${BUNLET_UML_KERNEL:-}"
[ -n "$KERNEL" ] || KERNEL="$(BUNLET_UML_CACHE="$CACHE" "$HERE/uml-kernel.sh")" || { say "no UML kernel"; exit 125; }

# The initramfs: busybox + the two guest scripts, cached under a hash of them.
initramfs() {
  local key out stage
  key="$(cat "$BUSYBOX" "$HERE/v2-guest/init.sh" "$HERE/v2-guest/stage2.sh" | sha256sum | cut -c1-12)"
  out="$CACHE/initramfs-$key.cpio"
  if [ ! -f "$out" ]; then
    mkdir -p "$CACHE"
    stage="$(mktemp -d "$CACHE/initramfs.XXXXXX")"
    mkdir -p "$stage"/{bin,dev,proc,sys,host,newroot,upper,run-dir}
    cp "$BUSYBOX" "$stage/bin/busybox"
    local a
    for a in $("$BUSYBOX" --list); do [ "$a" = busybox ] || ln -s busybox "$stage/bin/$a"; done
    install -m 755 "$HERE/v2-guest/init.sh" "$stage/init"
    install -m 755 "$HERE/v2-guest/stage2.sh" "$stage/stage2.sh"
    (cd "$stage" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) >"$out.tmp.$$"
    mv "$out.tmp.$$" "$out"
    rm -rf "$stage"
  fi
  echo "$out"
}
INITRAMFS="$(initramfs)"

RUN="$(mktemp -d /tmp/v2-guest-run.XXXXXX)"
GUEST_PID="" TAIL_PIDS=() WATCHDOG_PID=""
# (set -e holds in a trap: every step may fail without skipping the next.)
cleanup() {
  [ -z "$WATCHDOG_PID" ] || kill "$WATCHDOG_PID" 2>/dev/null || true
  [ -z "$GUEST_PID" ] || { kill "$GUEST_PID" 2>/dev/null && wait "$GUEST_PID" 2>/dev/null; } || true
  for p in "${TAIL_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rw_joined="$(IFS=:; echo "${RW_DIRS[*]:-}")"
# Debian's stock /usr/bin/linux.uml has overlayfs as a module beside it (ours has it built in).
overlay_ko="$(ls "$(dirname "$(realpath "$KERNEL")")"/../lib/uml/modules/*/kernel/fs/overlayfs/overlay.ko 2>/dev/null | head -1 || true)"
printf 'RW_DIRS=%q\nOVERLAY_KO=%q\nCGROUP_V1=%q\n' "$rw_joined" "$overlay_ko" "$CGROUP_V1" >"$RUN/config"
{
  printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
  printf 'export PATH=%q HOME=%q LANG=%q\n' "$PATH" "${HOME:-/root}" "${LANG:-C.UTF-8}"
  for e in "${ENV_PASS[@]}"; do
    case "$e" in
      *=*) printf 'export %s=%q\n' "${e%%=*}" "${e#*=}" ;;
      *) printf 'export %s=%q\n' "$e" "${!e:-}" ;;
    esac
  done
  printf 'exec'; printf ' %q' "$@"; echo
} >"$RUN/command.sh"
: >"$RUN/stdout"; : >"$RUN/stderr"
[ "$SYSTEMD" = 1 ] && : >"$RUN/systemd"

started="$(date +%s.%N)"

# The last line the run printed (stdout, else stderr, else the console), for the stall message.
last_line() {
  local f l
  for f in "$RUN/stdout" "$RUN/stderr" "$RUN/console.log"; do
    l="$(tail -c 4096 "$f" 2>/dev/null | tr '\r' '\n' | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' | grep -v '^[[:space:]]*$' | tail -1 | cut -c1-200)"
    [ -n "$l" ] && { echo "$l"; return; }
  done
  echo "(no output yet)"
}
# This run's UML kernel: timeout(1)'s child. It setsid()s, so it and every host process it starts (one per
# guest address space, its helpers) are the process group named by its pid — nothing else is.
uml_pid() { pgrep -P "$GUEST_PID" 2>/dev/null | head -1 || true; }
# Polls the guest's progress marks every 5 s (guest_stall_verdict). On a stall: a snapshot of this run's
# host processes (state, CPU, wait channel, current syscall) on stderr, the message in $RUN/stalled, and
# SIGKILL to this run's UML process group and its timeout(1) only.
watchdog() {
  local v uml p
  trap - EXIT INT TERM
  while sleep 5; do
    kill -0 "$GUEST_PID" 2>/dev/null || return 0
    v="$(guest_stall_verdict "$(date +%s)" "${started%.*}" "$STALL_S" \
      $(stat -c %Y "$RUN/heartbeat" "$RUN/stdout" "$RUN/stderr" "$RUN/console.log" 2>/dev/null))"
    case "$v" in
      stalled*)
        echo "v2 guest stalled: no progress for ${v#stalled } s during: $(last_line)" >"$RUN/stalled"
        uml="$(uml_pid)"
        { echo "v2-guest: $(cat "$RUN/stalled") — this run's host processes (pid stat %cpu time wchan; syscall):"
          [ -n "$uml" ] && for p in $(pgrep -g "$uml"); do
            echo "  $(ps -o pid=,stat=,pcpu=,time=,wchan:24= -p "$p" 2>/dev/null); $(cut -d' ' -f1-3 "/proc/$p/syscall" 2>/dev/null)"
          done; } >&2
        [ -n "$uml" ] && kill -KILL -- "-$uml" 2>/dev/null
        kill -KILL "$GUEST_PID" 2>/dev/null
        return 0 ;;
    esac
  done
}
# UML backs guest RAM with a file in $TMPDIR: keep it in memory. Console → console.log (fd 3).
TMPDIR=/dev/shm timeout -k 10 "$TIMEOUT_S" "$KERNEL" mem="${MEMORY_MIB}M" initrd="$INITRAMFS" rdinit=/init \
  con0=null,fd:3 con=null ssl=null quiet psi=1 "v2guest.run=$RUN" $([ "$CGROUP_V1" = 1 ] && echo systemd.unified_cgroup_hierarchy=0) \
  ${DISK:+"ubd0=$DISK"} \
  </dev/null >"$RUN/kernel.log" 2>&1 3>"$RUN/console.log" &
GUEST_PID=$! # timeout(1)'s pid, and the process group of this run's UML processes (timeout setpgid()s)
watchdog &
WATCHDOG_PID=$!
tail -q -s 0.1 -n +1 -F --pid="$GUEST_PID" "$RUN/stdout" 2>/dev/null & TAIL_PIDS+=($!)
tail -q -s 0.1 -n +1 -F --pid="$GUEST_PID" "$RUN/stderr" >&2 2>/dev/null & TAIL_PIDS+=($!)
status=0
wait "$GUEST_PID" || status=$?
GUEST_PID=""
kill "$WATCHDOG_PID" 2>/dev/null || true; wait "$WATCHDOG_PID" 2>/dev/null || true
WATCHDOG_PID=""
wait "${TAIL_PIDS[@]}" 2>/dev/null || true
TAIL_PIDS=()

if [ "$VERBOSE" = 1 ] || [ ! -s "$RUN/rc" ]; then
  { echo "---- guest console"; cat "$RUN/console.log" "$RUN/kernel.log" 2>/dev/null; echo "----"; } >&2
fi
if [ "$VERBOSE" = 1 ]; then
  [ -f "$RUN/times" ] && sed 's/^/v2-guest: guest uptime at /' "$RUN/times" >&2
  awk -v a="$started" -v b="$(date +%s.%N)" -v k="$KERNEL" 'BEGIN { printf "v2-guest: kernel %s, host wall %.2fs\n", k, b - a }' >&2
fi
if [ ! -s "$RUN/rc" ]; then
  if [ -s "$RUN/stalled" ]; then say "$(cat "$RUN/stalled")"; exit 123; fi
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then say "timeout after ${TIMEOUT_S}s"; exit 124; fi
  say "the guest did not report an exit code (kernel exit $status)"; exit 125
fi
# Stalled after CMD finished (in the poweroff): CMD's code stands, the stall is said.
[ -s "$RUN/stalled" ] && say "after the command finished: $(cat "$RUN/stalled")"
exit "$(cat "$RUN/rc")"
