#!/usr/bin/env bash
# Builds the single executable dist/bunlet. Worker modules (src/**/*-worker.ts) must be extra
# entrypoints of `bun build --compile`, or `new Worker(...)` fails inside the binary with
# ModuleNotFound /$bunfs/root/….
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

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
bun build --compile --minify --bytecode --splitting --format=esm --sourcemap=inline \
  --no-compile-autoload-dotenv --no-compile-autoload-bunfig \
  src/main.ts "${workers[@]}" --outfile "$tmp/bunlet" "$@"
mv -f "$tmp/bunlet" dist/bunlet
echo "built dist/bunlet ($(du -h dist/bunlet | cut -f1), workers: ${workers[*]:-none})"
