# Shared by containerd.sh and crio.sh: the tests' CNI config, stopping the daemon, removing an instance's
# leftovers and the command line.

# write_cni_conflist FILE BRIDGE SUBNET IPAM_DIR: bridge + host-local. A loopback-only config fails with
# "failed to find network info"; no masquerade/iptables: pods only need an address on this host, and a
# route to the test control plane's Service range (10.96.0.0/12) through the bridge, where a run that
# needs the `kubernetes` Service routes it to the API server (scripts/conformance/service-route.ts).
write_cni_conflist() {
  local out="$1" bridge="$2" subnet="$3" ipam="$4"
  cat >"$out" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$bridge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$subnet" }]],
        "routes": [{ "dst": "10.96.0.0/12" }],
        "dataDir": "$ipam"
      }
    },
    { "type": "loopback" }
  ]
}
JSON
}

# stop: SIGTERM the script's daemon (its running_pid and PIDFILE), SIGKILL after 10 s; its containers
# keep running under their shims or conmons.
stop() {
  local pid i
  if ! pid="$(running_pid)"; then rm -f "$PIDFILE"; say "not running"; return 0; fi
  kill -TERM "$pid"
  for i in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  [ -d "/proc/$pid" ] && kill -KILL "$pid"
  rm -f "$PIDFILE"
  say "stopped pid=$pid"
}

# runtime_main "$@": the scripts' command line; each script defines start, stop, destroy, status and
# print_env (the paths for scripts, NAME=value lines).
runtime_main() {
  case "${1:-}" in
    start | stop | destroy | status) "$1" ;;
    env) print_env ;;
    *) echo "usage: $0 start|stop|status|destroy|env" >&2; exit 2 ;;
  esac
}

# remove_trees DIR...: each DIR with whatever is mounted at or below it (deepest first, lazily).
remove_trees() {
  local m d
  for d in "$@"; do
    for m in $(awk -v r="$d" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/self/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  done
  rm -rf "$@"
}

# remove_instance BRIDGE DIR...: what an instance leaves once its processes are gone: mounts under
# the DIRs (rootfs overlays, shm, pinned namespaces), the CNI bridge, the DIRs.
remove_instance() {
  local bridge="$1"; shift
  ip link delete "$bridge" 2>/dev/null || true
  remove_trees "$@"
}
