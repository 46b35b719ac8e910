#!/usr/bin/env bash
# Builds the single executable dist/bunlet. Worker modules (src/**/*-worker.ts) must be extra
# entrypoints of `bun build --compile`, or `new Worker(...)` fails inside the binary with
# ModuleNotFound /$bunfs/root/… (see shared/host-facts.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

mapfile -t workers < <(find src -name '*-worker.ts' -type f | sort)
mkdir -p dist
# --bytecode: precompiled JS halves startup (needs --format=esm for top-level await).
# --sourcemap=inline: readable stack traces from the minified bundle.
# No .env / bunfig.toml autoloading: a node agent must not pick up files from its working directory.
# Built beside the target and renamed, so a concurrent reader never sees a half-written binary.
tmp="dist/.bunlet.$$"
trap 'rm -f "$tmp"' EXIT
bun build --compile --minify --bytecode --format=esm --sourcemap=inline \
  --no-compile-autoload-dotenv --no-compile-autoload-bunfig \
  src/main.ts "${workers[@]}" --outfile "$tmp" "$@"
mv -f "$tmp" dist/bunlet
echo "built dist/bunlet ($(du -h dist/bunlet | cut -f1), workers: ${workers[*]:-none})"
