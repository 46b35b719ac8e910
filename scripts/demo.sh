#!/usr/bin/env bash
# The README's main command: on a fresh Debian machine (root, Node/npm), set up the host, build bunlet,
# run three static pods on a private containerd and watch bunlet evict the one that grows its memory —
# told by the kernel on cgroup v1 (memcg threshold on kubepods), with the eviction's trace record. Runs on
# cgroup v1 and v2.
#
#   bash scripts/demo.sh            # runs until Ctrl-C, then removes the demo pods and cgroups
#   bash scripts/demo.sh --once     # exits after the eviction (and cleans up); exit 1 if none happened
#   bash scripts/demo.sh -- --v=2   # anything after -- goes to bunlet
#   bash scripts/demo.sh --cluster [--once]   # the same eviction in a real one-node cluster: the upstream
#                                    # control plane (built once with Go, docs/upstream.md), bunlet as its
#                                    # node, a Deployment and the eviction seen with kubectl
#
# Steps: npm install (if needed) → scripts/host/setup.sh (containerd, runc, CNI, offline images) →
# scripts/host/containerd.sh start (private instance) → scripts/build.sh (dist/bunlet) → dist/bunlet
# --config examples/demo/kubelet-config.yaml with --system-reserved=memory=<MemTotal − 512Mi>, so the
# kubepods cgroup (node allocatable) is 512 MiB and the 24 GB host itself is never short of memory.
# Env: BUNLET_DEMO_DIR (state: log, trace, manifests copy; default /run/bunlet/demo),
#      BUNLET_DEMO_CGROUP_ROOT (/bunlet-demo), BUNLET_DEMO_PORT (10250), BUNLET_DEMO_HEALTHZ_PORT (10248),
#      BUNLET_DEMO_TIMEOUT (seconds to wait for the eviction, 120); BUNLET_CONTAINERD_* as containerd.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
# remove_trees
source scripts/host/runtime-lib.sh

ONCE=0
CLUSTER=0
BUNLET_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --once) ONCE=1 ;;
    --cluster) CLUSTER=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; BUNLET_ARGS+=("$@"); break ;;
    *) echo "demo.sh: unknown argument $1 (bunlet flags go after --)" >&2; exit 2 ;;
  esac
  shift
done

