import { describe, expect, test } from "bun:test";
import {
  burstableCpuShares,
  cgroupDirPath,
  kubepodsConfigFromKubelet,
  kubepodsResourceConfig,
  milliCPUToQuota,
  milliCPUToShares,
  nodeAllocatableAbsolute,
  podCgroupParent,
  podResourceConfig,
} from "../../src/pod/cgroups-config.ts";
import { makePod } from "./fake-runtime.ts";

const res = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: "c", image: "x", resources: { requests, limits } });
const guaranteed = makePod({ name: "g", uid: "g1", containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })] });
const burstableAll = makePod({ name: "b", uid: "b1", containers: [res({ cpu: "100m", memory: "32Mi" }, { cpu: "1", memory: "128Mi" })] });
const burstablePartial = makePod({ name: "b2", uid: "b2", containers: [res({ cpu: "250m" }, { memory: "128Mi" }), { name: "d", image: "x" }] });
const bestEffort = makePod({ name: "be", uid: "be1" });

describe("cgroup computations", () => {
  test.each([
    [0, 2],
    [1, 2],
    [100, 102],
    [1000, 1024],
    [500_000, 262_144],
  ])("milliCPUToShares(%d) = %d", (m, s) => expect(milliCPUToShares(m)).toBe(s));

  test.each([
    [0, 0],
    [5, 1000],
    [500, 50_000],
    [2000, 200_000],
  ])("milliCPUToQuota(%d) = %d", (m, q) => expect(milliCPUToQuota(m)).toBe(q));

  test.each([
    ["Guaranteed", guaranteed, { cpuShares: 512, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, memoryLimitBytes: 64 * 2 ** 20, pidsLimit: 1024 }],
    [
      "Burstable with all limits",
      burstableAll,
      { cpuShares: 102, cpuQuotaUs: 100_000, cpuPeriodUs: 100_000, memoryLimitBytes: 128 * 2 ** 20, pidsLimit: 1024 },
    ],
    ["Burstable, a container without limits", burstablePartial, { cpuShares: 256, pidsLimit: 1024 }],
    ["BestEffort", bestEffort, { cpuShares: 2, pidsLimit: 1024 }],
  ] as const)("podResourceConfig %s", (_n, pod, want) => {
    expect(podResourceConfig(pod, { podPidsLimit: 1024 })).toEqual(want);
  });

  // upstream ResourceConfigForPod reads PodRequests/PodLimits, which add spec.overhead (a RuntimeClass's).
  test.each([
    [
      "Guaranteed: to the request and the limits",
      makePod({
        name: "o",
        uid: "o",
        containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })],
        spec: { overhead: { cpu: "250m", memory: "16Mi" } },
      }),
      { cpuShares: 768, cpuQuotaUs: 75_000, cpuPeriodUs: 100_000, memoryLimitBytes: 80 * 2 ** 20 },
    ],
    [
      "Burstable without limits: to the request only",
      makePod({ name: "o", uid: "o", containers: [res({ cpu: "100m" })], spec: { overhead: { cpu: "100m", memory: "16Mi" } } }),
      { cpuShares: 204 },
    ],
    ["BestEffort: nothing", makePod({ name: "o", uid: "o", spec: { overhead: { cpu: "100m", memory: "16Mi" } } }), { cpuShares: 2 }],
  ] as const)("overhead, %s", (_n, pod, want) => {
    expect(podResourceConfig(pod)).toEqual(want);
  });

  test("init containers count as the max with the regular sum", () => {
    const p = makePod({
      name: "i",
      uid: "i",
      initContainers: [{ ...res({}, { cpu: "2", memory: "1Gi" }), name: "init" }],
      containers: [res({}, { cpu: "1", memory: "256Mi" })],
    });
    expect(podResourceConfig(p)).toMatchObject({ cpuQuotaUs: 200_000, memoryLimitBytes: 2 ** 30 });
  });

  test.each([
    [guaranteed, "/", "/kubepods/podg1"],
    [burstableAll, "/", "/kubepods/burstable/podb1"],
    [bestEffort, "/custom/", "/custom/kubepods/besteffort/podbe1"],
  ])("cgroup parent of %#", (pod, root, want) => expect(podCgroupParent(pod, { cgroupRoot: root })).toBe(want));

  test("systemd driver slice names and directories", () => {
    const p = makePod({ name: "s", uid: "ab-cd" });
    expect(podCgroupParent(p, { driver: "systemd" })).toBe("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab_cd.slice");
    expect(cgroupDirPath("systemd", "/", ["kubepods", "besteffort", "podab-cd"])).toBe(
      "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab_cd.slice",
    );
    expect(cgroupDirPath("cgroupfs", "/", ["kubepods", "podx"])).toBe("/kubepods/podx");
  });

  test("node allocatable for kubepods: capacity − system − kube reserved, floored at 0", () => {
    const a = nodeAllocatableAbsolute({ memory: "24Gi", cpu: "2", pid: "4194304" }, { memory: "1Gi", cpu: "500m" }, { memory: "512Mi", cpu: "2" });
    expect(kubepodsResourceConfig(a)).toEqual({ memoryLimitBytes: 24 * 2 ** 30 - 1.5 * 2 ** 30, cpuShares: 2, pidsLimit: 4194304 });
  });

  test("burstable QoS shares sum burstable requests only", () => {
    expect(burstableCpuShares([guaranteed, burstableAll, burstablePartial, bestEffort])).toBe(milliCPUToShares(350));
  });
});

describe("kubepodsConfigFromKubelet", () => {
  test.each([
    [["pods"], 8 * 2 ** 30 - 2 ** 30],
    [[], 8 * 2 ** 30],
    [undefined, 8 * 2 ** 30 - 2 ** 30],
  ])("enforceNodeAllocatable=%p → memory %d", (enforce, mem) => {
    const r = kubepodsConfigFromKubelet(
      { enforceNodeAllocatable: enforce, systemReserved: { memory: "512Mi" }, kubeReserved: { memory: "512Mi" } },
      { memoryBytes: 8 * 2 ** 30, cpus: 2 },
    );
    expect(r.memoryLimitBytes).toBe(mem);
    expect(r.cpuShares).toBe(2048);
  });
});
