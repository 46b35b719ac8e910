import { describe, expect, test } from "bun:test";
import { computePodActions } from "../../../src/pod/kuberuntime/compute-actions.ts";
import { hashContainer } from "../../../src/pod/kuberuntime/hash.ts";
import {
  type ContainerToUpdate,
  computeContainerResize,
  computePodResizeActions,
  emptyResizeActions,
  hasResize,
  resizeResourcesOf,
} from "../../../src/pod/kuberuntime/resize-actions.ts";
import { decreasingMemoryLimits, requirementsOf, stepResources } from "../../../src/pod/kuberuntime/resize.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { RuntimePodStatus } from "../../../src/pod/runtime.ts";

const res = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const app = (resources = res("500m", "128Mi"), resizePolicy?: KubeContainer["resizePolicy"]): KubeContainer => ({
  name: "app",
  image: "busybox",
  resources,
  ...(resizePolicy ? { resizePolicy } : {}),
});

describe("computeContainerResize (upstream computePodResizeAction)", () => {
  test("allocated equal to actuated: kept, nothing to update", () => {
    const a = emptyResizeActions();
    expect(computeContainerResize(app(), "c1", res("0.5", "128Mi"), a)).toBe(true);
    expect(hasResize(a)).toBe(false);
  });
  test("memory and cpu grow: one update per resource, NotRequired by default", () => {
    const a = emptyResizeActions();
    expect(computeContainerResize(app(res("1", "256Mi")), "c1", res("500m", "128Mi"), a)).toBe(true);
    expect(a.update.memory.map((u) => [u.name, u.id, u.desired.memoryLimitBytes, u.current.memoryLimitBytes])).toEqual([
      ["app", "c1", 256 * 2 ** 20, 128 * 2 ** 20],
    ]);
    expect(a.update.cpu.map((u) => [u.desired.cpuLimitMilli, u.current.cpuLimitMilli])).toEqual([[1000, 500]]);
    expect(a.updatePodResources).toBe(false);
  });
  test("RestartContainer for memory: a memory change restarts, a cpu-only change does not", () => {
    const policy = [{ resourceName: "memory", restartPolicy: "RestartContainer" }];
    const mem = emptyResizeActions();
    expect(computeContainerResize(app(res("500m", "256Mi"), policy), "c1", res("500m", "128Mi"), mem)).toBe(false);
    expect(mem.updatePodResources).toBe(true);
    const cpu = emptyResizeActions();
    expect(computeContainerResize(app(res("1", "128Mi"), policy), "c1", res("500m", "128Mi"), cpu)).toBe(true);
    expect(cpu.update.cpu).toHaveLength(1);
  });
  test("decreases are ordered before increases", () => {
    const a = emptyResizeActions();
    const up = { ...app(res("500m", "256Mi")), name: "up" };
    const down = { ...app(res("500m", "64Mi")), name: "down" };
    computeContainerResize(up, "u1", res("500m", "128Mi"), a);
    computeContainerResize(down, "d1", res("500m", "128Mi"), a);
    expect(a.update.memory.map((u) => u.name)).toEqual(["down", "up"]);
  });
  test("no actuated record: compared with zero values (an idempotent update)", () => {
    const a = emptyResizeActions();
    expect(computeContainerResize(app(), "c1", undefined, a)).toBe(true);
    expect(a.update.memory).toHaveLength(1);
  });
});

describe("computePodResizeActions", () => {
  const sandbox = { id: "s", attempt: 0, state: "ready" as const, createdAtMs: 1 };
  const running = (c: KubeContainer) => ({
    id: "c1",
    name: c.name,
    image: "busybox",
    state: "running" as const,
    createdAtMs: 1,
    startedAtMs: 1,
    finishedAtMs: 0,
    attempt: 0,
    hash: hashContainer(c),
  });
  const podOf = (c: KubeContainer): KubePod => ({ metadata: { name: "p", namespace: "ns", uid: "u" }, spec: { containers: [c] } });
  const statusOf = (c: KubeContainer): RuntimePodStatus => ({ uid: "u", name: "p", namespace: "ns", sandboxes: [sandbox], containers: [running(c)] });
  test("a resize changes no hash: the container is kept and updated in place", () => {
    const c = app(res("1", "256Mi"));
    const actions = computePodActions(podOf(c), statusOf(c));
    const resize = computePodResizeActions(podOf(c), statusOf(c), () => res("500m", "128Mi"), actions);
    expect(actions.containersToKill).toEqual([]);
    expect(resize.update.memory).toHaveLength(1);
  });
  test("RestartContainer: killed and started with the resize message", () => {
    const c = app(res("500m", "256Mi"), [{ resourceName: "memory", restartPolicy: "RestartContainer" }]);
    const actions = computePodActions(podOf(c), statusOf(c));
    computePodResizeActions(podOf(c), statusOf(c), () => res("500m", "128Mi"), actions);
    expect(actions.containersToKill).toEqual([{ id: "c1", name: "app", message: "Container app resize requires restart" }]);
    expect(actions.containersToStart).toEqual(["app"]);
  });
  test("a sidecar is resized in place too; restarted, it is started as an init container", () => {
    const side = { ...app(res("500m", "256Mi"), [{ resourceName: "memory", restartPolicy: "RestartContainer" }]), name: "side", restartPolicy: "Always" };
    const main = app();
    const pod: KubePod = { metadata: { name: "p", namespace: "ns", uid: "u" }, spec: { initContainers: [side], containers: [main] } };
    const status: RuntimePodStatus = {
      uid: "u",
      name: "p",
      namespace: "ns",
      sandboxes: [sandbox],
      containers: [{ ...running(side), id: "s1" }, running(main)],
    };
    const actions = computePodActions(pod, status);
    computePodResizeActions(pod, status, (n) => (n === "side" ? res("500m", "128Mi") : res("500m", "128Mi")), actions);
    expect(actions.containersToKill.map((k) => k.name)).toEqual(["side"]);
    expect(actions.initContainersToStart).toEqual(["side"]);
    expect(actions.containersToStart).toEqual([]);
  });
});

describe("resize steps (upstream updatePodContainerResources, validateMemoryResizeAction)", () => {
  const u: ContainerToUpdate = { name: "app", id: "c1", desired: resizeResourcesOf(res("1", "256Mi")), current: resizeResourcesOf(res("500m", "128Mi")) };
  test("a memory step keeps the current cpu, a cpu step the current memory", () => {
    expect(requirementsOf(stepResources(u, "memory"))).toEqual({ requests: { cpu: "500m", memory: "256Mi" }, limits: { cpu: "500m", memory: "256Mi" } });
    expect(requirementsOf(stepResources(u, "cpu"))).toEqual({ requests: { cpu: "1", memory: "128Mi" }, limits: { cpu: "1", memory: "128Mi" } });
  });
  test("memory limits going down: the pod's and each container's", () => {
    const down: ContainerToUpdate = { ...u, desired: resizeResourcesOf(res("1", "64Mi")) };
    const got = decreasingMemoryLimits({ memoryLimitBytes: 128 * 2 ** 20 }, { memoryLimitBytes: 64 * 2 ** 20 }, [down]);
    expect(got.pod).toBe(64 * 2 ** 20);
    expect([...got.containers]).toEqual([["app", { id: "c1", limit: 64 * 2 ** 20 }]]);
    expect(decreasingMemoryLimits({ memoryLimitBytes: 128 }, { memoryLimitBytes: 256 }, [u])).toEqual({ containers: new Map() });
  });
});
