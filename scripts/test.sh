#!/usr/bin/env bash
# The whole test suite, as CI runs it: host setup (containerd, runc, offline images), the compiled
# binary, then bun test. Needs root (cgroups, containerd).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
if [ -x scripts/host/setup.sh ] || [ -f scripts/host/setup.sh ]; then
  bash scripts/host/setup.sh
fi
bash scripts/build.sh
exec bun test "$@"
