#!/usr/bin/env bash
# A PRIVATE CRI-O for bunlet and its tests, the counterpart of containerd.sh: own config, storage,
# run dir, socket and CNI config, so it never touches a system CRI-O (/run/crio, /var/lib/containers).
#   scripts/host/crio.sh start|stop|status|destroy|env|import
#     start    write config, load the local images into its storage, start crio, wait until it answers
#     import ARCHIVE NAME [NAME2]  an OCI archive into its storage as NAME (and NAME2), crio running or not
#     stop     SIGTERM crio (containers keep running under their conmon, as with systemctl stop crio)
#     destroy  kill every container of this instance, stop it, unmount and delete its storage and dirs
#     env      print the paths (CRIO_SOCK=…) for scripts
# Env (all optional):
#   BUNLET_CRIO_DIR     run dir: socket, config, pid, log, runroot, exits, namespaces, CNI conf
#                       (default /run/bunlet/crio)
#   BUNLET_CRIO_ROOT    persistent root: containers-storage, CNI IPAM (default /var/lib/bunlet/crio)
#   BUNLET_CNI_BRIDGE   bridge name (default bunlet0)     BUNLET_CNI_SUBNET  (default 10.89.0.0/24)
#   BUNLET_CRIO_STORAGE_DRIVER  overlay (default) or vfs
#   BUNLET_CRIO_BIN     the directory of crio, pinns and copyimg (default: scripts/host/runtimes.sh crio,
#                       which builds them once)
#   BUNLET_RUNC_BIN     a directory whose runc the runc handlers run; default: runc on PATH
# cgroup_manager is cgroupfs (bunlet's driver on this cgroup v1 host); conmon is Debian's. Nothing is
# pulled: the images of scripts/host/setup.sh are copied into the storage with copyimg before crio starts.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# write_cni_conflist, stop, remove_instance, runtime_main.
source "$HERE/runtime-lib.sh"
DIR="${BUNLET_CRIO_DIR:-/run/bunlet/crio}"
ROOT="${BUNLET_CRIO_ROOT:-/var/lib/bunlet/crio}"
BRIDGE="${BUNLET_CNI_BRIDGE:-bunlet0}"
SUBNET="${BUNLET_CNI_SUBNET:-10.89.0.0/24}"
DRIVER="${BUNLET_CRIO_STORAGE_DRIVER:-overlay}"
SOCK="$DIR/crio.sock" CONFIG="$DIR/crio.conf" PIDFILE="$DIR/crio.pid" LOG="$DIR/crio.log"
# containers-storage: images and layers under the root, its run root (mounts, locks) under the run dir.
STORAGE="$ROOT/storage" RUNROOT="$DIR/storage"
STATE="$DIR/state" CNI_CONF="$DIR/net.d"

say() { echo "crio.sh: $*" >&2; }

bin_dir() {
  if [ -n "${BUNLET_CRIO_BIN:-}" ]; then echo "$BUNLET_CRIO_BIN"; else bash "$HERE/runtimes.sh" crio; fi
}

runc_path() {
  if [ -n "${BUNLET_RUNC_BIN:-}" ]; then
    [ -x "$BUNLET_RUNC_BIN/runc" ] || { say "BUNLET_RUNC_BIN=$BUNLET_RUNC_BIN has no runc"; exit 2; }
    echo "$BUNLET_RUNC_BIN/runc"
  else
    command -v runc || { say "runc missing: run scripts/host/setup.sh"; exit 1; }
  fi
}

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [ -n "$pid" ] && [ -d "/proc/$pid" ] && grep -q crio "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}

# `crio status` on this instance's socket (crio's own client of its info endpoint).
crio_status() { timeout 2 "$BIN/crio" --config "$CONFIG" --config-dir "$DIR/crio.conf.d" status --socket "$SOCK" "$@"; }
answers() { [ -S "$SOCK" ] && crio_status info >/dev/null 2>&1; }

