#!/usr/bin/env bash
# A PRIVATE containerd for bunlet and its tests: own config, root, state, socket and CNI config, so it
# never touches a system containerd (/run/containerd, /var/lib/containerd).
#   scripts/host/containerd.sh start|stop|status|destroy|env
#     start    write config, start containerd, wait until the socket answers, import the local images
#     stop     SIGTERM containerd (containers keep running, as with systemctl stop containerd)
#     destroy  kill every task of this instance, stop it, unmount and delete its root and state
#     env      print the paths (CONTAINERD_SOCK=…) for scripts
# Env (all optional):
#   BUNLET_CONTAINERD_DIR   run dir: socket, config, pid, log, state, CNI conf (default /run/bunlet/containerd)
#   BUNLET_CONTAINERD_ROOT  persistent root: content, snapshots (default /var/lib/bunlet/containerd)
#   BUNLET_CNI_BRIDGE       bridge name (default bunlet0)     BUNLET_CNI_SUBNET  (default 10.89.0.0/24)
#   BUNLET_SNAPSHOTTER      overlayfs (default) or native
#   BUNLET_CONTAINERD_SYSTEMD_CGROUP  1/true: runc's systemd cgroup driver (SystemdCgroup = true), for
#                           kubelet's cgroupDriver systemd; needs systemd as PID 1 (default 0: cgroupfs)
#   BUNLET_CONTAINERD_BIN   a directory whose containerd, ctr and shim come first (containerd 2.x from
#                           scripts/host/runtimes.sh); default: Debian's containerd 1.6
#   BUNLET_RUNC_BIN         a directory whose runc the runc handlers run (BinaryName), e.g. runc ≥ 1.2 from
#                           scripts/host/runtimes.sh runc for user namespaces; default: runc on PATH
set -euo pipefail
if [ -n "${BUNLET_RUNC_BIN:-}" ]; then
  [ -x "$BUNLET_RUNC_BIN/runc" ] || { echo "containerd.sh: BUNLET_RUNC_BIN=$BUNLET_RUNC_BIN has no runc" >&2; exit 2; }
fi
if [ -n "${BUNLET_CONTAINERD_BIN:-}" ]; then
  [ -x "$BUNLET_CONTAINERD_BIN/containerd" ] || { echo "containerd.sh: BUNLET_CONTAINERD_BIN=$BUNLET_CONTAINERD_BIN has no containerd" >&2; exit 2; }
  export PATH="$BUNLET_CONTAINERD_BIN:$PATH"
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# write_cni_conflist, stop, remove_instance, runtime_main.
source "$HERE/runtime-lib.sh"
# Another containerd's default instance has dirs of its own: a root is never shared between releases.
SUFFIX=""
[ -n "${BUNLET_CONTAINERD_BIN:-}" ] && SUFFIX="-$("$BUNLET_CONTAINERD_BIN/containerd" --version | awk '{print $3}')"
DIR="${BUNLET_CONTAINERD_DIR:-/run/bunlet/containerd$SUFFIX}"
ROOT="${BUNLET_CONTAINERD_ROOT:-/var/lib/bunlet/containerd$SUFFIX}"
BRIDGE="${BUNLET_CNI_BRIDGE:-bunlet0}"
SUBNET="${BUNLET_CNI_SUBNET:-10.89.0.0/24}"
SNAPSHOTTER="${BUNLET_SNAPSHOTTER:-overlayfs}"
case "${BUNLET_CONTAINERD_SYSTEMD_CGROUP:-0}" in
  1|true) SYSTEMD_CGROUP=true ;;
  0|false|"") SYSTEMD_CGROUP=false ;;
  *) echo "containerd.sh: BUNLET_CONTAINERD_SYSTEMD_CGROUP=${BUNLET_CONTAINERD_SYSTEMD_CGROUP}: want 1/true or 0/false" >&2; exit 2 ;;
esac
SOCK="$DIR/containerd.sock"
CONFIG="$DIR/config.toml"
PIDFILE="$DIR/containerd.pid"
LOG="$DIR/containerd.log"
STATE="$DIR/state"
CNI_CONF="$DIR/net.d"
NS=k8s.io

say() { echo "containerd.sh: $*" >&2; }
ctr_() { ctr --address "$SOCK" -n "$NS" "$@"; }

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && grep -q containerd "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}

answers() { ctr --address "$SOCK" --timeout 2s version >/dev/null 2>&1; }

# The runc handlers' BinaryName line: BUNLET_RUNC_BIN's runc, else none (runc on PATH).
runc_binary() { [ -n "${BUNLET_RUNC_BIN:-}" ] && echo "        BinaryName = \"$BUNLET_RUNC_BIN/runc\"" || true; }

# Runtime handlers beside the default runc, for RuntimeClass: "runc-alt" (runc again, state of its own)
# always; "crun" when crun is installed (crun refuses a hybrid v1 + v2 host: "cgroups in hybrid mode not
# supported"; it runs on pure v1 or v2 hosts such as the cgroup v2 guest).
extra_runtimes() {
  cat <<TOML
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc-alt]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc-alt.options]
        SystemdCgroup = $SYSTEMD_CGROUP
        Root = "$STATE/runc-alt"
