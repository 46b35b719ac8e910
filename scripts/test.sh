#!/usr/bin/env bash
# The whole test suite, as CI runs it: `npm run check`, host setup (containerd, runc, offline images),
# the compiled binary, then bun test. Needs root (cgroups, containerd).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
# The fast loop first (typecheck, lint, import rule, house rules, pure unit tests): a minute, no root.
npm run check
if [ -x scripts/host/setup.sh ] || [ -f scripts/host/setup.sh ]; then
  bash scripts/host/setup.sh
fi
# CI also builds the cgroup v2 guest's kernel once (cached), so test/integration/v2 runs there.
if [ -n "${CI:-}" ] || [ -n "${BUNLET_V2_GUEST:-}" ]; then
  # Not fatal here: without the kernel, test/integration/v2 fails under CI and says why.
  bash scripts/host/setup.sh v2-guest || echo "test.sh: the cgroup v2 guest kernel could not be built" >&2
fi
# The upstream test bed (docs/upstream.md): the real control plane and e2e.test, built once from the Go
# module proxy and cached under /var/tmp. Without Go, the real-cluster tests skip and say so. The
# upstream kubelet is left out here: its reference run is a command of its own.
if command -v go >/dev/null 2>&1; then
  BUNLET_UPSTREAM_TARGETS="kube-apiserver kube-controller-manager kube-scheduler kubectl agnhost sample-device-plugin local-path-provisioner csi-provisioner csi-attacher ginkgo e2e.test" \
    bash scripts/upstream/build.sh >/dev/null
  # containerd 2 and a runc with user namespace support, for the hostUsers: false pods (cached too).
  bash scripts/host/runtimes.sh containerd >/dev/null
  bash scripts/host/runtimes.sh runc >/dev/null
fi
bash scripts/build.sh
# bunfig.toml cannot set the per-test timeout (Bun 1.4 ignores [test] timeout); pass it here.
exec bun test --timeout 60000 "$@"
