// PID limit stats as upstream pkg/kubelet/stats/pidlimit (Linux):
// - maxpid = min(kernel.pid_max, kernel.threads-max): both cap the number of tasks;
// - curproc = the task count from /proc/loadavg's 4th field ("running/total"), which counts
//   threads too and, unlike sysinfo(2), is not truncated above 65535 (kubernetes#107107).
import { readFileSync } from "node:fs";
import type { RlimitStats } from "./summary.ts";

export interface ProcPaths {
  pidMax: string;
  threadsMax: string;
  loadavg: string;
}

export const DEFAULT_PROC_PATHS: ProcPaths = {
  pidMax: "/proc/sys/kernel/pid_max",
  threadsMax: "/proc/sys/kernel/threads-max",
  loadavg: "/proc/loadavg",
};

/** Pure: "0.00 0.01 0.05 2/345 6789" → 345 (all tasks); undefined when malformed. */
export function parseLoadavgTasks(text: string): number | undefined {
  const fields = text.trim().split(/\s+/);
  if (fields.length < 5) return undefined;
  const m = /^\d+\/(\d+)$/.exec(fields[3]!);
  return m ? Number(m[1]) : undefined;
}

/** Pure: the smaller of the readable limits; undefined when neither was readable. */
export function maxPid(limits: ReadonlyArray<number | undefined>): number | undefined {
  let min: number | undefined;
  for (const l of limits) if (l !== undefined && (min === undefined || l < min)) min = l;
  return min;
}

function readInt(path: string): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Number of tasks (processes and threads) on the node, as upstream counts them. */
export function runningTaskCount(paths: ProcPaths = DEFAULT_PROC_PATHS): number | undefined {
  try {
    return parseLoadavgTasks(readFileSync(paths.loadavg, "utf8"));
  } catch {
    return undefined;
  }
}

export function rlimitStats(time: string, paths: ProcPaths = DEFAULT_PROC_PATHS): RlimitStats {
  const out: RlimitStats = { time };
  const max = maxPid([readInt(paths.pidMax), readInt(paths.threadsMax)]);
  if (max !== undefined) out.maxpid = max;
  const cur = runningTaskCount(paths);
  if (cur !== undefined) out.curproc = cur;
  return out;
}