# Capabilities this host's bounding set lacks (this VM: CAP_SYS_RESOURCE), as CAP_* names.
missing_caps() {
  local bnd last mask
  bnd=$((0x$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
  last="$(cat /proc/sys/kernel/cap_last_cap)"
  mask=$(( ((1 << (last + 1)) - 1) & ~bnd ))
  [ "$mask" -eq 0 ] && return 0
  capsh --decode="$(printf '0x%x' "$mask")" | sed 's/^[^=]*=//' | tr ',' '\n' | tr '[:lower:]' '[:upper:]'
}

# Where the bounding set lacks capabilities, containers cannot be given them, and without
# CAP_SYS_RESOURCE no runtime may lower an oom_score_adj. containerd copes: a privileged container gets
# the capabilities containerd itself has, and restrict_oom_score_adj raises a score below its own to
# it. CRI-O gives a privileged container every capability it knows and asks -998 for infra containers
# (the kubelet -997 for Guaranteed pods), and has no such options; so the OCI runtime runs through a
# wrapper that does what containerd does to the bundle's config.json (and an exec's process.json):
# the missing capabilities dropped, oomScoreAdj raised to the wrapper's own. perl, not a JSON tool:
# a rewrite must not round the 64-bit limits elsewhere in the file.
# write_runtime_wrapper OUT REAL: the wrapper of REAL at OUT (a link to REAL where nothing is missing).
write_runtime_wrapper() {
  local out="$1" real="$2" caps
  caps="$(missing_caps | paste -sd ' ')"
  rm -f "$out"
  if [ -z "$caps" ]; then ln -s "$real" "$out"; return 0; fi
  {
    echo '#!/bin/bash'
    echo "# $real for CRI-O on a host whose bounding set lacks $caps (see scripts/host/crio.sh)."
    echo "real=$real"
    echo "missing=\"$caps\""
    cat <<'SH'
min=$(cat /proc/self/oom_score_adj)
fix() {
  [ -f "$1" ] || return 0
  MIN="$min" MISSING="$missing" perl -0777 -pi -e '
    my $min = $ENV{MIN};
    s/("oomScoreAdj":\s*)(-?\d+)/$1 . ($2 < $min ? $min : $2)/ge;
    for my $c (split " ", $ENV{MISSING}) { s/"$c"\s*,\s*//g; s/,\s*"$c"//g; s/"$c"//g; }' "$1"
}
prev=""
for a in "$@"; do
  case "$prev" in --bundle|-b) fix "$a/config.json" ;; --process|-p) fix "$a" ;; esac
  case "$a" in --bundle=*) fix "${a#--bundle=}/config.json" ;; --process=*) fix "${a#--process=}" ;; esac
  prev="$a"
done
exec "$real" "$@"
SH
  } >"$out"
  chmod 755 "$out"
}

# A runtime handler table: an OCI runtime (through its wrapper) with a state root of its own.
runtime_handler() {
  local name="$1" path="$2"
  cat <<TOML
[crio.runtime.runtimes.$name]
runtime_path = "$path"
runtime_type = "oci"
runtime_root = "$STATE/$name"
monitor_path = "$(command -v conmon)"
monitor_cgroup = "pod"
monitor_env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
TOML
}

# write_config [FILE]: crio's config (default $CONFIG), the runc wrapper, the signature policy, an empty
# registries.conf and storage.conf and the CNI config.
write_config() {
  local out="${1:-$CONFIG}"
  mkdir -p "$DIR" "$ROOT" "$STATE" "$CNI_CONF" "$DIR/crio.conf.d" "$DIR/policies"
  local runc; runc="$(runc_path)"
  write_runtime_wrapper "$DIR/runc" "$runc"
  echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$DIR/policy.json"
  echo 'unqualified-search-registries = []' >"$DIR/registries.conf"
  printf '[storage]\ndriver = "%s"\nrunroot = "%s"\ngraphroot = "%s"\n' "$DRIVER" "$RUNROOT" "$STORAGE" >"$DIR/storage.conf"
  {
    cat <<TOML
# crio: $BIN/crio runc: $runc
[crio]
root = "$STORAGE"
runroot = "$RUNROOT"
storage_driver = "$DRIVER"
log_dir = "$DIR/pods"
version_file = "$DIR/version"
version_file_persist = "$ROOT/version"
clean_shutdown_file = "$ROOT/clean.shutdown"

[crio.api]
listen = "$SOCK"
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
selinux = false
apparmor_profile = ""
hooks_dir = []
default_mounts_file = ""
container_exits_dir = "$DIR/exits"
container_attach_socket_dir = "$DIR/attach"
namespaces_dir = "$DIR/ns"
pinns_path = "$BIN/pinns"
enable_criu_support = false
# Containers' state changes as CRI events (GetContainerEvents), as containerd sends them.
enable_pod_events = true
# No host port NAT rules on the host's iptables/nftables (containerd's CNI config has no portmap either).
disable_hostport_mapping = true
irqbalance_config_file = ""
irqbalance_config_restore_file = ""

TOML
    runtime_handler runc "$DIR/runc"
    echo
    runtime_handler runc-alt "$DIR/runc"
    # crun when installed, as containerd.sh's handlers (CRI-O would otherwise add its own with /run/crun).
    local crun
    if crun="$(command -v crun)"; then
      write_runtime_wrapper "$DIR/crun" "$crun"
      echo
      runtime_handler crun "$DIR/crun"
    fi
    cat <<TOML

[crio.image]
pause_image = "bunlet.local/pause:1"
pause_command = "/pause"
signature_policy = "$DIR/policy.json"
signature_policy_dir = "$DIR/policies"

[crio.network]
network_dir = "$CNI_CONF"
plugin_dirs = ["/usr/lib/cni"]

[crio.metrics]
enable_metrics = false

[crio.nri]
enable_nri = false
TOML
  } >"$out"
  write_cni_conflist "$CNI_CONF/10-bunlet.conflist" "$BRIDGE" "$SUBNET" "$ROOT/cni-ipam"
}

# crio's environment: its containers/image and containers/storage read these files, never /etc/containers.
crio_env() {
  env CONTAINERS_REGISTRIES_CONF="$DIR/registries.conf" CONTAINERS_STORAGE_CONF="$DIR/storage.conf" "$@"
}

