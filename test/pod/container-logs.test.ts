import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { logRotationPolicy, planLogRotation, rotateContainerLog, rotationTimestamp } from "../../src/pod/container-logs.ts";

const now = Date.UTC(2026, 0, 2, 3, 4, 5);
const L = "/var/log/pods/p/c/0.log";

describe("log rotation plan", () => {
  test("policy from containerLogMaxSize/MaxFiles", () => {
    expect(logRotationPolicy("10Mi", 5)).toEqual({ maxSizeBytes: 10 * 2 ** 20, maxFiles: 5 });
    expect(() => logRotationPolicy("10Mi", 1)).toThrow("containerLogMaxFiles");
  });

  test.each([
    ["under the limit: nothing", 99, [], 5, []],
    ["first rotation", 100, [], 5, [`rotate ${L} ${L}.20260102-030405`]],
    [
      "compress every rotated log left, the new one stays plain",
      100,
      [`${L}.20260101-000000`, `${L}.20260101-010000`],
      5,
      [`compress ${L}.20260101-000000`, `compress ${L}.20260101-010000`, `rotate ${L} ${L}.20260102-030405`],
    ],
    [
      "maxFiles=3 keeps 1 rotated before rotating",
      100,
      [`${L}.20260101-000000.gz`, `${L}.20260101-010000.gz`, `${L}.20260101-020000`],
      3,
      [`remove ${L}.20260101-000000.gz`, `remove ${L}.20260101-010000.gz`, `compress ${L}.20260101-020000`, `rotate ${L} ${L}.20260102-030405`],
    ],
    [
      "leftover tmp and plain-with-gz removed",
      100,
      [`${L}.20260101-000000.gz.tmp`, `${L}.20260101-000000`, `${L}.20260101-000000.gz`],
      5,
      [`remove ${L}.20260101-000000.gz.tmp`, `remove ${L}.20260101-000000`, `rotate ${L} ${L}.20260102-030405`],
    ],
  ] as const)("%s", (_n, size, rotated, maxFiles, want) => {
    const got = planLogRotation(L, size, [...rotated], { maxSizeBytes: 100, maxFiles }, now).map((a) =>
      a.op === "rotate" ? `rotate ${a.from} ${a.to}` : `${a.op} ${a.path}`,
    );
    expect(got).toEqual([...want]);
  });

  test("timestamp layout", () => expect(rotationTimestamp(now)).toBe("20260102-030405"));
});

describe("rotateContainerLog", () => {
  const dir = mkdtempSync(join(tmpdir(), `bunlet-logs-${process.pid}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("rotates, compresses and reopens on disk", async () => {
    const log = join(dir, "0.log");
    writeFileSync(`${log}.20260101-000000`, "old\n");
    writeFileSync(`${log}.20260101-010000`, "newer\n");
    writeFileSync(log, "x".repeat(200));
    let reopened = 0;
    await rotateContainerLog(log, { maxSizeBytes: 100, maxFiles: 4 }, { nowMs: now, reopen: async () => void reopened++ });
    expect(reopened).toBe(1);
    expect(readdirSync(dir).sort()).toEqual(["0.log.20260101-000000.gz", "0.log.20260101-010000.gz", "0.log.20260102-030405"]);
    expect(gunzipSync(readFileSync(join(dir, "0.log.20260101-000000.gz"))).toString()).toBe("old\n");
    expect(existsSync(log)).toBe(false); // the runtime recreates it on reopen
  });

  test("a missing log is reopened first, then rotated if it is over the limit", async () => {
    const d = join(dir, "m");
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d);
    const log = join(d, "0.log");
    let reopened = 0;
    // The "runtime" recreates the log on reopen; the first reopen brings back an oversized one.
    const reopen = async () => void writeFileSync(log, reopened++ === 0 ? "x".repeat(200) : "");
    const actions = await rotateContainerLog(log, { maxSizeBytes: 100, maxFiles: 2 }, { nowMs: now, reopen });
    expect(actions.map((a) => a.op)).toEqual(["rotate"]);
    expect(reopened).toBe(2);
    expect(readdirSync(d).sort()).toEqual(["0.log", "0.log.20260102-030405"]);
  });

  test("a missing log that stays missing is left alone", async () => {
    const log = join(dir, "absent", "0.log");
    let reopened = 0;
    expect(await rotateContainerLog(log, { maxSizeBytes: 100, maxFiles: 2 }, { nowMs: now, reopen: async () => void reopened++ })).toEqual([]);
    expect(reopened).toBe(1);
  });

  test("a failed reopen renames the log back", async () => {
    const d = join(dir, "b");
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d);
    const log = join(d, "0.log");
    writeFileSync(log, "x".repeat(200));
    await expect(
      rotateContainerLog(
        log,
        { maxSizeBytes: 100, maxFiles: 2 },
        {
          nowMs: now,
          reopen: async () => {
            throw new Error("no such container");
          },
        },
      ),
    ).rejects.toThrow("failed to reopen");
    expect(readdirSync(d)).toEqual(["0.log"]);
  });
});

describe("container log manager", () => {
  test("rotates the logs that outgrew the policy, one failure does not stop the rest", async () => {
    const { createContainerLogManager } = await import("../../src/pod/container-logs.ts");
    const d = mkdtempSync(join(tmpdir(), `bunlet-logmgr-${process.pid}-`));
    try {
      writeFileSync(join(d, "a.log"), "x".repeat(500));
      writeFileSync(join(d, "b.log"), "x".repeat(10));
      writeFileSync(join(d, "c.log"), "x".repeat(500));
      const reopened: string[] = [];
      const m = createContainerLogManager({
        listContainerLogs: async () => ["a", "b", "c"].map((id) => ({ containerId: id, logPath: join(d, `${id}.log`) })),
        reopenContainerLog: async (id) => {
          if (id === "a") throw new Error("gone");
          reopened.push(id);
        },
        policy: { maxSizeBytes: 100, maxFiles: 3 },
        now: () => now,
      });
      expect(await m.rotateAll()).toBe(1);
      expect(reopened).toEqual(["c"]);
      expect(readdirSync(d).sort()).toEqual(["a.log", "b.log", "c.log.20260102-030405"]);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
