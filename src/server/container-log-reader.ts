// Reading a CRI container log file for /containerLogs (upstream pkg/kubelet/kuberuntime/logs ReadLogs
// + pkg/util/tail FindTailLineStartIndex), a block at a time, never the whole file:
//   start  — 0, or the start of the last `tailLines` complete lines, found by reading blocks backwards;
//   read   — forward from there in 64 KiB blocks, split at LF (bytes, so a UTF-8 character split across
//            blocks stays whole), decoded, filtered by since, formatted, capped at limitBytes — and the
//            reading stops as soon as limitBytes is reached;
//   follow — at the end of the file, wait for a change (fs.watch, at most 1 s) and read on; a rotation
//            (renamed file, new one created) is noticed by inode and the new file read from its start.
// A follow ends when the client goes, when limitBytes is reached, or after maxFollowMs (upstream: the
// kubelet server's WriteTimeout, 4 h).
import { watch, type FSWatcher } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { decodeCriLine, formatEntry, type CriLogEntry } from "../cri/log-format.ts";

export interface LogReadOptions {
  follow: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  sinceMs?: number;
  /** Longest follow (default 4 h, upstream's WriteTimeout). */
  maxFollowMs?: number;
}

const BLOCK = 64 * 1024;
const LF = 0x0a;
const MAX_FOLLOW_MS = 4 * 60 * 60 * 1000;

/** Upstream FindTailLineStartIndex: where the last `n` complete lines start (an incomplete last line is not counted). */
export async function tailStart(fh: FileHandle, n: number): Promise<number> {
  const size = (await fh.stat()).size;
  let left = size;
  let count = 0;
  let block = Buffer.alloc(0);
  for (let right = size; right > 0 && count <= n; right = left) {
    left = Math.max(0, right - BLOCK);
    block = Buffer.alloc(right - left);
    await fh.read(block, 0, block.length, left);
    for (const b of block) if (b === LF) count++;
  }
  // Drop the surplus lines at the front of the block where the count went past n.
  let offset = left;
  for (let i = 0; count > n; count--) {
    const next = block.indexOf(LF, i);
    offset = left + next + 1;
    i = next + 1;
  }
  return offset;
}

interface Cursor {
  path: string;
  /** Kept open so a renamed (rotated) file is still read to its end. */
  fh: FileHandle;
  pos: number;
  /** Bytes after the last LF read so far. */
  carry: Buffer;
}

/** Complete lines of the next block; undefined at the end of the file. */
async function readLines(c: Cursor): Promise<Buffer[] | undefined> {
  const buf = Buffer.alloc(BLOCK);
  const { bytesRead } = await c.fh.read(buf, 0, BLOCK, c.pos);
  if (bytesRead === 0) return undefined;
  c.pos += bytesRead;
  const data = c.carry.length > 0 ? Buffer.concat([c.carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
  const lines: Buffer[] = [];
  let from = 0;
  for (let i = data.indexOf(LF); i >= 0; i = data.indexOf(LF, from)) {
    lines.push(data.subarray(from, i));
    from = i + 1;
  }
  c.carry = Buffer.from(data.subarray(from));
  return lines;
}

/** New complete lines; at the end of a file that was rotated away, moves on to the new one. */
async function readOrRotate(c: Cursor): Promise<Buffer[] | undefined> {
  const lines = await readLines(c);
  if (lines) return lines;
  const [now, cur] = await Promise.all([stat(c.path).catch(() => undefined), c.fh.stat()]);
  if (!now || now.ino === cur.ino) return undefined;
  // Rotated: whatever reached the old file before the rename comes first.
  const tail = await readLines(c);
  if (tail) return tail;
  const next = await open(c.path).catch(() => undefined);
  if (!next) return undefined;
  await c.fh.close();
  Object.assign(c, { fh: next, pos: 0, carry: Buffer.alloc(0) });
  return (await readLines(c)) ?? [];
}

/** Waits for a change in `dir` (fs.watch), at most 1 s (a missed event costs one second, not the tail). */
function changeWaiter(dir: string): { next(signal: AbortSignal): Promise<void>; close(): void } {
  let wake: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, () => wake?.());
  } catch {
    watcher = undefined;
  }
  return {
    next: (signal) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, 1000);
        function done() {
          clearTimeout(t);
          signal.removeEventListener("abort", done);
          wake = undefined;
          resolve();
        }
        wake = done;
        signal.addEventListener("abort", done);
      }),
    close: () => watcher?.close(),
  };
}

/** Caps what is sent at limitBytes (upstream LimitWriter). */
function limiter(limitBytes: number | undefined) {
  let left = limitBytes ?? Infinity;
  const enc = new TextEncoder();
  return {
    take(s: string): Uint8Array | undefined {
      if (left <= 0 || s === "") return undefined;
      let b = enc.encode(s);
      if (b.length > left) b = b.subarray(0, left);
      left -= b.length;
      return b;
    },
    get done() {
      return left <= 0;
    },
  };
}

/** The formatted text of lines: decoded, older than since dropped. */
function render(lines: Buffer[], o: LogReadOptions): string {
  let out = "";
  for (const l of lines) {
    const e: CriLogEntry | undefined = decodeCriLine(l.toString("utf8"));
    if (e && (o.sinceMs === undefined || Date.parse(e.timeText) >= o.sinceMs)) out += formatEntry(e, o.timestamps);
  }
  return out;
}

/** The log of `path` from its start (or the tail's) as a stream; the file handle is the stream's. */
export async function containerLogStream(path: string, o: LogReadOptions, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const fh = await open(path);
  let start = 0;
  try {
    if (o.tailLines !== undefined) start = await tailStart(fh, o.tailLines);
  } catch (e) {
    await fh.close();
    throw e;
  }
  const c: Cursor = { path, fh, pos: start, carry: Buffer.alloc(0) };
  const limit = limiter(o.limitBytes);
  const stop = new AbortController();
  signal.addEventListener("abort", () => stop.abort());
  const deadline = o.follow ? setTimeout(() => stop.abort(), o.maxFollowMs ?? MAX_FOLLOW_MS) : undefined;
  deadline?.unref?.();
  const waiter = o.follow ? changeWaiter(dirname(path)) : undefined;
  let closed = false;
  const finish = async () => {
    if (closed) return;
    closed = true;
    clearTimeout(deadline);
    waiter?.close();
    await c.fh.close().catch(() => {});
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!stop.signal.aborted && !limit.done) {
        let lines = o.follow ? await readOrRotate(c) : await readLines(c);
        const atEnd = lines === undefined;
        // Not following, upstream writes an incomplete last line too.
        if (atEnd && !o.follow && c.carry.length > 0) {
          lines = [c.carry];
          c.carry = Buffer.alloc(0);
        }
        const chunk = limit.take(render(lines ?? [], o));
        if (chunk) return controller.enqueue(chunk);
        if (!atEnd) continue;
        if (!o.follow) break;
        await waiter!.next(stop.signal);
      }
      await finish();
      controller.close();
    },
    cancel: finish,
  });
}
