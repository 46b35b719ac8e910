// /containerLogs/{namespace}/{pod}/{container} (upstream server.go getContainerLogs +
// kuberuntime/logs): the container's CRI log file (<podLogsDir>/<ns>_<pod>_<uid>/<container>/<n>.log,
// lines "<RFC3339Nano> <stream> <P|F> <content>") decoded back to what the container wrote, with
// the PodLogOptions query: follow, tailLines, limitBytes, sinceSeconds, sinceTime, timestamps,
// previous. While following, a rotation (file renamed, a new one created) is noticed by inode and
// the new file is read from its start, so nothing is lost or repeated.
import { watch, type FSWatcher } from "node:fs";
import { open, readdir, stat, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { decodeCriLine, formatEntry, type CriLogEntry } from "../cri/log-format.ts";
import { json, text } from "./router.ts";

export { decodeCriLine, formatEntry, type CriLogEntry };

export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  sinceMs?: number;
}

/** The entry is at or after sinceMs (always, without a since). */
const since = (sinceMs: number | undefined) => (e: CriLogEntry) => sinceMs === undefined || Date.parse(e.timeText) >= sinceMs;

type Parsed = { options: LogOptions } | { status: number; message: string };

function int(q: URLSearchParams, name: string): number | undefined | Error {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^-?\d+$/.test(v)) return new Error(`${name}: Invalid value: "${v}": must be an integer`);
  return Number(v);
}

/** The query as PodLogOptions, with upstream's validation (422 for invalid values). */
export function parseLogOptions(q: URLSearchParams, nowMs: number): Parsed {
  const bool = (n: string) => q.get(n) === "true" || q.get(n) === "1";
  const tailLines = int(q, "tailLines");
  const limitBytes = int(q, "limitBytes");
  const sinceSeconds = int(q, "sinceSeconds");
  for (const v of [tailLines, limitBytes, sinceSeconds]) if (v instanceof Error) return { status: 400, message: v.message };
  const sinceTime = q.get("sinceTime");
  if (tailLines !== undefined && (tailLines as number) < 0) return { status: 422, message: `tailLines: Invalid value: ${tailLines}: must be greater than or equal to 0` };
  if (limitBytes !== undefined && (limitBytes as number) < 1) return { status: 422, message: `limitBytes: Invalid value: ${limitBytes}: must be greater than 0` };
  if (sinceSeconds !== undefined && (sinceSeconds as number) < 1) return { status: 422, message: `sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0` };
  if (sinceSeconds !== undefined && sinceTime !== null) return { status: 422, message: "sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified" };
  let sinceMs: number | undefined;
  if (sinceSeconds !== undefined) sinceMs = nowMs - (sinceSeconds as number) * 1000;
  if (sinceTime !== null) {
    sinceMs = Date.parse(sinceTime);
    if (!Number.isFinite(sinceMs)) return { status: 400, message: `sinceTime: Invalid value: "${sinceTime}": must be RFC3339` };
  }
  return {
    options: { follow: bool("follow"), previous: bool("previous"), timestamps: bool("timestamps"), tailLines: tailLines as number | undefined, limitBytes: limitBytes as number | undefined, sinceMs },
  };
}

/** Decodes whole lines of a log text; filters by since, then keeps the last tailLines. */
export function selectEntries(lines: readonly string[], o: Pick<LogOptions, "sinceMs" | "tailLines">): CriLogEntry[] {
  let entries = lines.map(decodeCriLine).filter((e): e is CriLogEntry => e !== undefined);
  if (o.sinceMs !== undefined) entries = entries.filter(since(o.sinceMs));
  if (o.tailLines !== undefined) entries = o.tailLines === 0 ? [] : entries.slice(-o.tailLines);
  return entries;
}

/** <dir>/<n>.log files by restart count, newest first. */
export async function containerLogFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => /^\d+\.log$/.test(n))
    .sort((a, b) => parseInt(b, 10) - parseInt(a, 10))
    .map((n) => join(dir, n));
}

const enc = new TextEncoder();

