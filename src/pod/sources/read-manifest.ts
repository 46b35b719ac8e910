// Reading one manifest file as upstream's file source does (pkg/kubelet/config/file.go): only regular
// files (a symlink to one is fine; directories, devices, FIFOs and sockets are skipped with a warning
// naming the file), plus what upstream lacks: a size cap (a link to /dev/zero or a
// 50 MB file must not fill RAM), a read timeout (a FIFO or a hung FUSE mount must not freeze the
// source) and strict UTF-8 (bytes that are not text are an error, not U+FFFD in a pod spec).
import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";

/**
 * Largest manifest bunlet reads: room for upstream's 256 KiB of annotations plus a spec. Measured:
 * decoding YAML grows worse than linearly with the number of keys (1 MiB of small keys took 8.6 s of
 * one core), so the cap is what keeps a hostile file from blocking the event loop for long.
 */
export const MAX_MANIFEST_BYTES = 512 * 1024;
export const MANIFEST_READ_TIMEOUT_MS = 5_000;

export type ManifestRead =
  | { kind: "text"; text: string }
  /** Not a manifest (directory, device, FIFO, socket): upstream logs and skips it. */
  | { kind: "skip"; reason: string }
  | { kind: "error"; detail: string }
  /** Vanished between the listing and the read (or a dangling symlink): skipped quietly. */
  | { kind: "gone" };

export interface ReadLimits {
  maxBytes?: number;
  timeoutMs?: number;
}

function fileType(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (st.isDirectory()) return "directory";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return "special file";
}

const tooBig = (size: number, max: number) => `manifest is ${size} bytes, more than the ${max} bytes bunlet reads (MAX_MANIFEST_BYTES)`;

export async function readManifestFile(file: string, limits: ReadLimits = {}): Promise<ManifestRead> {
  const maxBytes = limits.maxBytes ?? MAX_MANIFEST_BYTES;
  const timeoutMs = limits.timeoutMs ?? MANIFEST_READ_TIMEOUT_MS;
  let st;
  try {
    st = await stat(file); // follows symlinks, as upstream's os.Stat
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "gone" };
    return { kind: "error", detail: `could not get metadata: ${(e as Error).message}` };
  }
  if (st.isDirectory()) return { kind: "skip", reason: "Not recursing into manifest path" };
  if (!st.isFile()) return { kind: "skip", reason: `Manifest path is not a directory or file (${fileType(st)})` };
  if (st.size > maxBytes) return { kind: "error", detail: tooBig(st.size, maxBytes) };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<ManifestRead>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "error", detail: `read timed out after ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await Promise.race([readBounded(file, maxBytes), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** O_NONBLOCK: if a FIFO replaced the file since stat, open() does not wait for a writer. */
async function readBounded(file: string, maxBytes: number): Promise<ManifestRead> {
  let fh;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "gone" };
    return { kind: "error", detail: `could not open: ${(e as Error).message}` };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: "skip", reason: `Manifest path is not a directory or file (${fileType(st)})` };
    // Sized from fstat (+1 to see a file that grew past the cap since), never past the cap.
    const cap = Math.min(st.size, maxBytes) + 1;
    const buf = Buffer.allocUnsafe(cap);
    let n = 0;
    while (n < cap) {
      const { bytesRead } = await fh.read(buf, n, cap - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > maxBytes) return { kind: "error", detail: tooBig(n, maxBytes) };
    if (n === cap) return { kind: "error", detail: "manifest grew while being read; it is read again at the next check" };
    try {
      return { kind: "text", text: new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, n)) };
    } catch {
      return { kind: "error", detail: "manifest is not valid UTF-8 text" };
    }
  } catch (e) {
    return { kind: "error", detail: `could not read: ${(e as Error).message}` };
  } finally {
    await fh.close().catch(() => undefined);
  }
}