# The setup.sh image tarballs (OCI layouts) into the storage: all of them when the cache dir changed
# (images rebuilt from changed sources), else those missing (removed through the CRI). copyimg takes
# the storage's locks as crio does, so it may run beside it; crio reads the image list per request.
load_images() {
  local cache; cache="$("$HERE/setup.sh" images)"
  local marker="$ROOT/bunlet-images-from" from="" name
  [ -f "$marker" ] && from="$(cat "$marker")"
  for name in busybox pause memhog etcd kube-apiserver kube-controller-manager kube-scheduler; do
    [ -f "$cache/$name.tar" ] || continue
    if [ "$from" = "$cache" ] && grep -qF "\"bunlet.local/$name:1\"" "$STORAGE/$DRIVER-images/images.json" 2>/dev/null; then continue; fi
    import_image "$cache/$name.tar" "bunlet.local/$name:1"
  done
  echo "$cache" >"$marker"
}

# import_image ARCHIVE NAME [NAME2]: an OCI archive (one image) into the storage as NAME, with NAME2 as
# another name of the same image.
import_image() {
  local archive="${1:?usage: crio.sh import ARCHIVE NAME [NAME2]}" name="${2:?usage: crio.sh import ARCHIVE NAME [NAME2]}"
  [ -f "$DIR/policy.json" ] || { say "$DIR has no config: crio.sh start first"; exit 1; }
  crio_env "$BIN/copyimg" --root "$STORAGE" --runroot "$RUNROOT" --storage-driver "$DRIVER" \
    --signature-policy "$DIR/policy.json" --import-from "oci-archive:$archive" --image-name "$name" ${3:+--add-name "$3"}
}

start() {
  BIN="$(bin_dir)"
  for b in crio pinns copyimg; do [ -x "$BIN/$b" ] || { say "$BIN/$b missing: scripts/host/runtimes.sh crio"; exit 1; }; done
  for b in conmon; do command -v "$b" >/dev/null || { say "$b missing: run scripts/host/setup.sh"; exit 1; }; done
  if running_pid >/dev/null && answers; then
    write_config "$CONFIG.want"
    if cmp -s "$CONFIG" "$CONFIG.want"; then rm -f "$CONFIG.want"; load_images; say "already running on $SOCK"; return 0; fi
    rm -f "$CONFIG.want"; say "config changed: restarting"; stop
  fi
  write_config
  load_images
  rm -f "$SOCK"
  # setsid: the daemon must outlive the shell (and a test runner's process group). env and setsid exec
  # (no fork: a background job is no process group leader), so $! is crio's pid.
  env CONTAINERS_REGISTRIES_CONF="$DIR/registries.conf" CONTAINERS_STORAGE_CONF="$DIR/storage.conf" \
    setsid "$BIN/crio" --config "$CONFIG" --config-dir "$DIR/crio.conf.d" \
    --registries-conf "$DIR/registries.conf" --log-level info >>"$LOG" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$PIDFILE"
  local i
  for i in $(seq 1 300); do
    if answers; then break; fi
    if [ ! -d "/proc/$pid" ]; then say "crio exited; last log lines:"; tail -n 20 "$LOG" >&2; exit 1; fi
    sleep 0.1
  done
  answers || { say "socket $SOCK did not answer in 30s"; tail -n 20 "$LOG" >&2; exit 1; }
  say "running pid=$(cat "$PIDFILE") sock=$SOCK cgroup_manager=cgroupfs storage=$DRIVER"
}

# Every container of this instance, by the runtime roots it owns: killed and deleted (runc removes its
# cgroups); then the conmons that watched them (their command line names our exits dir).
kill_containers() {
  local runc root id p
  runc="$(runc_path)"
  for root in "$STATE"/*/; do
    [ -d "$root" ] || continue
    for id in $("$runc" --root "$root" list -q 2>/dev/null || true); do
      "$runc" --root "$root" kill "$id" KILL >/dev/null 2>&1 || true
      "$runc" --root "$root" delete -f "$id" >/dev/null 2>&1 || true
    done
  done
  for p in $(pgrep -f "conmon .*--exit-dir $DIR/exits( |$)" || true); do kill -KILL "$p" 2>/dev/null || true; done
}

destroy() {
  stop
  kill_containers
  remove_instance "$BRIDGE" "$ROOT" "$DIR"
  say "destroyed $DIR and $ROOT"
}

# running: crio's own view of itself (cgroup driver, storage) from its info endpoint.
status() {
  local pid
  BIN="$(bin_dir)"
  pid="$(running_pid)" && answers || { echo "stopped sock=$SOCK"; return 3; }
  echo "running pid=$pid sock=$SOCK"
  crio_status info 2>/dev/null | sed -n 's/^\(cgroup driver\|storage driver\|storage graph root\): /  \1: /p'
}

print_env() { echo "CRIO_SOCK=$SOCK"; echo "CRIO_ROOT=$ROOT"; echo "CRIO_STATE=$STATE"; echo "CRIO_LOG=$LOG"; }

if [ "${1:-}" = import ]; then
  shift
  BIN="$(bin_dir)"
  import_image "$@"
  exit 0
fi
runtime_main "$@"
