import { describe, expect, test } from "bun:test";
import { anonByMapping, installMemoryReport, memoryReport } from "../src/memory-report.ts";

const SMAPS = `7f0000000000-7f0004000000 rw-p 00000000 00:00 0 
Size:              65536 kB
Anonymous:         10240 kB
7f0004000000-7f0004100000 rw-p 00000000 00:00 0 
Anonymous:          1024 kB
7f0005000000-7f0005100000 r-xp 00000000 08:01 42   /usr/bin/bunlet
Anonymous:             0 kB
7f0006000000-7f0006010000 rw-p 00000000 00:00 0    [stack]
Anonymous:            64 kB
`;

describe("memory report", () => {
  test("anonymous memory is grouped by perms, name and size class, largest first", () => {
    expect(anonByMapping(SMAPS)).toEqual([
      ["rw-p (anon) ≥64M", 10],
      ["rw-p (anon) 1–64M", 1],
      ["rw-p [stack] <1M", 0.1],
      ["r-xp /usr/bin/bunlet 1–64M", 0],
    ]);
  });
  test("a report of this process names the heap and the allocator", () => {
    const r = memoryReport("live");
    expect(r.stage).toBe("live");
    expect(r.heapSize).toBeGreaterThan(0);
    expect(r.rss).toBeGreaterThan(0);
    expect(Array.isArray(r.types)).toBe(true);
  });
  test("nothing is installed without BUNLET_DEBUG_MEMORY=1", () => {
    expect(installMemoryReport({})).toBe(false);
    expect(installMemoryReport({ BUNLET_DEBUG_MEMORY: "0" })).toBe(false);
  });
});

describe("heap snapshots", () => {
  test("are written 0600, as new files only (a link left in their place is not followed)", async () => {
    const { mkdtempSync, rmSync, statSync, symlinkSync, existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const { writeHeapSnapshot } = await import("../src/memory-report.ts");
    const dir = mkdtempSync(join(tmpdir(), `bunlet-heap-${process.pid}-`));
    try {
      const file = writeHeapSnapshot(dir, 1, () => "{}");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      symlinkSync(join(dir, "elsewhere"), join(dir, `heap-${process.pid}-2.json`));
      expect(() => writeHeapSnapshot(dir, 2, () => "{}")).toThrow(/EEXIST/);
      expect(existsSync(join(dir, "elsewhere"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