/** Caps what is sent at limitBytes (upstream LimitWriter). */
function limiter(limitBytes: number | undefined) {
  let left = limitBytes ?? Infinity;
  return {
    take(s: string): Uint8Array | undefined {
      if (left <= 0) return undefined;
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

interface FollowState {
  path: string;
  /** The file being read; kept open so a renamed (rotated) file is still read to its end. */
  fh?: FileHandle;
  pos: number;
  carry: string;
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

async function readChunk(st: FollowState): Promise<string[] | undefined> {
  if (!st.fh) return undefined;
  const buf = Buffer.alloc(1 << 20);
  const { bytesRead } = await st.fh.read(buf, 0, buf.length, st.pos);
  if (bytesRead === 0) return undefined;
  st.pos += bytesRead;
  const parts = (st.carry + buf.subarray(0, bytesRead).toString("utf8")).split("\n");
  st.carry = parts.pop()!;
  return parts;
}

/** New complete lines; at the end of a file that was rotated away, moves on to the new one. */
async function readMore(st: FollowState): Promise<string[] | undefined> {
  const lines = await readChunk(st);
  if (lines) return lines;
  const [now, cur] = await Promise.all([stat(st.path).catch(() => undefined), st.fh?.stat()]);
  if (!now || (cur && now.ino === cur.ino)) return undefined;
  // Rotated: whatever reached the old file before the rename comes first.
  const tail = await readChunk(st);
  if (tail) return tail;
  const next = await open(st.path).catch(() => undefined);
  if (!next) return undefined;
  await st.fh?.close();
  Object.assign(st, { fh: next, pos: 0, carry: "" });
  return (await readChunk(st)) ?? [];
}

function followStream(first: Uint8Array | undefined, st: FollowState, o: LogOptions, limit: ReturnType<typeof limiter>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const waiter = changeWaiter(join(st.path, ".."));
  const abort = new AbortController();
  signal.addEventListener("abort", () => abort.abort());
  let sentFirst = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentFirst && first) {
        sentFirst = true;
        return controller.enqueue(first);
      }
      while (!abort.signal.aborted && !limit.done) {
        const lines = await readMore(st);
        const out = (lines ?? []).map(decodeCriLine).filter((e): e is CriLogEntry => e !== undefined && since(o.sinceMs)(e));
        const chunk = out.length > 0 ? limit.take(out.map((e) => formatEntry(e, o.timestamps)).join("")) : undefined;
        if (chunk) return controller.enqueue(chunk);
        if (!lines) await waiter.next(abort.signal);
      }
      waiter.close();
      await st.fh?.close();
      controller.close();
    },
    async cancel() {
      abort.abort();
      waiter.close();
      await st.fh?.close();
    },
  });
}

export interface ContainerLogsDeps {
  getPods(): readonly object[] | Promise<readonly object[]>;
  podLogsDir: string;
  nowMs?: () => number;
}

type PodLike = { metadata?: { name?: string; namespace?: string; uid?: string }; spec?: Record<string, { name?: string }[] | undefined> };

function findContainer(pods: readonly object[], ns: string, name: string, container: string): { uid: string } | Response {
  const pod = (pods as PodLike[]).find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
  if (!pod) return text(`pod "${name}" does not exist\n`, 404);
  const all = ["initContainers", "containers", "ephemeralContainers"].flatMap((k) => pod.spec?.[k] ?? []);
  if (!all.some((c) => c.name === container)) return text(`container "${container}" not found in pod "${name}"\n`, 404);
  return { uid: pod.metadata?.uid ?? "" };
}

export function containerLogsHandler(deps: ContainerLogsDeps): (req: Request, url: URL) => Promise<Response> {
  return async (req, url) => {
    // A segment that is not valid UTF-8 once decoded names no pod: kept as sent, so the lookup says 404.
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    };
    const [ns, pod, container] = url.pathname.slice("/containerLogs/".length).split("/").map(decode);
    if (!ns) return text("missing podNamespace\n", 400);
    if (!pod) return text("missing podID\n", 400);
    if (!container) return text("missing container name\n", 400);
    const found = findContainer(await deps.getPods(), ns, pod, container);
    if (found instanceof Response) return found;
    const parsed = parseLogOptions(url.searchParams, (deps.nowMs ?? Date.now)());
    if ("status" in parsed) return json({ kind: "Status", apiVersion: "v1", status: "Failure", message: parsed.message, code: parsed.status }, parsed.status);
    const o = parsed.options;
    const files = await containerLogFiles(join(deps.podLogsDir, `${ns}_${pod}_${found.uid}`, container));
    const path = o.previous ? files[1] : files[0];
    if (!path) {
      return text(o.previous ? `previous terminated container "${container}" in pod "${pod}" not found\n` : `container "${container}" in pod "${pod}" is waiting to start\n`, 400);
    }
    const fh = await open(path);
    const bytes = await fh.readFile({ encoding: "utf8" }).catch(async (e) => {
      await fh.close();
      throw e;
    });
    const lines = bytes.split("\n");
    const carry = lines.pop()!;
    const limit = limiter(o.limitBytes);
    const first = limit.take(selectEntries(lines, o).map((e) => formatEntry(e, o.timestamps)).join(""));
    const headers = { "content-type": "text/plain; charset=utf-8" };
    if (!o.follow || o.previous) {
      await fh.close();
      return new Response(new Blob(first ? [first as Uint8Array<ArrayBuffer>] : []), { headers });
    }
    const st: FollowState = { path, fh, pos: Buffer.byteLength(bytes), carry };
    return new Response(followStream(first, st, o, limit, req.signal), { headers });
  };
}
