// `bunlet debug notify`: watch the same kernel notifications the eviction manager uses and print
// each one with a timestamp, until Ctrl-C (or --count events / --timeout). For checking on a node
// that thresholds really fire, and how fast, before trusting the eviction manager with them.
//   bunlet debug notify --cgroup /sys/fs/cgroup/memory/kubepods --threshold 100Mi
//   bunlet debug notify --cgroup kubepods --threshold +50Mi       (50Mi above current usage)
//   bunlet debug notify --psi "some 150000 2000000" [--pressure-file /sys/fs/cgroup/unified/memory.pressure]
//   bunlet debug notify --memory-events /sys/fs/cgroup/unified/x/memory.events
import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { durationMs } from "../config/duration.ts";
import { formatQuantity, parseQuantity, quantityFromNumber, quantityValue } from "../config/quantity.ts";
import { armCgroupThreshold } from "../kernel/cgroup-threshold.ts";
import { createNotifierHub } from "../kernel/hub.ts";
import { watchMemoryEvents } from "../kernel/memory-events.ts";
import { startPsiNotifier } from "../kernel/psi.ts";
import { kv } from "../log.ts";

export const MEMORY_CGROUP_ROOT = "/sys/fs/cgroup/memory";
export const DEFAULT_PRESSURE_FILE = "/sys/fs/cgroup/unified/memory.pressure";

export interface NotifyOptions {
  cgroup?: string;
  threshold?: string;
  psi?: string;
  pressureFile?: string;
  memoryEvents?: string;
  /** Stop after this many events (0 = until interrupted). */
  count?: number;
  /** Stop after this long, in ms (0 = until interrupted). */
  timeoutMs?: number;
}

export interface NotifyIO {
  out(line: string): void;
  err(line: string): void;
  now(): number;
}

export class NotifyUsageError extends Error {
  override name = "NotifyUsageError";
}

const bytes = (n: number) => formatQuantity(quantityFromNumber(n, "BinarySI"));

/** Resolves --threshold: an absolute quantity, or "+<quantity>" above the cgroup's current usage. */
export function resolveThresholdBytes(spec: string, currentUsage: () => number): number {
  const rel = spec.startsWith("+");
  let value: number;
  try {
    value = quantityValue(parseQuantity(rel ? spec.slice(1) : spec));
  } catch (e) {
    throw new NotifyUsageError(
      `--threshold ${JSON.stringify(spec)}: ${(e as Error).message} (use a quantity such as 100Mi, or +50Mi for "50Mi above current usage")`,
    );
  }
  if (!Number.isFinite(value) || value < 0) throw new NotifyUsageError(`--threshold ${JSON.stringify(spec)}: must be a non-negative byte quantity`);
  return Math.trunc(rel ? currentUsage() + value : value);
}

