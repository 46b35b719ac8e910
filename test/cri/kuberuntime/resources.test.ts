import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectContainerCgroupHost, unifiedCgroupPath } from "../../../src/pod/kuberuntime/cgroup-host.ts";
import { containerOOMScoreAdjust, containerResources, milliCPUToQuota, milliCPUToShares } from "../../../src/pod/kuberuntime/resources.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";

const GiB = 1024 ** 3;

function pod(containers: KubeContainer[], extra: Partial<KubePod["spec"]> = {}, annotations?: Record<string, string>): KubePod {
  return { metadata: { name: "p", namespace: "default", uid: "u", annotations }, spec: { containers, ...extra } };
}

describe("cpu conversions (upstream milliCPUToShares / milliCPUToQuota)", () => {
  test.each([
    [0, 2],
    [1, 2],
    [100, 102],
    [250, 256],
    [1000, 1024],
    [2500, 2560],
  ])("shares(%p m) = %p", (m, want) => expect(milliCPUToShares(m)).toBe(want));

  test.each([
    [0, 0],
    [5, 1000], // below the minimum quota
    [200, 20_000],
    [1500, 150_000],
  ])("quota(%p m, 100ms) = %p µs", (m, want) => expect(milliCPUToQuota(m, 100_000)).toBe(want));
});

describe("oom_score_adj per QoS (upstream GetContainerOOMScoreAdjust)", () => {
  const guaranteed: KubeContainer = { name: "g", resources: { limits: { cpu: "1", memory: "1Gi" } } };
  const besteffort: KubeContainer = { name: "b" };
  const burstable = (mem: string): KubeContainer => ({ name: "u", resources: { requests: { memory: mem } } });

  test.each([
    ["Guaranteed", pod([guaranteed]), guaranteed, -997],
    ["BestEffort", pod([besteffort]), besteffort, 1000],
    ["Burstable 1Gi of 4Gi", pod([burstable("1Gi")]), burstable("1Gi"), 750],
    ["Burstable tiny request → 999, never BestEffort's 1000", pod([burstable("1")]), burstable("1"), 999],
    ["Burstable request ≥ capacity → 3, above Guaranteed", pod([burstable("8Gi")]), burstable("8Gi"), 3],
    ["node-critical static pod", pod([besteffort], { priorityClassName: "system-node-critical" }, { "kubernetes.io/config.source": "file" }), besteffort, -997],
  ])("%s", (_name, p, c, want) => expect(containerOOMScoreAdjust(p, c, 4 * GiB)).toBe(want));
});

describe("containerResources", () => {
  test("limits give quota/period and memory limit; requests give shares", () => {
    const c: KubeContainer = { name: "c", resources: { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } } };
    expect(containerResources(pod([c]), c, 4 * GiB)).toEqual({
      cpuShares: 102,
      cpuPeriod: 100_000,
      cpuQuota: 20_000,
      memoryLimitInBytes: 64 * 1024 * 1024,
      oomScoreAdj: 1000 - Math.floor((1000 * 32 * 1024 * 1024) / (4 * GiB)),
    });
  });

  test("a limit alone defaults the request (shares from the cpu limit)", () => {
    const c: KubeContainer = { name: "c", resources: { limits: { cpu: "500m", memory: "128Mi" } } };
    const r = containerResources(pod([c]), c, 4 * GiB);
    expect(r.cpuShares).toBe(512);
    expect(r.oomScoreAdj).toBe(-997);
  });

  test("no resources: minimum shares, no quota, no memory limit", () => {
    const c: KubeContainer = { name: "c" };
    expect(containerResources(pod([c]), c, 4 * GiB)).toEqual({ cpuShares: 2, memoryLimitInBytes: 0, oomScoreAdj: 1000 });
  });
});

