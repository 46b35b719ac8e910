// The cgroup v2 QoS/pod cgroup manager over a fake unified mount (a temp dir with cgroup.controllers):
// which directories and files it writes. The real kernel's answer (controllers delegated, limits
// accepted, pods removed) is checked inside the v2 guest: test/integration/v2/qos-cgroups.test.ts.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { podUidFromDir } from "../../../src/pod/cgroups-config.ts";
import { isUnifiedMount } from "../../../src/pod/cm/cgroup-v2-manager.ts";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { createQoSCgroupManager } from "../../../src/pod/setup.ts";
import { makePod } from "../fake-runtime.ts";
import { BURSTABLE_POD_SLICES, fakeSystemd, res, useFakeMounts } from "./fake-cgroups.ts";

const mounts = useFakeMounts();
const { read } = mounts;

describe("cgroup v2 QoS and pod cgroups (fake mount)", () => {
  test("setup: kubepods, burstable, besteffort with controllers enabled above each new level", async () => {
    const root = mounts.v2();
    const m = createPodCgroupManager({
      mountRoot: root,
      cgroupRoot: "/node",
      kubepods: { memoryLimitBytes: 3 * 2 ** 30, cpuShares: 2048, pidsLimit: 1000 },
    });
    await m.setup();
    expect(read("cgroup.subtree_control")).toBe("+cpuset +cpu +io +memory +pids");
    expect(read("node", "cgroup.subtree_control")).toBe("+cpuset +cpu +io +memory +pids");
    expect(read("node", "kubepods", "cgroup.subtree_control")).toBe("+cpuset +cpu +io +memory +pids");
    expect(read("node", "kubepods", "memory.max")).toBe(String(3 * 2 ** 30));
    expect(read("node", "kubepods", "cpu.weight")).toBe("79");
    expect(read("node", "kubepods", "pids.max")).toBe("1000");
    expect(read("node", "kubepods", "besteffort", "cpu.weight")).toBe("1");
    expect(read("node", "kubepods", "burstable", "cpu.weight")).toBe("1");
    // QoS levels are parents of pod cgroups only once a pod exists; besteffort itself is a leaf for now.
    expect(existsSync(join(root, "node", "kubepods", "besteffort", "cgroup.subtree_control"))).toBe(false);
  });

  test("ensurePod: pod cgroup under its QoS class with memory.max, cpu.weight, cpu.max, pids.max", async () => {
    const root = mounts.v2();
    const m = createPodCgroupManager({ mountRoot: root, podPidsLimit: 256 });
    const g = makePod({ name: "g", uid: "g1", containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })] });
    const b = makePod({ name: "b", uid: "b1", containers: [res({ cpu: "250m" }, { cpu: "1" })] });
    expect(await m.ensurePod(g)).toBe("/kubepods/podg1");
    expect(await m.ensurePod(b)).toBe("/kubepods/burstable/podb1");
    expect(read("kubepods", "podg1", "memory.max")).toBe(String(64 * 2 ** 20));
    expect(read("kubepods", "podg1", "cpu.weight")).toBe("20");
    expect(read("kubepods", "podg1", "cpu.max")).toBe("50000 100000");
    expect(read("kubepods", "podg1", "pids.max")).toBe("256");
    expect(existsSync(join(root, "kubepods", "burstable", "podb1", "memory.max"))).toBe(false);
    expect(read("kubepods", "burstable", "podb1", "cpu.max")).toBe("100000 100000");
    // the burstable QoS weight follows the burstable pods' summed requests (256 shares → 10)
    expect(read("kubepods", "burstable", "cpu.weight")).toBe("10");
    expect(read("kubepods", "burstable", "cgroup.subtree_control")).toBe("+cpuset +cpu +io +memory +pids");
    expect((await m.listPodUids()).sort()).toEqual(["b1", "g1"]);
  });

  test("host detection: a cgroup2 mount picks the v2 manager, without memory none", () => {
    const cfg = { cgroupRoot: "/", enforceNodeAllocatable: ["pods"], systemReserved: { memory: "1Gi" } };
    const mount = mounts.v2("cpu pids");
    expect(isUnifiedMount(mount)).toBe(true);
    expect(createQoSCgroupManager(cfg, mount, { memoryBytes: 4 * 2 ** 30, cpus: 2 })).toBeUndefined();
    writeFileSync(join(mount, "cgroup.controllers"), "cpu memory pids\n");
    const m = createQoSCgroupManager(cfg, mount, { memoryBytes: 4 * 2 ** 30, cpus: 2 });
    expect(m?.controllers()).toEqual(["cpu", "memory", "pids"]);
    expect(m?.dir("memory", ["kubepods"])).toBe(join(mount, "kubepods"));
  });

  test("cgroupDriver systemd: each level a transient slice through systemd, the pod's stopped on removal", async () => {
    const mount = mounts.v2();
    // A started slice's cgroup directory appears under its parents' (as systemd makes it).
    const units = fakeSystemd(mount);
    const { started, stopped, set } = units;
    const m = createPodCgroupManager({ mountRoot: mount, driver: "systemd", systemd: units, kubepods: { memoryLimitBytes: 2 ** 30 } });
    const b = makePod({ name: "b", uid: "ab-cd", containers: [res({ cpu: "250m", memory: "32Mi" }, { memory: "64Mi" })] });
    expect(await m.ensurePod(b)).toBe("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab_cd.slice");
    expect(units.startedSlices()).toEqual(BURSTABLE_POD_SLICES);
    expect(started[0]!.properties).toContainEqual({ name: "MemoryMax", signature: "t", value: 2n ** 30n });
    expect(started[3]!.properties).toContainEqual({ name: "MemoryMax", signature: "t", value: 64n * 2n ** 20n });
    await m.ensurePod(b); // a resync does not start the unit again
    expect(started).toHaveLength(4);
    expect(await m.listPodUids()).toEqual(["ab-cd"]);
    // Subscribers (the notifier-thread plan, wire/fast-eviction.ts) are told once systemd stopped the slice.
    const told: string[][] = [];
    m.onPodRemoved((uid) => told.push([uid, ...stopped]));
    await m.removePod("ab-cd");
    expect(stopped).toEqual(["kubepods-burstable-podab_cd.slice"]);
    expect(told).toEqual([["ab-cd", "kubepods-burstable-podab_cd.slice"]]);
    // The QoS weights go to systemd as runtime unit properties (kept across a daemon-reload), and to the files:
    // burstable from the pods' requests (none, then 250m = 256 shares, then none again), besteffort the minimum.
    expect(set).toEqual([
      "kubepods-burstable.slice CPUWeight=1",
      "kubepods-besteffort.slice CPUWeight=1",
      "kubepods-burstable.slice CPUWeight=10",
      "kubepods-besteffort.slice CPUWeight=1",
      "kubepods-burstable.slice CPUWeight=1",
      "kubepods-besteffort.slice CPUWeight=1",
    ]);
    expect(readFileSync(join(mount, "kubepods.slice/kubepods-burstable.slice/cpu.weight"), "utf8")).toBe("1");
  });

  test("cgroupDriver systemd: a QoS weight systemd refuses is logged, and the file is still written", async () => {
    const mount = mounts.v2();
    const units = fakeSystemd(mount, { refuseProperties: true });
    const m = createPodCgroupManager({ mountRoot: mount, driver: "systemd", systemd: units });
    await m.ensurePod(makePod({ name: "b", uid: "ab-cd", containers: [res({ cpu: "250m" })] }));
    expect(readFileSync(join(mount, "kubepods.slice/kubepods-burstable.slice/cpu.weight"), "utf8")).toBe("10");
  });

  test.each([
    ["podab-cd", "ab-cd"],
    ["kubepods-burstable-podab_cd.slice", "ab-cd"],
    ["kubepods-pod12_34.slice", "12-34"],
    ["kubepods-burstable.slice", undefined],
  ])("pod UID of cgroup directory %s", (dir, uid) => {
    expect(podUidFromDir(dir)).toBe(uid);
  });
});
