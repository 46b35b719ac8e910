// /containerLogs/{namespace}/{pod}/{container} (upstream server.go getContainerLogs +
// kuberuntime/logs): the container's CRI log file (<podLogsDir>/<ns>_<pod>_<uid>/<container>/<n>.log,
// lines "<RFC3339Nano> <stream> <P|F> <content>") decoded back to what the container wrote, with
// the PodLogOptions query: follow, tailLines, limitBytes, sinceSeconds, sinceTime, timestamps,
// previous. The file is streamed a block at a time (container-log-reader.ts), never read whole; a
// follow survives log rotation and ends after 4 h at most (upstream's server WriteTimeout).
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { decodeCriLine, formatEntry, type CriLogEntry } from "../cri/log-format.ts";
import { containerLogStream } from "./container-log-reader.ts";
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
  if (tailLines !== undefined && (tailLines as number) < 0)
    return { status: 422, message: `tailLines: Invalid value: ${tailLines}: must be greater than or equal to 0` };
  if (limitBytes !== undefined && (limitBytes as number) < 1)
    return { status: 422, message: `limitBytes: Invalid value: ${limitBytes}: must be greater than 0` };
  if (sinceSeconds !== undefined && (sinceSeconds as number) < 1)
    return { status: 422, message: `sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0` };
  if (sinceSeconds !== undefined && sinceTime !== null)
    return { status: 422, message: "sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified" };
  let sinceMs: number | undefined;
  if (sinceSeconds !== undefined) sinceMs = nowMs - (sinceSeconds as number) * 1000;
  if (sinceTime !== null) {
    sinceMs = Date.parse(sinceTime);
    if (!Number.isFinite(sinceMs)) return { status: 400, message: `sinceTime: Invalid value: "${sinceTime}": must be RFC3339` };
  }
  return {
    options: {
      follow: bool("follow"),
      previous: bool("previous"),
      timestamps: bool("timestamps"),
      tailLines: tailLines as number | undefined,
      limitBytes: limitBytes as number | undefined,
      sinceMs,
    },
  };
}

/** <dir>/<n>.log files by restart count, newest first. */
export async function containerLogFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => /^\d+\.log$/.test(n))
    .sort((a, b) => parseInt(b, 10) - parseInt(a, 10))
    .map((n) => join(dir, n));
}

export interface ContainerLogsDeps {
  getPods(): readonly object[] | Promise<readonly object[]>;
  podLogsDir: string;
  nowMs?: () => number;
  /** Longest follow (default 4 h). */
  maxFollowMs?: number;
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
      return text(
        o.previous
          ? `previous terminated container "${container}" in pod "${pod}" not found\n`
          : `container "${container}" in pod "${pod}" is waiting to start\n`,
        400,
      );
    }
    const follow = o.follow && !o.previous;
    const body = await containerLogStream(path, { ...o, follow, maxFollowMs: deps.maxFollowMs }, req.signal);
    return new Response(body, { headers: { "content-type": "text/plain; charset=utf-8" } });
  };
}
