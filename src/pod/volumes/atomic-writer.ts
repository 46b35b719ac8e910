// Projected file volumes' writer (upstream pkg/volume/util/atomic_writer.go): the payload goes into a
// fresh timestamped directory `..2006_01_02_15_04_05.<random>` (UTC, upstream's layout), the `..data`
// symlink is swapped to it with one rename of `..data_tmp`, and each top-level name is a symlink
// through `..data` — a reader never sees half an update. Unchanged content writes nothing (upstream
// shouldWriteFile compares bytes only).
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join } from "node:path";

export interface PayloadFile {
  /** Text, or bytes (secret and configMap binaryData values). */
  content: string | Uint8Array;
  /** File mode (default 0644). */
  mode?: number;
}

const DATA = "..data";

/** upstream: os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05.")) — the temp suffix is random digits. */
export function timestampedDirName(at: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const ts = `${at.getUTCFullYear()}_${p(at.getUTCMonth() + 1)}_${p(at.getUTCDate())}_${p(at.getUTCHours())}_${p(at.getUTCMinutes())}_${p(at.getUTCSeconds())}`;
  return `..${ts}.${Math.floor(Math.random() * 4_294_967_296)}`;
}

function current(dir: string): Record<string, Buffer> | undefined {
  try {
    const target = join(dir, readlinkSync(join(dir, DATA)));
    const out: Record<string, Buffer> = {};
    const walk = (d: string, rel: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name), join(rel, e.name));
        else out[join(rel, e.name)] = readFileSync(join(d, e.name));
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
  const same =
    old &&
    Object.keys(old).length === Object.keys(payload).length &&
    Object.entries(payload).every(([p, f]) => old[p] !== undefined && old[p].equals(Buffer.from(f.content)));
  if (same) return false;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const ts = timestampedDirName(new Date());
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
