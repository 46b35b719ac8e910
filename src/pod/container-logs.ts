// Container log rotation (upstream pkg/kubelet/logs/container_log_manager.go): when a container's log
// reaches containerLogMaxSize, keep at most containerLogMaxFiles files (current included): drop the
// oldest rotated logs (keeping maxFiles-2), gzip the ones left, rename the current log to
// <log>.<YYYYMMDD-hhmmss> (that newest rotated log stays plain until the next rotation, so a reader
// tailing it is not cut off) and have the runtime reopen it (CRI ReopenContainerLog). A log that
// vanished (a reopen failed after the rename) is recovered by reopening it first.
import { createReadStream, createWriteStream } from "node:fs";
import { readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { parseQuantity, quantityValue } from "../config/quantity.ts";
import { kv, log } from "../log.ts";

export interface LogRotationPolicy {
  maxSizeBytes: number;
  maxFiles: number;
}

export type LogAction = { op: "remove"; path: string } | { op: "compress"; path: string } | { op: "rotate"; from: string; to: string };

/** containerLogMaxSize ("10Mi") + containerLogMaxFiles (5) → policy; upstream requires maxFiles > 1. */
export function logRotationPolicy(maxSize: string, maxFiles: number): LogRotationPolicy {
  if (maxFiles <= 1) throw new Error(`containerLogMaxFiles: ${maxFiles} is invalid; it must be greater than 1`);
  return { maxSizeBytes: quantityValue(parseQuantity(maxSize)), maxFiles };
}

/** Go layout "20060102-150405" in UTC. */
export function rotationTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/**
 * The actions for one log, pure. `rotated` lists existing `<log>.*` siblings (any order). Nothing is
 * done unless the current log is over the size limit.
 */
export function planLogRotation(logPath: string, sizeBytes: number, rotated: string[], policy: LogRotationPolicy, nowMs: number): LogAction[] {
  if (sizeBytes < policy.maxSizeBytes) return [];
  const actions: LogAction[] = [];
  // Leftovers of an interrupted compression, and plain files whose .gz exists, go first.
  const set = new Set(rotated);
  const live: string[] = [];
  for (const f of rotated) {
    if (f.endsWith(".tmp") || (!f.endsWith(".gz") && set.has(`${f}.gz`))) actions.push({ op: "remove", path: f });
    else live.push(f);
  }
  // Timestamps sort lexically; ".gz" does not change the order.
  live.sort((a, b) => a.replace(/\.gz$/, "").localeCompare(b.replace(/\.gz$/, "")));
  const maxRotated = Math.max(0, policy.maxFiles - 2);
  const excess = live.length - maxRotated;
  const keep = excess > 0 ? live.slice(excess) : live;
  if (excess > 0) for (const f of live.slice(0, excess)) actions.push({ op: "remove", path: f });
  // Upstream compresses every rotated log left; only the one renamed below stays plain.
  for (const f of keep) if (!f.endsWith(".gz")) actions.push({ op: "compress", path: f });
  actions.push({ op: "rotate", from: logPath, to: `${logPath}.${rotationTimestamp(nowMs)}` });
  return actions;
}

/** Applies the plan for one container log; `reopen` asks the runtime to reopen the log file. */
export async function rotateContainerLog(
  logPath: string,
  policy: LogRotationPolicy,
  deps: { nowMs: number; reopen: () => Promise<void> },
): Promise<LogAction[]> {
  let size: number;
  try {
    size = (await stat(logPath)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") return [];
    // Upstream: the log may have been lost when a reopen failed after the rename; reopening
    // recreates it. Still missing → nothing to rotate this round.
    await deps.reopen();
    try {
      size = (await stat(logPath)).size;
    } catch {
      return [];
    }
  }
  // The plan is empty under the size limit: no listing of the rotated logs (a readdir per container
  // every 10 s is idle cost).
  if (size < policy.maxSizeBytes) return [];
  const dir = dirname(logPath);
  const prefix = `${basename(logPath)}.`;
  const rotated = (await readdir(dir)).filter((f) => f.startsWith(prefix)).map((f) => join(dir, f));
  const actions = planLogRotation(logPath, size, rotated, policy, deps.nowMs);
  for (const a of actions) {
    if (a.op === "remove") await unlink(a.path).catch(() => undefined);
    else if (a.op === "compress") {
      const tmp = `${a.path}.tmp`;
      await pipeline(createReadStream(a.path), createGzip(), createWriteStream(tmp));
      await rename(tmp, `${a.path}.gz`);
      await unlink(a.path);
    } else {
      await rename(a.from, a.to);
      try {
        await deps.reopen();
      } catch (e) {
        // Without a reopened log the runtime keeps writing to the renamed file: undo.
        await rename(a.to, a.from).catch(() => undefined);
        throw new Error(`failed to reopen container log ${a.from}: ${(e as Error).message}`);
      }
      log.debug(`rotated container log ${kv({ log: a.from, to: a.to, size })}`);
    }
  }
  return actions;
}

/**
 * Upstream ContainerLogManager: every containerLogMonitorInterval (10 s) rotate each running
 * container's log that outgrew the policy. Needs Runtime.listContainerLogs/reopenContainerLog.
 */
export function createContainerLogManager(opts: {
  listContainerLogs: () => Promise<{ containerId: string; logPath: string }[]>;
  reopenContainerLog: (containerId: string) => Promise<void>;
  policy: LogRotationPolicy;
  now: () => number;
}): { rotateAll(): Promise<number> } {
  return {
    async rotateAll() {
      let rotated = 0;
      let logs: { containerId: string; logPath: string }[];
      try {
        logs = await opts.listContainerLogs();
      } catch (e) {
        log.warn(`container log rotation: listing containers failed ${kv({ error: (e as Error).message })}`);
        return 0;
      }
      for (const l of logs) {
        try {
          const actions = await rotateContainerLog(l.logPath, opts.policy, { nowMs: opts.now(), reopen: () => opts.reopenContainerLog(l.containerId) });
          if (actions.some((a) => a.op === "rotate")) rotated++;
        } catch (e) {
          log.warn(`container log rotation failed ${kv({ container: l.containerId.slice(0, 13), log: l.logPath, error: (e as Error).message })}`);
        }
      }
      return rotated;
    },
  };
}
