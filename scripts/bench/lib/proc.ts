// A process's own CPU time and memory from /proc — CPU time, not wall time, so other load on the
// machine does not count against the process measured.
import { readFileSync } from "node:fs";

const CLK_TCK = 100; // USER_HZ on Linux

/** utime+stime of a process, in seconds (fields 14 and 15 of proc(5) /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** Resident set size in MB (VmRSS of /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Threads of a process (Threads: of /proc/<pid>/status). */
export function threads(pid: number): number {
  const m = /Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

/** RSS split into anonymous memory (heaps) and file pages (the executable's code and bytecode), in MB. */
export function rssSplitMb(pid: number): { anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { anon: kb("RssAnon") / 1024, file: kb("RssFile") / 1024 };
}
