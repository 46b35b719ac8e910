// QoS and pod cgroups on a real cgroup v2 kernel. Runs wherever /sys/fs/cgroup is a cgroup2 mount and
// we are root — inside the v2 guest (in-guest.test.ts launches it there) or on a v2 host; skips on a
// v1 host. Everything lives under a unique cgroupRoot, removed afterwards even when a test fails.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { createQoSCgroupManager } from "../../../src/pod/setup.ts";
import { removeCgroupDir } from "../../../src/pod/cm/cgroup-manager.ts";
import { makePod } from "../../pod/fake-runtime.ts";
import { until } from "../../support/wait.ts";
import { guestGate, MOUNT } from "../../support/guest-node.ts";

const onV2 = guestGate("cgroup2", "real cgroup v2 QoS tests");

const cgroupRoot = `/bunlet-v2-test-${process.pid}`;
const MiB = 2 ** 20;
const read = (...p: string[]) => readFileSync(join(MOUNT, cgroupRoot, ...p), "utf8").trim();
const res = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: "c", image: "x", resources: { requests, limits } });

afterAll(async () => {
  if (onV2) await removeCgroupDir(join(MOUNT, cgroupRoot));
});

describe.skipIf(!onV2)("QoS and pod cgroups on cgroup v2 (real kernel)", () => {
  const manager = () => createPodCgroupManager({ cgroupRoot, podPidsLimit: 64, kubepods: { memoryLimitBytes: 512 * MiB, cpuShares: 1024, pidsLimit: 4096 } });
  const m = onV2 ? manager() : undefined!;

  test("setup: kubepods with memory, cpu and pids delegated, limited to node allocatable", async () => {
    await m.setup();
    for (const level of [["kubepods"], ["kubepods", "burstable"], ["kubepods", "besteffort"]]) {
      const have = read(...level, "cgroup.controllers").split(" ");
      for (const c of ["memory", "cpu", "pids"]) expect(have).toContain(c);
    }
    expect(read("kubepods", "memory.max")).toBe(String(512 * MiB));
    expect(read("kubepods", "cpu.weight")).toBe("39");
    expect(read("kubepods", "pids.max")).toBe("4096");
    expect(read("kubepods", "besteffort", "cpu.weight")).toBe("1");
  });

  test("ensurePod: each QoS class in its place, the kernel holding the limits", async () => {
    const g = makePod({ name: "g", uid: "g-1", containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })] });
    const b = makePod({ name: "b", uid: "b-1", containers: [res({ cpu: "250m", memory: "16Mi" }, { memory: "128Mi" })] });
    const be = makePod({ name: "be", uid: "be-1" });
    expect(await m.ensurePod(g)).toBe(`${cgroupRoot}/kubepods/podg-1`);
    expect(await m.ensurePod(b)).toBe(`${cgroupRoot}/kubepods/burstable/podb-1`);
    expect(await m.ensurePod(be)).toBe(`${cgroupRoot}/kubepods/besteffort/podbe-1`);
    expect(read("kubepods", "podg-1", "memory.max")).toBe(String(64 * MiB));
    expect(read("kubepods", "podg-1", "cpu.max")).toBe("50000 100000");
    expect(read("kubepods", "podg-1", "cpu.weight")).toBe("20");
    expect(read("kubepods", "podg-1", "pids.max")).toBe("64");
    expect(read("kubepods", "burstable", "podb-1", "memory.max")).toBe(String(128 * MiB));
    expect(read("kubepods", "burstable", "podb-1", "cpu.max")).toBe("max 100000");
    expect(read("kubepods", "burstable", "cpu.weight")).toBe("10"); // 256 shares of burstable requests
    expect(read("kubepods", "besteffort", "podbe-1", "memory.max")).toBe("max");
    expect((await m.listPodUids()).sort()).toEqual(["b-1", "be-1", "g-1"]);
  });

  test("the pod's memory.max bites: a process above it is OOM-killed and memory.events counts it", async () => {
    const pod = makePod({ name: "hog", uid: "hog-1", containers: [res({ memory: "32Mi" }, { memory: "32Mi" })] });
    const parent = await m.ensurePod(pod);
    const dir = join(MOUNT, parent!);
    // The pod cgroup is a leaf (the runtime would put containers below it): the hog joins it directly.
    const hog = Bun.spawn(["sh", "-c", `echo $$ > ${dir}/cgroup.procs && exec ${process.execPath} -e 'const a=[]; for(;;) a.push(Buffer.alloc(1<<20, 1))'`], {
      stdout: "ignore",
      stderr: "ignore",
    });
    const code = await hog.exited;
    expect(hog.signalCode ?? code).toBe("SIGKILL");
    const events = Object.fromEntries(
      read("kubepods", "burstable", "podhog-1", "memory.events")
        .split("\n")
        .map((l) => l.split(" ")),
    );
    expect(Number(events.oom_kill)).toBeGreaterThanOrEqual(1);
    expect(Number(events.max)).toBeGreaterThanOrEqual(1);
  });

  test("removePod kills what is left and removes the pod cgroup", async () => {
    const pod = makePod({ name: "r", uid: "r-1" });
    const dir = join(MOUNT, (await m.ensurePod(pod))!);
    const sleeper = Bun.spawn(["sh", "-c", `echo $$ > ${dir}/cgroup.procs && exec sleep 600`], { stdout: "ignore" });
    await until("the sleeper in the pod cgroup", () => readFileSync(join(dir, "cgroup.procs"), "utf8").includes(String(sleeper.pid)), 10_000, {
      intervalMs: 20,
    });
    await m.removePod("r-1");
    await sleeper.exited;
    expect(existsSync(dir)).toBe(false);
    expect(await m.listPodUids()).not.toContain("r-1");
  });

  test("the agent's setup picks the v2 manager on this host", () => {
    const picked = createQoSCgroupManager({ cgroupRoot, enforceNodeAllocatable: ["pods"], systemReserved: { memory: "100Mi" } }, MOUNT, {
      memoryBytes: 1024 * MiB,
      cpus: 1,
    });
    expect(picked?.dir("memory", ["kubepods"])).toBe(join(MOUNT, cgroupRoot, "kubepods"));
    expect(picked?.controllers()).toEqual(expect.arrayContaining(["memory", "cpu", "pids"]));
  });
});
