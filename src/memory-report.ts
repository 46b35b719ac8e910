// A debug-only view of where the agent's memory is (docs/development.md#memory-report): with BUNLET_DEBUG_MEMORY=1
// in its environment, SIGUSR2 makes the agent write to stderr one `memory-report` JSON line — JSC's
// heap (size, capacity, extra memory, object counts by type), process.memoryUsage(), the allocator's
// footprint and /proc/self/smaps' anonymous memory by mapping — then mimalloc's own statistics
// (Bun.unsafe.mimallocDump), then, after a full synchronous collection, a second line. The pair tells
// live objects from garbage waiting for a collection from memory the allocator keeps once freed.
// With BUNLET_DEBUG_MEMORY_SNAPSHOT_DIR set, a heap snapshot is written there too (scripts/bench/heap-top.ts
// sums it by kind and string prefix). No endpoint: only who may signal the process can ask, and without the variable nothing is installed.
// Used by scripts/bench/idle.ts (--memory-report).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MEMORY_REPORT_ENV = "BUNLET_DEBUG_MEMORY";
export const MEMORY_REPORT_TAG = "memory-report";
/** A directory: each report also writes a heap snapshot there (V8 format, after the full GC). */
export const MEMORY_SNAPSHOT_DIR_ENV = "BUNLET_DEBUG_MEMORY_SNAPSHOT_DIR";

const MB = 1024 * 1024;
const mb = (n: number) => Math.round((n / MB) * 10) / 10;

/** Anonymous resident memory of smaps `text`, by mapping kind (perms, name, size class), in MB, largest first. */
export function anonByMapping(text: string, top = 8): [string, number][] {
  const groups = new Map<string, number>();
  let key = "";
  for (const line of text.split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const kb = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1024;
      key = `${head[3]} ${head[4] || "(anon)"} ${kb >= 64 * 1024 ? "≥64M" : kb >= 1024 ? "1–64M" : "<1M"}`;
      continue;
    }
    const m = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (m && key) groups.set(key, (groups.get(key) ?? 0) + Number(m[1]) * 1024);
  }
  return [...groups]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => [k, mb(v)]);
}

/** The figures of one report (MB unless named otherwise). */
export function memoryReport(stage: string): Record<string, unknown> {
  const jsc = require("bun:jsc") as typeof import("bun:jsc");
  const hs = jsc.heapStats();
  const mu = process.memoryUsage();
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  const types = Object.entries(hs.objectTypeCounts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
  const unsafe = Bun.unsafe as unknown as { memoryFootprint?: () => number };
  const jm = jsc.memoryUsage() as unknown as Record<string, number>;
  return {
    stage,
    rss: mb(kb("VmRSS")),
    rssAnon: mb(kb("RssAnon")),
    rssFile: mb(kb("RssFile")),
    heapSize: mb(hs.heapSize),
    heapCapacity: mb(hs.heapCapacity),
    extraMemorySize: mb(hs.extraMemorySize),
    objectCount: hs.objectCount,
    protectedObjectCount: hs.protectedObjectCount,
    external: mb(mu.external),
    arrayBuffers: mb(mu.arrayBuffers),
    mallocCurrent: mb(jm.current ?? NaN),
    mallocCommit: mb(jm.currentCommit ?? NaN),
    footprint: unsafe.memoryFootprint ? mb(unsafe.memoryFootprint()) : undefined,
    types,
    anon: anonByMapping(readFileSync("/proc/self/smaps", "utf8")),
  };
}

/**
 * Writes heap-<pid>-<n>.json into `dir`, 0600 and only as a new file (O_EXCL: never through a link
 * someone left there): a heap snapshot holds every string the agent has in memory — tokens, keys,
 * Secret data. Returns the path.
 */
export function writeHeapSnapshot(dir: string, n: number, snapshot: () => string): string {
  const file = join(dir, `heap-${process.pid}-${n}.json`);
  writeFileSync(file, snapshot(), { mode: 0o600, flag: "wx" });
  return file;
}

/** Installs the SIGUSR2 handler when BUNLET_DEBUG_MEMORY=1 (nothing otherwise). */
export function installMemoryReport(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (env[MEMORY_REPORT_ENV] !== "1") return false;
  const snapshotDir = env[MEMORY_SNAPSHOT_DIR_ENV];
  let reports = 0;
  process.on("SIGUSR2", () => {
    const write = (r: Record<string, unknown>) => process.stderr.write(`${MEMORY_REPORT_TAG} ${JSON.stringify(r)}\n`);
    write(memoryReport("live"));
    (Bun.unsafe as unknown as { mimallocDump?: () => void }).mimallocDump?.();
    Bun.gc(true);
    write(memoryReport("after full GC"));
    if (snapshotDir) {
      const file = writeHeapSnapshot(snapshotDir, ++reports, () => Bun.generateHeapSnapshot("v8"));
      process.stderr.write(`${MEMORY_REPORT_TAG}-snapshot ${file}\n`);
    }
  });
  return true;
}
