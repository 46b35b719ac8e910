import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { maxPid, parseLoadavgTasks, rlimitStats } from "../../src/stats/process.ts";

describe("pidlimit", () => {
  test.each([
    ["0.00 0.01 0.05 2/345 6789\n", 345],
    ["1.36 3.49 4.53 2/3518 3715089", 3518],
    ["1.36 3.49 4.53 3518 3715089", undefined],
    ["1.36 3.49", undefined],
  ])("parseLoadavgTasks(%j) = %p", (text, want) => {
    expect(parseLoadavgTasks(text)).toBe(want);
  });

  test.each([
    [[32768, 192000], 32768],
    [[4194304, 95000], 95000],
    [[undefined, 95000], 95000],
    [[undefined, undefined], undefined],
  ])("maxPid(%j) = %p (min of pid_max and threads-max)", (limits, want) => {
    expect(maxPid(limits)).toBe(want);
  });

  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  test("rlimitStats reads the files; unreadable ones leave fields out", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-proc-${process.pid}-`));
    writeFileSync(join(dir, "pid_max"), "4194304\n");
    writeFileSync(join(dir, "threads-max"), "191000\n");
    writeFileSync(join(dir, "loadavg"), "0.1 0.2 0.3 4/812 999\n");
    const paths = { pidMax: join(dir, "pid_max"), threadsMax: join(dir, "threads-max"), loadavg: join(dir, "loadavg") };
    expect(rlimitStats("T", paths)).toEqual({ time: "T", maxpid: 191000, curproc: 812 });
    expect(rlimitStats("T", { ...paths, loadavg: join(dir, "missing") })).toEqual({ time: "T", maxpid: 191000 });
  });

  test("on this host curproc counts threads (≥ the number of /proc pids)", () => {
    const r = rlimitStats("T");
    expect(r.maxpid).toBeGreaterThan(0);
    expect(r.curproc).toBeGreaterThan(1);
  });
});