describe("LinuxContainerResources.unified on cgroup v2 (upstream calculateLinuxResources, ConfigureNoSwap)", () => {
  const c: KubeContainer = { name: "c", resources: { limits: { memory: "64Mi" } } };
  test.each([
    ["cgroup v1: none", undefined, undefined],
    ["cgroup v1 with memsw: none (v1 swap is memorySwapLimitInBytes)", { unified: false, swapController: true }, undefined],
    [
      "v2 with swap controller, LimitedSwap, Guaranteed: no swap",
      { unified: true, swapController: true, swapBehavior: "LimitedSwap", swapCapacityBytes: GiB },
      { "memory.oom.group": "1", "memory.swap.max": "0" },
    ],
    ["v2 without swap controller: group OOM kill", { unified: true, swapController: false }, { "memory.oom.group": "1" }],
    ["v2 with swap controller: no swap too", { unified: true, swapController: true }, { "memory.oom.group": "1", "memory.swap.max": "0" }],
    ["v2, singleProcessOOMKill", { unified: true, swapController: true, singleProcessOOMKill: true }, { "memory.swap.max": "0" }],
    ["v2, singleProcessOOMKill, no swap controller", { unified: true, swapController: false, singleProcessOOMKill: true }, undefined],
  ] as const)("%s", (_name, host, want) => {
    expect(containerResources(pod([c]), c, 4 * GiB, host).unified).toEqual(want);
  });

  test("v1 with memsw: memorySwapLimitInBytes = memoryLimitInBytes (ConfigureNoSwap)", () => {
    const r = containerResources(pod([c]), c, 4 * GiB, { unified: false, swapController: true });
    expect(r.memorySwapLimitInBytes).toBe(64 * 1024 * 1024);
    expect(containerResources(pod([c]), c, 4 * GiB, { unified: false, swapController: false }).memorySwapLimitInBytes).toBeUndefined();
  });

  test("v2 LimitedSwap, Burstable: memory.swap.max is the request's share of the node's swap", () => {
    const b: KubeContainer = { name: "b", resources: { requests: { memory: "1Gi" }, limits: { memory: "2Gi" } } };
    const host = { unified: true, swapController: true, swapBehavior: "LimitedSwap", swapCapacityBytes: 2 * GiB };
    const r = containerResources(pod([b]), b, 4 * GiB, host);
    expect(r.unified).toEqual({ "memory.oom.group": "1", "memory.swap.max": String(GiB / 2) });
    expect(r.memorySwapLimitInBytes).toBeUndefined();
  });
});

describe("detectContainerCgroupHost", () => {
  test.each([
    ["0::/system.slice/bunlet.service\n", "/system.slice/bunlet.service"],
    ["4:memory:/x\n1:cpu:/\n0::/\n", "/"],
    ["4:memory:/x\n", undefined],
  ])("own v2 cgroup of %p", (text, want) => expect(unifiedCgroupPath(text)).toBe(want));

  test("v2: swap controller from memory.swap.max in the own cgroup; v1: memsw", () => {
    const root = mkdtempSync("/tmp/bunlet-cgroup-host-");
    try {
      writeFileSync(join(root, "self"), "0::/kubelet.slice\n");
      writeFileSync(join(root, "meminfo"), "MemTotal:        4000000 kB\nSwapTotal:       1048576 kB\n");
      writeFileSync(join(root, "cgroup.controllers"), "memory\n");
      mkdirSync(join(root, "kubelet.slice"));
      const detect = () =>
        detectContainerCgroupHost({ mountRoot: root, procSelfCgroup: join(root, "self"), procMeminfo: join(root, "meminfo"), swapBehavior: "LimitedSwap" });
      const facts = { singleProcessOOMKill: undefined, swapBehavior: "LimitedSwap", swapCapacityBytes: GiB };
      expect(detect()).toEqual({ unified: true, swapController: false, ...facts });
      writeFileSync(join(root, "kubelet.slice", "memory.swap.max"), "max\n");
      expect(detect().swapController).toBe(true);
      rmSync(join(root, "cgroup.controllers"));
      expect(detect()).toEqual({ unified: false, swapController: false, ...facts });
      rmSync(join(root, "meminfo"));
      expect(detect().swapCapacityBytes).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