/** Runs the watchers until `abort` fires, --count events were printed, or --timeout passed. */
export async function runNotify(opts: NotifyOptions, io: NotifyIO, abort: AbortSignal): Promise<number> {
  const modes = [opts.cgroup !== undefined || opts.threshold !== undefined, opts.psi !== undefined, opts.memoryEvents !== undefined].filter(Boolean).length;
  if (modes === 0) throw new NotifyUsageError('nothing to watch: give --cgroup PATH --threshold QTY, --psi "some 150000 2000000", or --memory-events FILE');
  if ((opts.cgroup === undefined) !== (opts.threshold === undefined)) throw new NotifyUsageError("--cgroup and --threshold go together");

  const stamp = () => new Date(io.now()).toISOString();
  const hub = createNotifierHub({ onError: (e) => io.err(`${stamp()} error ${kv({ message: e.message })}`) });
  const stops: Array<() => void> = [];
  let events = 0;
  let finish: () => void = () => {};
  const done = new Promise<void>((r) => (finish = r));
  const counted = () => {
    events++;
    if (opts.count && events >= opts.count) finish();
  };

  try {
    if (opts.cgroup !== undefined && opts.threshold !== undefined) {
      const cgroupPath = isAbsolute(opts.cgroup) ? opts.cgroup : join(MEMORY_CGROUP_ROOT, opts.cgroup);
      const usagePath = join(cgroupPath, "memory.usage_in_bytes");
      const thresholdBytes = resolveThresholdBytes(opts.threshold, () => Number(readFileSync(usagePath, "utf8").trim()));
      const n = await armCgroupThreshold(hub, {
        cgroupPath,
        thresholdBytes,
        onEvent(ev) {
          const dir = ev.usageBytes === undefined ? undefined : ev.usageBytes >= thresholdBytes ? "above" : "below";
          io.out(
            `${stamp()} threshold ${kv({ cgroup: cgroupPath, threshold: bytes(thresholdBytes), usage: ev.usageBytes === undefined ? undefined : bytes(ev.usageBytes), now: dir, count: ev.count })}`,
          );
          counted();
        },
        onRemoved(p) {
          io.out(`${stamp()} removed ${kv({ cgroup: p })}`);
          finish();
        },
      });
      stops.push(() => n.stop());
      io.err(`${stamp()} watching ${kv({ cgroup: cgroupPath, attribute: "memory.usage_in_bytes", threshold: bytes(thresholdBytes), thresholdBytes })}`);
    }
    if (opts.psi !== undefined) {
      const path = opts.pressureFile ?? DEFAULT_PRESSURE_FILE;
      const n = startPsiNotifier(hub, {
        path,
        trigger: opts.psi,
        onEvent(ev) {
          const line = ev.trigger.kind === "full" ? ev.pressure?.full : ev.pressure?.some;
          io.out(`${stamp()} psi ${kv({ file: path, trigger: opts.psi, source: ev.source, avg10: line?.avg10, totalUs: line?.total })}`);
          counted();
        },
        onUnsupported(e, hint) {
          io.err(`${stamp()} psi trigger refused ${kv({ file: path, trigger: opts.psi, errno: e.code, reason: hint })}`);
        },
        onRemoved(p) {
          io.out(`${stamp()} removed ${kv({ file: p })}`);
          finish();
        },
      });
      stops.push(() => n.stop());
      io.err(`${stamp()} watching ${kv({ file: path, trigger: opts.psi, mode: n.mode })}`);
    }
    if (opts.memoryEvents !== undefined) {
      const path = opts.memoryEvents;
      const w = watchMemoryEvents(hub, {
        path,
        onEvent(ev) {
          io.out(`${stamp()} memory.events ${kv({ file: path, ...ev.delta })}`);
          counted();
        },
        onRemoved(p) {
          io.out(`${stamp()} removed ${kv({ file: p })}`);
          finish();
        },
      });
      stops.push(() => w.stop());
      io.err(`${stamp()} watching ${kv({ file: path, mode: w.mode, ...w.counters })}`);
    }

    // The hub's worker is unref'd; this timer keeps the process alive while we wait.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const timer = opts.timeoutMs ? setTimeout(finish, opts.timeoutMs) : undefined;
    abort.addEventListener("abort", finish, { once: true });
    if (abort.aborted) finish();
    await done;
    clearInterval(keepAlive);
    clearTimeout(timer);
    return events;
  } finally {
    for (const stop of stops) stop();
    await hub.close();
  }
}

export default defineCommand({
  meta: { name: "debug", description: "Low-level diagnostics of kernel notifications" },
  subCommands: {
    notify: defineCommand({
      meta: { name: "notify", description: "Print kernel memory notifications (memcg threshold, PSI trigger, memory.events) as they arrive" },
      args: {
        cgroup: { type: "string", description: `cgroup v1 memory cgroup, absolute or relative to ${MEMORY_CGROUP_ROOT}` },
        threshold: { type: "string", description: 'memory.usage_in_bytes threshold, e.g. 100Mi, or "+50Mi" above current usage' },
        psi: { type: "string", description: 'PSI trigger, e.g. "some 150000 2000000" (stall µs, window µs)' },
        "pressure-file": { type: "string", description: `pressure file for --psi (default ${DEFAULT_PRESSURE_FILE})` },
        "memory-events": { type: "string", description: "a cgroup v2 memory.events file to watch" },
        count: { type: "string", description: "exit after this many events" },
        timeout: { type: "string", description: "exit after this long, e.g. 30s" },
      },
      async run({ args }) {
        const abort = new AbortController();
        const onSignal = () => abort.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        try {
          const count = args.count === undefined ? 0 : Number(args.count);
          if (!Number.isInteger(count) || count < 0) throw new NotifyUsageError(`--count ${JSON.stringify(args.count)}: expected a non-negative integer`);
          let timeoutMs = 0;
          if (args.timeout !== undefined) {
            try {
              timeoutMs = durationMs(args.timeout);
            } catch (e) {
              throw new NotifyUsageError(`--timeout ${JSON.stringify(args.timeout)}: ${(e as Error).message}`);
            }
          }
          await runNotify(
            {
              cgroup: args.cgroup,
              threshold: args.threshold,
              psi: args.psi,
              pressureFile: args["pressure-file"],
              memoryEvents: args["memory-events"],
              count,
              timeoutMs,
            },
            { out: (l) => console.log(l), err: (l) => console.error(l), now: () => Date.now() },
            abort.signal,
          );
        } catch (e) {
          console.error(`bunlet debug notify: ${(e as Error).message}`);
          process.exitCode = 1;
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
        }
      },
    }),
  },
});
