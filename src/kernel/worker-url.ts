// Where a Worker module lives, both under `bun run` and inside `bun build --compile`.
// In a compiled binary every extra entrypoint is bundled to /$bunfs/root/<path relative to the
// entrypoints' common directory>.js, and `new URL("./x.ts", import.meta.url)` points at the main
// bundle's directory instead, so we look the file up in the embedded filesystem.
import { existsSync, readdirSync } from "node:fs";

const BUNFS_ROOT = "/$bunfs/root";

export function workerUrl(name: string, moduleUrl: string): string {
  if (!moduleUrl.startsWith(`file://${BUNFS_ROOT}/`) && !moduleUrl.startsWith(`${BUNFS_ROOT}/`)) {
    return new URL(`./${name}.ts`, moduleUrl).href;
  }
  for (const candidate of [`kernel/${name}.js`, `src/kernel/${name}.js`, `${name}.js`]) {
    const p = `${BUNFS_ROOT}/${candidate}`;
    if (existsSync(p)) return p;
  }
  const found = findFile(BUNFS_ROOT, `${name}.js`, 8);
  if (found) return found;
  throw new Error(
    `worker module ${name} is not embedded in this binary (looked under ${BUNFS_ROOT}); ` +
      `build with every src/**/*-worker.ts as an extra entrypoint of bun build --compile`,
  );
}

function findFile(dir: string, file: string, depth: number): string | undefined {
  if (depth < 0) return undefined;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return undefined;
  }
  if (entries.includes(file)) return `${dir}/${file}`;
  for (const e of entries) {
    if (e.endsWith(".js")) continue;
    const hit = findFile(`${dir}/${e}`, file, depth - 1);
    if (hit) return hit;
  }
  return undefined;
}
