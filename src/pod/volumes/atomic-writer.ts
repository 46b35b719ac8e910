// Projected file volumes' writer (upstream pkg/volume/util/atomic_writer.go, simplified): the payload
// goes into a fresh timestamped directory `..<ts>`, the `..data` symlink is swapped to it with one
// rename, and each top-level name is a symlink through `..data` — a reader never sees half an update.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join } from "node:path";

export interface PayloadFile {
  content: string;
  /** File mode (default 0644). */
  mode?: number;
}

const DATA = "..data";

function current(dir: string): Record<string, string> | undefined {
  try {
    const target = join(dir, readlinkSync(join(dir, DATA)));
    const out: Record<string, string> = {};
    const walk = (d: string, rel: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name), join(rel, e.name));
        else out[join(rel, e.name)] = readFileSync(join(d, e.name), "utf8");
      }
    };
    walk(target, "");
    return out;
  } catch {
    return undefined;
  }
}

/** Writes `payload` (relative path → file) into `dir`; returns false when it was already there. */
export function writeAtomically(dir: string, payload: Record<string, PayloadFile>): boolean {
  const old = current(dir);
  const same = old && Object.keys(old).length === Object.keys(payload).length && Object.entries(payload).every(([p, f]) => old[p] === f.content);
  if (same) return false;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const ts = `..${new Date().toISOString().replace(/[-:T]/g, "_").replace("Z", "")}${Math.random().toString(36).slice(2, 8)}`;
  const tsDir = join(dir, ts);
  for (const [rel, f] of Object.entries(payload)) {
    const path = join(tsDir, rel);
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    writeFileSync(path, f.content);
    chmodSync(path, f.mode ?? 0o644);
  }
  const prev = existsSync(join(dir, DATA)) ? readlinkSync(join(dir, DATA)) : undefined;
  symlinkSync(ts, join(dir, `${DATA}_tmp`));
  renameSync(join(dir, `${DATA}_tmp`), join(dir, DATA));
  const top = new Set(Object.keys(payload).map((p) => p.split("/")[0] as string));
  for (const name of top) if (!existsSync(join(dir, name))) symlinkSync(join(DATA, name), join(dir, name));
  for (const name of readdirSync(dir)) {
    if (name.startsWith("..") || top.has(name)) continue;
    if (lstatSync(join(dir, name)).isSymbolicLink()) rmSync(join(dir, name));
  }
  if (prev && prev !== ts) rmSync(join(dir, prev), { recursive: true, force: true });
  return true;
}
