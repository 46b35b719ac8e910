#!/usr/bin/env bash
# The pod, eviction and chaos suites on another container runtime than Debian's containerd 1.6: the
# runtime is built first (scripts/host/runtimes.sh, cached under /var/tmp), then bun test runs with it.
#   bash scripts/test-runtimes.sh containerd2 [bun test paths…]     (npm run test:containerd2)
#   bash scripts/test-runtimes.sh crio [bun test paths…]            (npm run test:crio)
# crio: the tests' private runtime is CRI-O (BUNLET_TEST_RUNTIME=crio, scripts/host/crio.sh) with
# Debian's conmon and runc; tests that need containerd itself say so and skip.
# Needs root, Go and what scripts/test.sh needs; the upstream test bed for the agent suites.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
runtime="${1:-}"
shift || true
case "$runtime" in
  containerd2)
    BUNLET_CONTAINERD_BIN="$(bash scripts/host/runtimes.sh containerd)"; export BUNLET_CONTAINERD_BIN
    version="$("$BUNLET_CONTAINERD_BIN/containerd" --version)" ;;
  crio)
    BUNLET_CRIO_BIN="$(bash scripts/host/runtimes.sh crio)"; export BUNLET_CRIO_BIN
    export BUNLET_TEST_RUNTIME=crio
    version="$("$BUNLET_CRIO_BIN/crio" --version | head -n1)" ;;
  *) echo "usage: scripts/test-runtimes.sh containerd2|crio [paths…]" >&2; exit 2 ;;
esac
bash scripts/host/setup.sh
bash scripts/build.sh
paths=("$@")
if [ ${#paths[@]} -eq 0 ]; then
  # Pods through the CRI and the agent, eviction on the real control plane, the chaos scenarios.
  paths=(test/integration/cri test/pod test/cri/kuberuntime test/integration/agent test/integration/upstream/eviction.test.ts
    test/e2e/agent.test.ts test/e2e/agent-pods.test.ts test/e2e/agent-lifecycle.test.ts test/chaos)
fi
echo "test-runtimes: $runtime ($version)" >&2
exec bun test --timeout 60000 "${paths[@]}"