$(runc_binary)
TOML
  local crun; crun="$(command -v crun)" || return 0
  cat <<TOML
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun.options]
        BinaryName = "$crun"
        SystemdCgroup = $SYSTEMD_CGROUP
        Root = "$STATE/crun"
TOML
}

# write_config [FILE]: containerd's config (default $CONFIG) and the CNI config.
write_config() {
  local out="${1:-$CONFIG}"
  mkdir -p "$DIR" "$ROOT" "$STATE" "$CNI_CONF"
  cat >"$out" <<TOML
# containerd: $(command -v containerd)${BUNLET_RUNC_BIN:+ runc: $BUNLET_RUNC_BIN/runc}
version = 2
root = "$ROOT"
state = "$STATE"
oom_score = 0

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$ROOT/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "bunlet.local/pause:1"
  # This VM lacks CAP_SYS_RESOURCE: without this sandboxes fail with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$SNAPSHOTTER"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = $SYSTEMD_CGROUP
        Root = "$STATE/runc"
$(runc_binary)
$(extra_runtimes)
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CNI_CONF"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
TOML
  write_cni_conflist "$CNI_CONF/10-bunlet.conflist" "$BRIDGE" "$SUBNET" "$ROOT/cni-ipam"
}

import_images() {
  local cache; cache="$("$HERE/setup.sh" images)"
  local have; have="$(ctr_ images ls -q 2>/dev/null || true)"
  # The cache dir is named by its inputs' hash: images rebuilt from changed sources (say memhog.c) are
  # a new dir, and their tags are re-imported over the old ones, not skipped because the tag exists.
  local marker="$ROOT/bunlet-images-from" from=""
  [ -f "$marker" ] && from="$(cat "$marker")"
  local name
  for name in busybox pause memhog etcd kube-apiserver kube-controller-manager kube-scheduler; do
    [ -f "$cache/$name.tar" ] || continue
    if [ "$from" != "$cache" ] || ! grep -qx "bunlet.local/$name:1" <<<"$have"; then
      ctr_ images import --snapshotter "$SNAPSHOTTER" --base-name "bunlet.local/$name" "$cache/$name.tar" >/dev/null
    fi
  done
  mkdir -p "$ROOT" && echo "$cache" >"$marker"
}

start() {
  if running_pid >/dev/null && answers; then
    # A running instance keeps its cgroup driver: a caller asking for the other one must not share it.
    if ! grep -q "SystemdCgroup = $SYSTEMD_CGROUP\$" "$CONFIG" 2>/dev/null; then
      say "already running on $SOCK with another cgroup driver (want SystemdCgroup = $SYSTEMD_CGROUP): destroy it first"; exit 1
    fi
    # Same driver, other runtimes (crun installed since): restart on the new config; containers keep
    # running (their shims outlive containerd) and are found again.
    write_config "$CONFIG.want"
    if cmp -s "$CONFIG" "$CONFIG.want"; then
      rm -f "$CONFIG.want"; import_images; say "already running on $SOCK"; return 0
    fi
    rm -f "$CONFIG.want"; say "config changed: restarting"; stop
  fi
  for b in containerd runc ctr; do command -v "$b" >/dev/null || { say "$b missing: run scripts/host/setup.sh"; exit 1; }; done
  write_config
  rm -f "$SOCK" "$SOCK.ttrpc"
  # setsid: the daemon must outlive the shell (and a test runner's process group).
  setsid containerd --config "$CONFIG" >>"$LOG" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local i
  for i in $(seq 1 200); do
    if answers; then break; fi
    if ! running_pid >/dev/null; then say "containerd exited; last log lines:"; tail -n 20 "$LOG" >&2; exit 1; fi
    sleep 0.05
  done
  answers || { say "socket $SOCK did not answer in 10s"; tail -n 20 "$LOG" >&2; exit 1; }
  import_images
  say "running pid=$(cat "$PIDFILE") sock=$SOCK SystemdCgroup=$SYSTEMD_CGROUP"
}

# Kill the shims of this instance only: their command line names our socket.
kill_shims() {
  local p
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK( |$)" || true); do kill -KILL "$p" 2>/dev/null || true; done
}

destroy() {
  if running_pid >/dev/null && answers; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null || true); do
      ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr_ tasks ls -q 2>/dev/null || true); do ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true; done
    for id in $(ctr_ containers ls -q 2>/dev/null || true); do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
  fi
  stop
  kill_shims
  remove_instance "$BRIDGE" "$ROOT" "$STATE" "$DIR"
  say "destroyed $DIR and $ROOT"
}

status() {
  local pid
  if pid="$(running_pid)" && answers; then
    echo "running pid=$pid sock=$SOCK"
  else
    echo "stopped sock=$SOCK"; return 3
  fi
}

print_env() { echo "CONTAINERD_SOCK=$SOCK"; echo "CONTAINERD_ROOT=$ROOT"; echo "CONTAINERD_STATE=$STATE"; echo "CONTAINERD_LOG=$LOG"; }

runtime_main "$@"
