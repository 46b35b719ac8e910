#!/usr/bin/env bash
# Builds the single executable: dist/bunlet for this host, or with --arch x64|arm64 the Linux binary
# for that architecture, dist/bunlet-linux-<arch> (docs/arm64.md). Bun cross-compiles: it fetches the
# target's runtime once from the npm registry (@oven/bun-linux-aarch64 / -x64, into ~/.bun/install/cache).
# Worker modules (src/**/*-worker.ts) must be extra entrypoints of `bun build --compile`, or
# `new Worker(...)` fails inside the binary with ModuleNotFound /$bunfs/root/….
#   scripts/build.sh [--arch x64|arm64] [extra bun build flags…]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

out=dist/bunlet target=()
if [ "${1:-}" = "--arch" ]; then
  case "${2:-}" in
    x64 | arm64) out="dist/bunlet-linux-$2" target=(--target="bun-linux-${2/arm64/aarch64}") ;;
    *) echo "build.sh: --arch takes x64 or arm64 (got '${2:-}')" >&2; exit 2 ;;
  esac
  shift 2
fi

mapfile -t workers < <(find src -name '*-worker.ts' -type f | sort)
mkdir -p dist
# --bytecode: precompiled JS halves startup (needs --format=esm for top-level await).
# --splitting: each dynamic import() is a chunk of its own, parsed only when imported: the agent does
#   not pay for the CLI's other subcommands or D-Bus, nor a subcommand for the agent (a compiled Bun
#   holding the agent's bundle unimported is 43 MB RSS as one bundle, 26 MB split; the running agent
#   with no pods ~1 MB less, within the noise — docs/adr/0008-build-flags.md).
# --sourcemap=inline: readable stack traces from the minified bundle. With --compile the map is kept in
#   the binary and read only when a stack trace is printed (same RSS as no map; docs/adr/0008-build-flags.md).
# No .env / bunfig.toml autoloading: a node agent must not pick up files from its working directory.
# Built in a scratch directory beside the target (bun also writes .map files next to the outfile) and
# renamed, so a concurrent reader never sees a half-written binary.
tmp="$(mktemp -d dist/.build.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
bun build --compile "${target[@]}" --minify --bytecode --splitting --format=esm --sourcemap=inline \
  --no-compile-autoload-dotenv --no-compile-autoload-bunfig \
  src/main.ts "${workers[@]}" --outfile "$tmp/bunlet" "$@"
mv -f "$tmp/bunlet" "$out"
echo "built $out ($(du -h "$out" | cut -f1), workers: ${workers[*]:-none})"
