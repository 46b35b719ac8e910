// Pod cgroups on cgroup v1: real directories under a unique root in every controller, removed
// afterwards (the computations are table-tested in test/pod/cgroups.test.ts). Root only.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { detectV1Controllers } from "../../../src/pod/cm/cgroup-v1-manager.ts";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { removeCgroupTree } from "../../support/cgroup.ts";
import { makePod } from "../../pod/fake-runtime.ts";

const res = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: "c", image: "x", resources: { requests, limits } });
const guaranteed = makePod({ name: "g", uid: "g1", containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })] });
const burstableAll = makePod({ name: "b", uid: "b1", containers: [res({ cpu: "100m", memory: "32Mi" }, { cpu: "1", memory: "128Mi" })] });
const bestEffort = makePod({ name: "be", uid: "be1" });

const testRoot = `/bunlet-test-${process.pid}`;
const mountRoot = "/sys/fs/cgroup";
const canRun = process.getuid?.() === 0 && existsSync(join(mountRoot, "memory", "cgroup.procs"));

describe.skipIf(!canRun)("pod cgroups on cgroup v1", () => {
  const controllers = canRun ? detectV1Controllers(mountRoot) : [];
  afterAll(() => {
    removeCgroupTree(testRoot); // best effort; what stays is reported by the next assertion run
  });

  test("creates QoS and pod cgroups with limits in every controller and removes them", async () => {
    expect(controllers).toContain("memory");
    const m = createPodCgroupManager({
      mountRoot,
      cgroupRoot: testRoot,
      controllers,
      podPidsLimit: 321,
      kubepods: { memoryLimitBytes: 8 * 2 ** 30, cpuShares: 2048 },
    });
    const parentG = await m.ensurePod(guaranteed);
    const parentB = await m.ensurePod(burstableAll);
    const parentE = await m.ensurePod(bestEffort);
    expect([parentG, parentB, parentE]).toEqual([
      `${testRoot}/kubepods/podg1`,
      `${testRoot}/kubepods/burstable/podb1`,
      `${testRoot}/kubepods/besteffort/podbe1`,
    ]);
    for (const c of controllers) expect(existsSync(m.dir(c, ["kubepods", "burstable", "podb1"]))).toBe(true);
    const read = (c: string, name: string[], f: string) => readFileSync(join(m.dir(c, name), f), "utf8").trim();
    expect(read("memory", ["kubepods"], "memory.limit_in_bytes")).toBe(String(8 * 2 ** 30));
    expect(read("memory", ["kubepods", "podg1"], "memory.limit_in_bytes")).toBe(String(64 * 2 ** 20));
    expect(read("memory", ["kubepods", "burstable", "podb1"], "memory.limit_in_bytes")).toBe(String(128 * 2 ** 20));
    if (controllers.includes("cpu")) {
      expect(read("cpu", ["kubepods", "podg1"], "cpu.shares")).toBe("512");
      expect(read("cpu", ["kubepods", "podg1"], "cpu.cfs_quota_us")).toBe("50000");
      expect(read("cpu", ["kubepods", "burstable"], "cpu.shares")).toBe("102");
      expect(read("cpu", ["kubepods", "besteffort"], "cpu.shares")).toBe("2");
    }
    if (controllers.includes("pids")) expect(read("pids", ["kubepods", "besteffort", "podbe1"], "pids.max")).toBe("321");
    expect((await m.listPodUids()).sort()).toEqual(["b1", "be1", "g1"]);

    // Subscribers (the notifier-thread plan, wire/fast-eviction.ts) are told once the cgroup is gone from every controller.
    const told: [string, boolean][] = [];
    const unsubscribe = m.onPodRemoved((uid) => told.push([uid, controllers.some((c) => existsSync(m.dir(c, ["kubepods", "burstable", "podb1"])))]));
    await m.removePod("b1");
    for (const c of controllers) expect(existsSync(m.dir(c, ["kubepods", "burstable", "podb1"]))).toBe(false);
    expect(told).toEqual([["b1", false]]);
    unsubscribe();
    await m.removePod("g1");
    await m.removePod("be1");
    expect(await m.listPodUids()).toEqual([]);
    expect(told).toHaveLength(1);
  });

  test("a process left in a pod cgroup is killed on removal", async () => {
    const m = createPodCgroupManager({ mountRoot, cgroupRoot: testRoot, controllers: ["memory"] });
    await m.ensurePod(bestEffort);
    const child = Bun.spawn(["sleep", "300"]);
    try {
      await Bun.write(join(m.dir("memory", ["kubepods", "besteffort", "podbe1"]), "cgroup.procs"), String(child.pid));
      await m.removePod("be1");
      expect(await child.exited).not.toBe(0);
      expect(existsSync(m.dir("memory", ["kubepods", "besteffort", "podbe1"]))).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
