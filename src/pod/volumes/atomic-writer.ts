// Projected file volumes' writer (upstream pkg/volume/util/atomic_writer.go): the payload goes into a
// fresh timestamped directory `..2006_01_02_15_04_05.<random>` (UTC, upstream's layout), the `..data`
// symlink is swapped to it with one rename of `..data_tmp`, and each top-level name is a symlink
// through `..data` — a reader never sees half an update. Unchanged content writes nothing (upstream
// shouldWriteFile compares bytes only). Every payload path is checked first (upstream validatePayload):
// one that is absolute, has a ".." element or starts with ".." fails the whole write, so no key of a
// configMap, secret or downwardAPI item can place a file outside the volume or over its "..data".
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

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

const MAX_PATH_LENGTH = 4096;
const MAX_FILE_NAME_LENGTH = 255;

/** upstream validatePath: the error for a payload path, undefined when it is fine. */
export function payloadPathError(targetPath: string): string | undefined {
  if (targetPath === "") return `invalid path: must not be empty: ${JSON.stringify(targetPath)}`;
  if (targetPath.startsWith("/")) return `invalid path: must be relative path: ${targetPath}`;
  if (targetPath.length > MAX_PATH_LENGTH) return `invalid path: must be less than or equal to ${MAX_PATH_LENGTH} characters`;
  const items = targetPath.split("/");
  for (const item of items) {
    if (item === "..") return `invalid path: must not contain '..': ${targetPath}`;
    if (Buffer.byteLength(item) > MAX_FILE_NAME_LENGTH) return `invalid path: filenames must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`;
  }
  if (items[0]!.startsWith("..") && items[0]!.length > 2) return `invalid path: must not start with '..': ${targetPath}`;
  if (targetPath.includes("\0")) return `invalid path: must not contain a NUL byte`;
  return undefined;
}

/** upstream validatePayload: the payload with cleaned paths, or an Error naming the first bad one. */
export function validatePayload(payload: Record<string, PayloadFile>): Record<string, PayloadFile> {
  const clean: Record<string, PayloadFile> = {};
  for (const [p, f] of Object.entries(payload)) {
    const err = payloadPathError(p);
    if (err) throw new Error(err);
    clean[normalize(p).replace(/\/$/, "")] = f;
  }
  return clean;
}

/** Writes `payload` (relative path → file) into `dir`; returns false when it was already there. */
export function writeAtomically(dir: string, unchecked: Record<string, PayloadFile>): boolean {
  const payload = validatePayload(unchecked);
  const old = current(dir);
  const same =
    old && Object.keys(old).length === Object.keys(payload).length && Object.entries(payload).every(([p, f]) => old[p]?.equals(Buffer.from(f.content)));
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
