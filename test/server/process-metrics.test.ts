import { describe, expect, test } from "bun:test";
import { parseProcStat } from "../../src/kernel/proc-stat.ts";
import { parseBootTime, parseMaxFds, processCollector, statusBytes } from "../../src/server/process-metrics.ts";

describe("/proc parsing", () => {
  test("parseProcStat splits after the last paren of comm", () => {
    // comm with spaces and a ')' inside, as a process can name itself.
    const fields = ["S", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "150", "50", "0", "0", "20", "0", "1", "0", "12345", "4096000", "300"];
    const s = parseProcStat(`42 (we ird) name) ${fields.join(" ")}\n`);
    expect(s).toEqual({ majorFaults: 9, utimeTicks: 150, stimeTicks: 50, startTimeTicks: 12345, virtualMemoryBytes: 4096000 });
  });

  test.each([
    ["VmRSS", "Name:\tbun\nVmRSS:\t   2048 kB\n", 2048 * 1024],
    ["VmRSS", "Name:\tbun\n", undefined],
  ])("statusBytes(%s)", (key, text, want) => {
    expect(statusBytes(text, key)).toBe(want);
  });

  test("parseBootTime and parseMaxFds", () => {
    expect(parseBootTime("cpu 1 2 3\nbtime 1700000000\n")).toBe(1700000000);
    expect(parseMaxFds("Limit Soft Hard Units\nMax open files            1024                 4096                 files\n")).toBe(1024);
    expect(parseMaxFds("Max open files unlimited unlimited files")).toBe(Infinity);
  });
});

describe("processCollector on the live process", () => {
  test("reports the standard process metrics with plausible values", () => {
    const metrics = new Map(processCollector()().map((m) => [m.name, m]));
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
      "process_open_fds",
      "process_max_fds",
      "process_virtual_memory_bytes",
    ]) {
      expect(metrics.has(name)).toBe(true);
    }
    expect(metrics.get("process_resident_memory_bytes")!.samples[0]!.value).toBeGreaterThan(1024 * 1024);
    const start = metrics.get("process_start_time_seconds")!.samples[0]!.value;
    expect(Math.abs(start - Date.now() / 1000)).toBeLessThan(3600);
    expect(metrics.get("process_open_fds")!.samples[0]!.value).toBeGreaterThan(2);
    expect(metrics.get("process_cpu_seconds_total")!.type).toBe("counter");
  });

  test("a missing /proc yields no series instead of throwing", () => {
    expect(processCollector({ procRoot: "/nonexistent-proc" })()).toEqual([]);
  });
});
