// A process's own CPU time and memory from /proc — CPU time, not wall time, so other load on the
// machine does not count against the process measured.
import { readdirSync, readFileSync } from "node:fs";

const CLK_TCK = 100; // USER_HZ on Linux

/** utime+stime of a process, in seconds (fields 14 and 15 of proc(5) /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command (which may hold spaces) start after the last ')'.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** The thread IDs of a process (none once it has gone). */
function taskIds(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}

/**
 * CPU seconds of each thread of a process, summed by thread name (comm of /proc/<pid>/task/<tid>/stat):
 * the JS thread (the binary's name) apart from JSC's GC ("Heap Helper"), JIT and Bun's worker threads.
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of taskIds(pid)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / CLK_TCK);
  }
  return out;
}

/**
 * How often the main (JS) thread has gone to sleep so far — each idle wake-up (a timer, an event) is one:
 * voluntary_ctxt_switches of /proc/<pid>/task/<pid>/status.
 */
export function mainThreadSleeps(pid: number): number {
  const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? Number.NaN);
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

/**
 * Anonymous memory of a process by kind of mapping (/proc/<pid>/smaps), largest first, in MB: where
 * RSS that is not the JS heap lives — JIT code (executable anon), allocator arenas, thread stacks.
 */
export function anonMappingsMb(pid: number, top = 8): { mapping: string; anonMb: number; sizeMb: number; count: number }[] {
  const groups = new Map<string, { anon: number; size: number; count: number }>();
  let key = "";
  let sizeKb = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      sizeKb = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1024;
      const size = sizeKb >= 64 * 1024 ? "≥64M" : sizeKb >= 1024 ? "1–64M" : "<1M";
      key = `${head[3]} ${head[4] || "(anon)"} ${size}`;
      continue;
    }
    const m = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (!m || !key) continue;
    const g = groups.get(key) ?? { anon: 0, size: 0, count: 0 };
    g.anon += Number(m[1]);
    g.size += sizeKb;
    g.count++;
    groups.set(key, g);
  }
  return [...groups]
    .map(([mapping, g]) => ({ mapping, anonMb: g.anon / 1024, sizeMb: g.size / 1024, count: g.count }))
    .filter((g) => g.anonMb > 0.5)
    .sort((a, b) => b.anonMb - a.anonMb)
    .slice(0, top);
}

/** RSS and PSS in MB (Rss and Pss of /proc/<pid>/smaps_rollup): PSS shares the executable's file pages with other processes mapping it. */
export function rssPssMb(pid: number): { rss: number; pss: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { rss: kb("Rss") / 1024, pss: kb("Pss") / 1024 };
}

/**
 * Voluntary context switches of each thread of a process, by thread id (voluntary_ctxt_switches of
 * /proc/<pid>/task/<tid>/status): one per time a thread went to sleep, so their growth is the process's
 * wake-ups, whichever thread (a Go program's runtime threads, JSC's helpers) woke.
 */
export function voluntarySwitchesByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of taskIds(pid)) {
    try {
      const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8"));
      if (m) out.set(tid, Number(m[1]));
    } catch {
      // the thread ended
    }
  }
  return out;
}
