#!/usr/bin/env bash
# A real one-node Kubernetes control plane on loopback: `up` (prints export lines: use with eval),
# `down`, `status`. See scripts/upstream/cluster.ts.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec ./node_modules/.bin/bun scripts/upstream/cluster.ts "$@"
