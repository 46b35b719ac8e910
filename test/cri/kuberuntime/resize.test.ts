import { describe, expect, test } from "bun:test";
import type { ResourceConfig } from "../../../src/pod/cgroups-config.ts";
import type { KubeRuntimeContext } from "../../../src/pod/kuberuntime/context.ts";
import { computeContainerResize, emptyResizeActions } from "../../../src/pod/kuberuntime/resize-actions.ts";
import { doPodResizeAction } from "../../../src/pod/kuberuntime/resize.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { PodCgroupResizer } from "../../../src/pod/runtime.ts";

const MIB = 2 ** 20;
const res = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const podOf = (cpu: string, memory: string): KubePod => ({
  metadata: { name: "p", namespace: "ns", uid: "u" },
  spec: { containers: [{ name: "app", image: "busybox", resources: res(cpu, memory) }] },
});

/** A CRI, pod cgroup and actuated state that write down what they are asked, in order. */
function fakes(podCfg: ResourceConfig, usage = { pod: 10 * MIB, container: 10 * MIB }) {
  const steps: string[] = [];
  const actuated = new Map<string, unknown>();
  const ctx = {
    cri: {
      updateContainerResources: async (id: string, linux: { memoryLimitInBytes?: number; cpuQuota?: number }) =>
        void steps.push(`container ${id} memory=${linux.memoryLimitInBytes} quota=${linux.cpuQuota}`),
      containerStats: async () => ({ memory: { usageBytes: { value: usage.container } } }),
    },
    memoryCapacityBytes: 8192 * MIB,
    cgroupHost: { unified: false, swapController: false },
    opts: { actuated: { set: (_uid: string, name: string, r: unknown) => void actuated.set(name, r) } },
  } as unknown as KubeRuntimeContext;
  const podCgroup: PodCgroupResizer = {
    config: () => podCfg,
    set: async (_pod, cfg) => void steps.push(`pod ${JSON.stringify(cfg)}`),
    memoryUsageBytes: async () => usage.pod,
  };
  return { ctx, podCgroup, steps, actuated };
}

const actionsFor = (pod: KubePod, actuated: ReturnType<typeof res>) => {
  const a = emptyResizeActions();
  computeContainerResize(pod.spec.containers[0]!, "c1", actuated, a);
  return a;
};

describe("doPodResizeAction (upstream order)", () => {
  test("growing: the pod cgroup before the container, memory then cpu (limit before request)", async () => {
    const f = fakes({ memoryLimitBytes: 64 * MIB, cpuQuotaUs: 20_000, cpuPeriodUs: 100_000, cpuShares: 204 });
    const pod = podOf("300m", "96Mi");
    expect(await doPodResizeAction(f.ctx, pod, actionsFor(pod, res("200m", "64Mi")), f.podCgroup)).toBeUndefined();
    expect(f.steps).toEqual([
      `pod {"memoryLimitBytes":${96 * MIB}}`,
      `container c1 memory=${96 * MIB} quota=20000`,
      `pod {"cpuQuotaUs":30000,"cpuPeriodUs":100000}`,
      `pod {"cpuShares":307}`,
      `container c1 memory=${96 * MIB} quota=30000`,
    ]);
    expect(f.actuated.get("app")).toEqual(res("300m", "96Mi"));
  });
  test("shrinking: the container before the pod cgroup (request before limit)", async () => {
    const f = fakes({ memoryLimitBytes: 96 * MIB, cpuQuotaUs: 30_000, cpuPeriodUs: 100_000, cpuShares: 307 });
    const pod = podOf("200m", "64Mi");
    expect(await doPodResizeAction(f.ctx, pod, actionsFor(pod, res("300m", "96Mi")), f.podCgroup)).toBeUndefined();
    expect(f.steps).toEqual([
      `container c1 memory=${64 * MIB} quota=30000`,
      `pod {"memoryLimitBytes":${64 * MIB}}`,
      `container c1 memory=${64 * MIB} quota=20000`,
      `pod {"cpuShares":204}`,
      `pod {"cpuQuotaUs":20000,"cpuPeriodUs":100000}`,
    ]);
  });
  test("a memory limit below current usage is refused before anything is written", async () => {
    const f = fakes({ memoryLimitBytes: 96 * MIB, cpuQuotaUs: 30_000, cpuPeriodUs: 100_000, cpuShares: 307 }, { pod: 80 * MIB, container: 70 * MIB });
    const pod = podOf("300m", "64Mi");
    const err = await doPodResizeAction(f.ctx, pod, actionsFor(pod, res("300m", "96Mi")), f.podCgroup);
    expect(err).toBe(
      `cannot decrease memory limits: [attempting to set pod memory limit (${64 * MIB}) below current usage (${80 * MIB}), attempting to set container "app" memory limit (${64 * MIB}) below current usage (${70 * MIB})]`,
    );
    expect(f.steps).toEqual([]);
  });
});
