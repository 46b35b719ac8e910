import { describe, expect, test } from "bun:test";
import { allocatableResources, getPodResources, listPodResources, PodNotFoundError, podResources } from "../../src/podresources/resources.ts";

const pod = (name: string, namespace: string | undefined, containers: string[], init: { name: string; restartPolicy?: string }[] = []) => ({
  metadata: { name, namespace },
  spec: { containers: containers.map((n) => ({ name: n })), initContainers: init },
});

describe("podresources responses", () => {
  test("containers carry empty devices, cpu ids and memory; sidecars first, plain init containers left out", () => {
    const r = podResources(pod("web", "prod", ["app", "log"], [{ name: "setup" }, { name: "proxy", restartPolicy: "Always" }]));
    expect(r).toEqual({
      name: "web",
      namespace: "prod",
      containers: ["proxy", "app", "log"].map((name) => ({ name, devices: [], cpuIds: [], memory: [], dynamicResources: [] })),
    });
  });

  test("a container's devices come from the device manager, by pod UID and container name", () => {
    const p = { metadata: { name: "gpu", namespace: "ml", uid: "u1" }, spec: { containers: [{ name: "train" }, { name: "log" }] } };
    const devices = {
      container: (uid: string, name: string) => (uid === "u1" && name === "train" ? [{ resourceName: "example.com/resource", deviceIds: ["Dev-1"] }] : []),
      allocatable: () => [{ resourceName: "example.com/resource", deviceIds: ["Dev-2"] }],
    };
    const r = listPodResources([p], { devices });
    expect(r.podResources[0]?.containers.map((c) => c.devices)).toEqual([[{ resourceName: "example.com/resource", deviceIds: ["Dev-1"] }], []]);
    expect(allocatableResources({ devices }).devices).toHaveLength(1);
  });

  test("List maps every active pod; a pod without namespace is in default", () => {
    const r = listPodResources([pod("a", undefined, ["c"]), pod("b", "x", ["d"])]);
    expect(r.podResources.map((p) => `${p.namespace}/${p.name}`)).toEqual(["default/a", "x/b"]);
  });

  test("Get finds by namespace and name, else upstream's not-found message", () => {
    const pods = [pod("a", "x", ["c"]), pod("a", "y", ["d"])];
    expect(getPodResources(pods, "a", "y").podResources.containers[0]?.name).toBe("d");
    expect(() => getPodResources(pods, "a", "z")).toThrow(new PodNotFoundError("a", "z"));
    expect(() => getPodResources(pods, "a", "z")).toThrow("pod a in namespace z not found");
  });

  test("allocatable resources are empty", () => {
    expect(allocatableResources()).toEqual({ devices: [], cpuIds: [], memory: [] });
  });
});

describe("cpu_ids from the CPU manager", () => {
  const cpus = { exclusive: (uid: string, name: string) => (uid === "u1" && name === "app" ? [1] : []), allocatable: () => [1] };
  const pod = { metadata: { name: "g", namespace: "default", uid: "u1" }, spec: { containers: [{ name: "app" }, { name: "side" }] } };
  test("List gives a container its exclusive CPUs, others none", () => {
    expect(listPodResources([pod], { cpus }).podResources[0]!.containers.map((c) => [c.name, c.cpuIds])).toEqual([
      ["app", [1]],
      ["side", []],
    ]);
  });
  test("GetAllocatableResources: the CPUs the static policy may give out", () => {
    expect(allocatableResources({ cpus }).cpuIds).toEqual([1]);
    expect(allocatableResources().cpuIds).toEqual([]);
  });
});
