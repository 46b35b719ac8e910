// /proc/<pid>/stat parsed (as prometheus/procfs proc_stat.go ProcStat, which Go's process collector reads):
// pure, one line in, the fields we use out. Shared by the process_* metrics (server/process-metrics.ts) and the
// working-set thread's major-fault counts (kernel/working-set-worker.ts), so it sits below both.

export interface ProcStat {
  /** Field 12, majflt: faults that read a page from disk. */
  majorFaults: number;
  utimeTicks: number;
  stimeTicks: number;
  startTimeTicks: number;
  virtualMemoryBytes: number;
}

/** Parses /proc/<pid>/stat. The comm field (2) may hold spaces and parens: split after the last ')'. */
export function parseProcStat(text: string): ProcStat {
  const close = text.lastIndexOf(")");
  if (close < 0) throw new Error(`/proc stat: no ")" in ${JSON.stringify(text.slice(0, 80))}`);
  // Fields from 3 (state) onwards; field n is at index n - 3.
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(f[n - 3]);
  return {
    majorFaults: field(12),
    utimeTicks: field(14),
    stimeTicks: field(15),
    startTimeTicks: field(22),
    virtualMemoryBytes: field(23),
  };
}
