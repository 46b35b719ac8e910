// The standard process_* metrics (as Go's and Node's Prometheus clients expose them), read from
// /proc at scrape time. Parsing is pure; the collector takes the /proc root so tests can point it
// at fixture files.
import { readdirSync, readFileSync } from "node:fs";
import { parseProcStat } from "../kernel/proc-stat.ts";
import type { CollectedMetric } from "./metrics.ts";

/** USER_HZ: the kernel reports /proc/<pid>/stat times in 1/100 s on every Linux ABI we run on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Reads a "Key:   123 kB" line of /proc/<pid>/status as bytes. */
export function statusBytes(status: string, key: string): number | undefined {
  const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, "m").exec(status);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Boot time in seconds since the epoch from /proc/stat's btime line. */
export function parseBootTime(procStat: string): number | undefined {
  const m = /^btime\s+(\d+)/m.exec(procStat);
  return m ? Number(m[1]) : undefined;
}

/** Soft "Max open files" limit from /proc/<pid>/limits. */
export function parseMaxFds(limits: string): number | undefined {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  if (!m) return undefined;
  return m[1] === "unlimited" ? Infinity : Number(m[1]);
}

export function processCollector(opts: { procRoot?: string; pid?: number | "self" } = {}) {
  const root = opts.procRoot ?? "/proc";
  const dir = `${root}/${opts.pid ?? "self"}`;
  const read = (p: string) => readFileSync(p, "utf8");

  return (): CollectedMetric[] => {
    const out: CollectedMetric[] = [];
    const gauge = (name: string, help: string, value: number | undefined) => {
      if (value !== undefined && !Number.isNaN(value)) out.push({ name, help, type: "gauge", samples: [{ value }] });
    };
    try {
      const stat = parseProcStat(read(`${dir}/stat`));
      out.push({
        name: "process_cpu_seconds_total",
        help: "Total user and system CPU time spent in seconds.",
        type: "counter",
        samples: [{ value: (stat.utimeTicks + stat.stimeTicks) / CLOCK_TICKS_PER_SECOND }],
      });
      const bootTime = parseBootTime(read(`${root}/stat`));
      if (bootTime !== undefined) {
        gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", bootTime + stat.startTimeTicks / CLOCK_TICKS_PER_SECOND);
      }
      gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", stat.virtualMemoryBytes);
    } catch {
      // A missing /proc (or a process that just exited) leaves these series out rather than failing the scrape.
    }
    try {
      gauge("process_resident_memory_bytes", "Resident memory size in bytes.", statusBytes(read(`${dir}/status`), "VmRSS"));
    } catch {}
    try {
      gauge("process_open_fds", "Number of open file descriptors.", readdirSync(`${dir}/fd`).length);
    } catch {}
    try {
      gauge("process_max_fds", "Maximum number of open file descriptors.", parseMaxFds(read(`${dir}/limits`)));
    } catch {}
    return out;
  };
}