STATE="${BUNLET_DEMO_DIR:-/run/bunlet/demo}"
CGROUP_ROOT="${BUNLET_DEMO_CGROUP_ROOT:-/bunlet-demo}"
PORT="${BUNLET_DEMO_PORT:-10250}"
HEALTHZ_PORT="${BUNLET_DEMO_HEALTHZ_PORT:-10248}"
TIMEOUT="${BUNLET_DEMO_TIMEOUT:-120}"
ROOT_DIR="$STATE/root"
LOG="$STATE/bunlet.log"
TRACE="$STATE/eviction-trace.jsonl"
MANIFESTS="$STATE/manifests"
# podLogsDir of examples/demo/kubelet-config.yaml.
POD_LOGS=/var/lib/bunlet/demo/logs
KUBEPODS_MIB=512
URL="http://127.0.0.1:$PORT"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
say() { printf '    %s\n' "$*"; }
die() { echo "demo.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: it installs packages, starts containerd and creates cgroups"
# cgroup v2 (a cgroup2 mount at /sys/fs/cgroup with the memory controller) or v1's memory controller.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  grep -qw memory /sys/fs/cgroup/cgroup.controllers || die "the cgroup v2 root /sys/fs/cgroup offers no memory controller"
else
  [ -d /sys/fs/cgroup/memory ] || die "needs the memory controller: cgroup v2 at /sys/fs/cgroup or v1 at /sys/fs/cgroup/memory"
fi

step "Dependencies"
if [ ! -x node_modules/.bin/bun ]; then
  command -v npm >/dev/null || die "npm is needed once to install bun (apt-get install npm)"
  npm install --no-audit --no-fund
fi
export PATH="$REPO/node_modules/.bin:$PATH"
say "bun $(bun --version)"

# Build before starting anything: a failed build then leaves nothing running behind.
step "Build (scripts/build.sh)"
bash scripts/build.sh

step "Host: containerd, runc, CNI plugins, offline images (scripts/host/setup.sh)"
bash scripts/host/setup.sh
if [ "$CLUSTER" -eq 1 ]; then
  command -v go >/dev/null || die "--cluster builds the upstream control plane with Go (1.26), which is not installed"
  exec bun scripts/upstream/demo-cluster.ts $([ "$ONCE" -eq 1 ] && echo --once)
fi
eval "$(bash scripts/host/containerd.sh env)"
STARTED_CONTAINERD=0
if ! bash scripts/host/containerd.sh status >/dev/null 2>&1; then STARTED_CONTAINERD=1; fi
bash scripts/host/containerd.sh start
say "containerd on $CONTAINERD_SOCK"

# --- run -------------------------------------------------------------------------------------------
mem_total_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
reserved=$((mem_total_kib * 1024 - KUBEPODS_MIB * 1024 * 1024))
rm -rf "$MANIFESTS" "$TRACE" "$STATE/pods.txt"
mkdir -p "$STATE" "$MANIFESTS"
# A copy, so taking the pods away at the end (remove the manifests: bunlet stops and removes them)
# never touches the repository.
cp examples/demo/manifests/*.yaml "$MANIFESTS/"

BUNLET_PID=""
TAIL_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$TAIL_PID" ] && kill "$TAIL_PID" 2>/dev/null || true
  if [ -n "$BUNLET_PID" ] && kill -0 "$BUNLET_PID" 2>/dev/null; then
    step "Cleaning up: demo pods, bunlet, cgroups"
    rm -f "$MANIFESTS"/*.yaml
    # bunlet sees the manifests go (inotify), stops the pods and removes them from the runtime.
    for _ in $(seq 1 100); do
      [ "$(demo_pods count 2>/dev/null || echo 1)" = 0 ] && break
      sleep 0.2
    done
    kill -TERM "$BUNLET_PID" 2>/dev/null || true
    wait "$BUNLET_PID" 2>/dev/null || true
    say "bunlet stopped"
  fi
  # Whatever bunlet did not remove (it was killed, or never got that far): through the CRI directly.
  demo_pods remove || true
  remove_cgroups
  # The root dir's own bind mount (made shared at start on a host whose "/" is private) and any volume left.
  remove_trees "$ROOT_DIR" "$MANIFESTS" "$POD_LOGS"; rmdir "$(dirname "$POD_LOGS")" 2>/dev/null || true
  if [ "$STARTED_CONTAINERD" -eq 1 ]; then bash scripts/host/containerd.sh stop >/dev/null 2>&1 || true; say "containerd stopped (started by this demo)"; fi
  say "log: $LOG   trace: $TRACE"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# demo_pods count|remove: the demo's pod sandboxes in containerd (names recorded from /pods in
# $STATE/pods.txt; before that, <manifest>-<hostname>).
demo_pods() {
  CRI_SOCK="$CONTAINERD_SOCK" NAMES_FILE="$STATE/pods.txt" MODE="$1" bun -e '
    import { createCriClient } from "./src/cri/client.ts";
    import { existsSync, readFileSync } from "node:fs";
    import { hostname } from "node:os";
    const f = process.env.NAMES_FILE;
    const names = new Set(existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean)
      : ["hog", "web", "steady"].map((n) => `${n}-${hostname().toLowerCase()}`));
    const cri = createCriClient({ endpoint: process.env.CRI_SOCK, retryBudgetMs: 500, timeoutMs: 10000 });
    const ours = (await cri.listPodSandbox()).filter((s) => names.has(s.metadata?.name ?? ""));
    if (process.env.MODE === "count") console.log(ours.length);
    else for (const s of ours) {
      await cri.stopPodSandbox(s.id).catch(() => {});
      await cri.removePodSandbox(s.id).catch(() => {});
      console.log(`    removed leftover pod ${s.metadata?.name}`);
    }
    cri.close();'
}

remove_cgroups() {
  local ctl top ctls=(/sys/fs/cgroup/*)
  # cgroup v2: one hierarchy, the mount itself.
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then ctls=(/sys/fs/cgroup); fi
  for ctl in "${ctls[@]}"; do
    top="$ctl$CGROUP_ROOT"
    [ -d "$top" ] || continue
    # Depth first; a cgroup whose last process is still exiting needs a moment.
    find "$top" -depth -type d | while read -r d; do
      for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$d" 2>/dev/null && break; [ -d "$d" ] || break; sleep 0.1; done
    done
  done
}

print_pods() {
  curl -fsS "$URL/pods" | bun -e '
    const l = await Bun.stdin.json();
    const rows = l.items.map((p) => [p.metadata.namespace + "/" + p.metadata.name, p.status?.qosClass ?? "", p.status?.phase ?? "", p.status?.reason ?? "",
      (p.status?.containerStatuses ?? []).map((c) => c.state.running ? "running" : c.state.terminated ? `exited(${c.state.terminated.exitCode})` : c.state.waiting?.reason ?? "waiting").join(",")]);
    rows.unshift(["POD", "QOS", "PHASE", "REASON", "CONTAINERS"]);
    const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) console.log("    " + r.map((c, i) => c.padEnd(w[i])).join("  "));
    for (const p of l.items) if (p.status?.message) console.log(`    ${p.metadata.name}: ${p.status.message}`);'
}

step "Starting bunlet (kubepods limited to ${KUBEPODS_MIB} MiB; evict below 200Mi available)"
: >"$LOG"
cmd=(dist/bunlet --config examples/demo/kubelet-config.yaml
  --root-dir="$ROOT_DIR" --pod-manifest-path="$MANIFESTS" --cgroup-root="$CGROUP_ROOT"
  --system-reserved=memory="$reserved" --container-runtime-endpoint="unix://$CONTAINERD_SOCK"
  --port="$PORT" --healthz-port="$HEALTHZ_PORT" --eviction-trace="$TRACE" ${BUNLET_ARGS[@]+"${BUNLET_ARGS[@]}"})
say "${cmd[*]}"
"${cmd[@]}" 2>>"$LOG" &
BUNLET_PID=$!
# bunlet's decisions as they happen (the full log is in $LOG); tail ends with bunlet at the latest.
tail --pid="$BUNLET_PID" -n +1 -F "$LOG" 2>/dev/null > >(grep --line-buffered -E 'Container runtime|QoS cgroups|pod phase|oom_score_adj|threshold crossed|threshold met|node conditions|evicting|signalledPid|eviction trace|evicted successfully| E[0-9]{4} ' | sed -u 's/^/    bunlet| /') &
TAIL_PID=$!

for _ in $(seq 1 150); do
  curl -fsS "$URL/healthz" >/dev/null 2>&1 && break
  kill -0 "$BUNLET_PID" 2>/dev/null || die "bunlet exited; see $LOG"
  sleep 0.2
done
curl -fsS "$URL/healthz" >/dev/null || die "bunlet did not answer on $URL/healthz"

step "Waiting for the pods to run (curl $URL/pods)"
for _ in $(seq 1 300); do
  running=$(curl -fsS "$URL/pods" | bun -e 'const l = await Bun.stdin.json(); console.log(l.items.filter((p) => p.status?.phase === "Running").length)' 2>/dev/null || echo 0)
  [ "$running" -ge 3 ] && break
  sleep 0.2
done
curl -fsS "$URL/pods" | bun -e 'for (const p of (await Bun.stdin.json()).items) console.log(p.metadata.name)' >"$STATE/pods.txt"
print_pods

step "The hog grows 20 MiB/s; waiting for bunlet to evict it (up to ${TIMEOUT}s)"
deadline=$((SECONDS + TIMEOUT))
until grep -q '"kind":"eviction"' "$TRACE" 2>/dev/null; do
  kill -0 "$BUNLET_PID" 2>/dev/null || die "bunlet exited; see $LOG"
  [ "$SECONDS" -lt "$deadline" ] || { echo "demo.sh: no eviction within ${TIMEOUT}s; last log lines:" >&2; tail -n 30 "$LOG" >&2; exit 1; }
  sleep 0.2
done
sleep 0.3
kill "$TAIL_PID" 2>/dev/null || true; TAIL_PID=""

step "Eviction trace ($TRACE)"
head -n 1 "$TRACE" | bun -e '
  const r = JSON.parse((await Bun.stdin.text()).trim());
  console.log("    " + JSON.stringify(r));
  const t = r.timestamps, l = r.latencyMs;
  console.log(`\n    ${r.pod} evicted: ${r.signal} observed ${r.observed} < threshold ${r.threshold} (trigger: ${r.trigger.kind}${r.trigger.reason ? ", " + r.trigger.reason : ""})`);
  console.log(`    threshold crossed  ${t.thresholdCrossed}`);
  console.log(`    decision           +${l.decision} ms`);
  console.log(`    stop signal sent   +${l.stopSignalSent} ms`);
  console.log(`    container exited   +${l.containerExited} ms`);
  console.log(`    memory below threshold +${l.belowThreshold} ms`);
  console.log(`    ranking: ${r.ranked.map((x) => x.pod).join(" > ")}`);'

step "Pods after the eviction"
print_pods
say "metrics: $(curl -fsS "$URL/metrics" | grep -E '^kubelet_evictions' | tr '\n' ' ')"
say "explain: dist/bunlet eviction explain --server $URL    (or curl $URL/debug/eviction)"

if [ "$ONCE" -eq 1 ]; then exit 0; fi
step "bunlet keeps running (pid $BUNLET_PID, log $LOG). Ctrl-C stops it and removes the demo pods."
wait "$BUNLET_PID"
