import { describe, expect, test } from "bun:test";
import { calcSwapForBurstablePods, containerSwap, containerSwapBehavior, type SwapHost } from "../../../src/pod/kuberuntime/swap.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const limited: SwapHost = { unified: true, swapController: true, swapBehavior: "LimitedSwap", swapCapacityBytes: 2 * GiB };
const burstable: KubeContainer = { name: "b", resources: { requests: { memory: "1Gi" }, limits: { memory: "2Gi" } } };
const requestOnly: KubeContainer = { name: "r", resources: { requests: { memory: "512Mi" } } };
const cpuOnly: KubeContainer = { name: "c", resources: { requests: { cpu: "100m" } } };
const equal: KubeContainer = { name: "e", resources: { requests: { memory: "1Gi" }, limits: { memory: "1Gi" } } };
const guaranteed: KubeContainer = { name: "g", resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } } };
const besteffort: KubeContainer = { name: "x" };

function pod(containers: KubeContainer[], extra: Partial<KubePod["spec"]> = {}, annotations?: Record<string, string>): KubePod {
  return { metadata: { name: "p", namespace: "default", uid: "u", annotations }, spec: { containers, ...extra } };
}

describe("containerSwapBehavior (upstream GetContainerSwapBehavior)", () => {
  test.each([
    ["LimitedSwap, Burstable, request ≠ limit", limited, pod([burstable]), burstable, "LimitedSwap"],
    ["LimitedSwap, Burstable, a request and no limit", limited, pod([requestOnly]), requestOnly, "LimitedSwap"],
    ["behaviour unset", { ...limited, swapBehavior: undefined }, pod([burstable]), burstable, "NoSwap"],
    ['behaviour ""', { ...limited, swapBehavior: "" }, pod([burstable]), burstable, "NoSwap"],
    ["behaviour NoSwap", { ...limited, swapBehavior: "NoSwap" }, pod([burstable]), burstable, "NoSwap"],
    ["no swap controller", { ...limited, swapController: false }, pod([burstable]), burstable, "NoSwap"],
    ["cgroup v1", { ...limited, unified: false }, pod([burstable]), burstable, "NoSwap"],
    ["critical by priority", limited, pod([burstable], { priority: 2_000_000_000 }), burstable, "NoSwap"],
    ["static pod", limited, pod([burstable], {}, { "kubernetes.io/config.source": "file" }), burstable, "NoSwap"],
    ["mirror pod", limited, pod([burstable], {}, { "kubernetes.io/config.mirror": "x" }), burstable, "NoSwap"],
    ["Guaranteed pod", limited, pod([guaranteed]), guaranteed, "NoSwap"],
    ["BestEffort pod", limited, pod([besteffort]), besteffort, "NoSwap"],
    ["Burstable pod, container without memory", limited, pod([cpuOnly]), cpuOnly, "NoSwap"],
    ["Burstable pod, container request = limit", limited, pod([equal, cpuOnly]), equal, "NoSwap"],
    ["Burstable pod, its other container", limited, pod([equal, burstable]), burstable, "LimitedSwap"],
  ] as const)("%s", (_name, host, p, c, want) => expect(containerSwapBehavior(host, p, c)).toBe(want));
});

describe("calcSwapForBurstablePods", () => {
  test.each([
    [GiB, 4 * GiB, 2 * GiB, GiB / 2],
    [4 * GiB, 4 * GiB, 2 * GiB, 2 * GiB],
    [0, 4 * GiB, 2 * GiB, 0],
    [GiB, 4 * GiB, 0, 0],
    [100 * MiB, 3 * GiB, GiB, Math.floor(((100 * MiB) / (3 * GiB)) * GiB)], // truncated, as int64(float)
  ])("request %p of %p memory, %p swap → %p", (req, mem, swap, want) => expect(calcSwapForBurstablePods(req, mem, swap)).toBe(want));

  test("errors as upstream's", () => {
    expect(() => calcSwapForBurstablePods(GiB, 0, GiB)).toThrow("total node memory is 0");
    expect(() => calcSwapForBurstablePods(2 * GiB, GiB, GiB)).toThrow(`container request ${2 * GiB} is larger than total node memory ${GiB}`);
  });
});

describe("containerSwap (upstream configureContainerSwapResources)", () => {
  const machine = { memoryCapacityBytes: 4 * GiB, memoryLimitInBytes: 2 * GiB };
  test.each([
    ["no host facts: nothing", undefined, burstable, undefined],
    ["no swap controller: nothing", { ...limited, swapController: false }, burstable, undefined],
    ["v2 LimitedSwap: the proportional share", limited, burstable, { behavior: "LimitedSwap", swapMaxBytes: GiB / 2 }],
    ["v2 LimitedSwap, no node swap: 0", { ...limited, swapCapacityBytes: undefined }, burstable, { behavior: "LimitedSwap", swapMaxBytes: 0 }],
    ["v2 NoSwap: memory.swap.max 0", { ...limited, swapBehavior: "NoSwap" }, burstable, { behavior: "NoSwap", swapMaxBytes: 0 }],
    ["v2 LimitedSwap, Guaranteed container: 0", limited, guaranteed, { behavior: "NoSwap", swapMaxBytes: 0 }],
    ["v1 memsw: memory+swap = memory limit", { ...limited, unified: false }, burstable, { behavior: "NoSwap", memorySwapLimitInBytes: 2 * GiB }],
  ] as const)("%s", (_name, host, c, want) => expect(containerSwap(host, pod([c]), c, machine)).toEqual(want));

  test("a request over the node's memory: no swap, with upstream's error", () => {
    const big: KubeContainer = { name: "big", resources: { requests: { memory: "8Gi" }, limits: { memory: "16Gi" } } };
    expect(containerSwap(limited, pod([big]), big, { memoryCapacityBytes: 4 * GiB, memoryLimitInBytes: 16 * GiB })).toEqual({
      behavior: "NoSwap",
      swapMaxBytes: 0,
      error: `container request ${8 * GiB} is larger than total node memory ${4 * GiB}`,
    });
  });

  test("unknown node memory: no swap", () => {
    expect(containerSwap(limited, pod([burstable]), burstable, { memoryCapacityBytes: 0, memoryLimitInBytes: 0 })).toEqual({
      behavior: "NoSwap",
      swapMaxBytes: 0,
      error: "total node memory is 0",
    });
  });
});
