// cgroupDriver systemd on cgroup v1: the slices' unit properties (libcontainer genV1ResourcesProperties)
// and the v1 QoS/pod cgroup manager over a fake v1 mount (temp dirs per controller) with a stand-in for
// systemd. The real systemd-on-v1 check needs a v1 guest (docs/cgroup-v2.md#cgroup-v2-and-systemd-hosts).
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../src/pod/cm/container-manager.ts";
import { transientSlice, UINT64_MAX, v1ResourceProperties } from "../../src/pod/systemd-slices.ts";
import { BURSTABLE_POD_SLICES, fakeSystemd, useFakeMounts } from "./cm/fake-cgroups.ts";
import { makePod } from "./fake-runtime.ts";

describe("v1 slice properties (libcontainer genV1ResourcesProperties)", () => {
  const props = (cfg: Parameters<typeof v1ResourceProperties>[0], version = 252) =>
    Object.fromEntries(v1ResourceProperties(cfg, version).map((p) => [p.name, p.value]));
  test.each([
    [
      "guaranteed pod",
      { memoryLimitBytes: 64 * 2 ** 20, cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, pidsLimit: 1024 },
      252,
      { MemoryLimit: 67_108_864n, CPUShares: 512n, CPUQuotaPeriodUSec: 100_000n, CPUQuotaPerSecUSec: 500_000n, TasksMax: 1024n },
    ],
    ["besteffort QoS", { cpuShares: 2 }, 252, { CPUShares: 2n }],
    ["unlimited memory and pids", { memoryLimitBytes: -1, pidsLimit: -1 }, 252, { MemoryLimit: UINT64_MAX, TasksMax: UINT64_MAX }],
    ["old systemd: no CPUQuotaPeriodUSec", { cpuQuotaUs: 20_000, cpuPeriodUs: 100_000 }, 239, { CPUQuotaPerSecUSec: 200_000n }],
    ["nothing set", {}, 252, {}],
  ] as const)("%s", (_n, cfg, version, want) => expect(props(cfg, version)).toEqual(want));

  test("a v1 slice: BlockIOAccounting (not IOAccounting) and the v1 names", () => {
    const u = transientSlice(["kubepods"], { memoryLimitBytes: 2 ** 30, cpuShares: 2048 }, { systemdVersion: 252, cgroupVersion: 1 });
    const names = u.properties.map((p) => p.name);
    expect(names).toEqual([
      "Description",
      "Wants",
      "MemoryAccounting",
      "CPUAccounting",
      "BlockIOAccounting",
      "TasksAccounting",
      "DefaultDependencies",
      "MemoryLimit",
      "CPUShares",
    ]);
    expect(transientSlice(["kubepods"], {}, { systemdVersion: 252 }).properties.map((p) => p.name)).toContain("IOAccounting");
  });
});

describe("v1 QoS and pod cgroups with cgroupDriver systemd (fake mount, stand-in systemd)", () => {
  const mounts = useFakeMounts();

  test("each level a transient slice first, then the other controllers' directories and the v1 files", async () => {
    const controllers = ["memory", "cpu", "pids"];
    const root = mounts.v1(controllers);
    // Stands in for systemd on v1: a started slice appears in the memory hierarchy only (what it accounts here).
    const units = fakeSystemd(join(root, "memory"));
    const { started, stopped, set } = units;
    const m = createPodCgroupManager({
      mountRoot: root,
      driver: "systemd",
      systemd: units,
      controllers,
      kubepods: { memoryLimitBytes: 2 ** 30, cpuShares: 2048 },
    });
    const b = makePod({
      name: "b",
      uid: "ab-cd",
      containers: [{ name: "c", image: "x", resources: { requests: { cpu: "250m", memory: "32Mi" }, limits: { memory: "64Mi" } } }],
    });
    const parent = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podab_cd.slice";
    expect(await m.ensurePod(b)).toBe(parent);
    expect(units.startedSlices()).toEqual(BURSTABLE_POD_SLICES);
    expect(started[0]!.properties).toContainEqual({ name: "MemoryLimit", signature: "t", value: 2n ** 30n });
    expect(started[3]!.properties).toContainEqual({ name: "MemoryLimit", signature: "t", value: 64n * 2n ** 20n });
    expect(started[3]!.properties).toContainEqual({ name: "CPUShares", signature: "t", value: 256n });
    // libcontainer's v1 Set: the files too, in every controller (cpu and pids made by bunlet).
    const { read } = mounts;
    expect(read("memory", parent, "memory.limit_in_bytes")).toBe(String(64 * 2 ** 20));
    expect(read("cpu", parent, "cpu.shares")).toBe("256");
    expect(read("memory", "kubepods.slice", "memory.limit_in_bytes")).toBe(String(2 ** 30));
    expect(existsSync(join(root, "pids", parent))).toBe(true);
    // The QoS shares as runtime unit properties (kept across a daemon-reload), then the v1 file.
    expect(set.slice(-2)).toEqual(["kubepods-burstable.slice CPUShares=256", "kubepods-besteffort.slice CPUShares=2"]);
    expect(read("cpu", "kubepods.slice/kubepods-burstable.slice", "cpu.shares")).toBe("256");

    await m.ensurePod(b); // a resync starts nothing new
    expect(started).toHaveLength(4);
    expect(await m.listPodUids()).toEqual(["ab-cd"]);
    await m.removePod("ab-cd");
    expect(stopped).toEqual(["kubepods-burstable-podab_cd.slice"]);
    m.close();
    expect(units.closed).toBe(true);
  });
});
