import { describe, expect, test } from "bun:test";
import { parseThresholdConfig } from "../../src/eviction/thresholds-parse.ts";
import {
  buildNodeStatus,
  nodeAllocatable,
  nodeConditions,
  nodeStatusHasChanged,
  readinessErrors,
  reconcileExisting,
  initialNode,
  type MachineInfo,
  type NodeStatusInput,
} from "../../src/node/index.ts";

const machine: MachineInfo = {
  machineID: "m",
  systemUUID: "u",
  bootID: "b",
  kernelVersion: "6.1.0",
  osImage: "Debian GNU/Linux 12 (bookworm)",
  operatingSystem: "linux",
  architecture: "amd64",
  cpus: 2,
  memoryBytes: 4 * 1024 ** 3,
  hugepagesBytes: { "2Mi": 64 * 1024 ** 2 },
  ephemeralStorageBytes: 100 * 1024 ** 3,
};
const input = (over: Partial<NodeStatusInput> = {}): NodeStatusInput => ({
  nowMs: Date.parse("2026-12-01T10:00:00Z"),
  machine,
  addresses: [
    { type: "InternalIP", address: "10.0.0.5" },
    { type: "Hostname", address: "n1" },
  ],
  kubeletVersion: "v1.31.0",
  runtimeVersion: "containerd://1.6.20",
  readyErrors: [],
  pressure: [],
  images: [],
  maxImages: 50,
  maxPods: 110,
  kubeletPort: 10250,
  hardEvictionThresholds: [],
  ...over,
});

describe("nodeInfo.swap (upstream nodestatus.MachineInfo)", () => {
  test("the node's swap capacity when it has swap", () => {
    const s = buildNodeStatus(input({ machine: { ...machine, swapCapacityBytes: 2 * 1024 ** 3 } }));
    expect(s.nodeInfo.swap).toEqual({ capacity: 2 * 1024 ** 3 });
  });
  test.each([0, undefined])("no swap (%p): no swap field", (swapCapacityBytes) => {
    expect(buildNodeStatus(input({ machine: { ...machine, swapCapacityBytes } })).nodeInfo).not.toHaveProperty("swap");
  });
});

describe("runtimeHandlers (upstream RuntimeHandlers setter)", () => {
  test("each handler the runtime lists, with both features; a handler without features has them false", () => {
    const s = buildNodeStatus(
      input({
        runtimeHandlers: [
          { name: "", features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
          { name: "crun", features: null },
        ],
      }),
    );
    expect(s.runtimeHandlers).toEqual([
      { name: "", features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      { name: "crun", features: { recursiveReadOnlyMounts: false, userNamespaces: false } },
    ]);
  });
  test("none listed (containerd 1.6): no field", () => {
    expect(buildNodeStatus(input({ runtimeHandlers: [] }))).not.toHaveProperty("runtimeHandlers");
  });
});

describe("volumesInUse (upstream VolumesInUse setter)", () => {
  test("the attachable volumes in use; an emptied list is sent as null so the patch removes it; never there, no field", () => {
    const names = ["kubernetes.io/csi/drv^a", "kubernetes.io/csi/drv^b"];
    expect(buildNodeStatus(input({ volumesInUse: names })).volumesInUse).toEqual(names);
    expect(buildNodeStatus(input({ volumesInUse: [] }), { volumesInUse: names }).volumesInUse).toBeNull();
    expect(buildNodeStatus(input({ volumesInUse: [] }), {})).not.toHaveProperty("volumesInUse");
    expect(buildNodeStatus(input({}))).not.toHaveProperty("volumesInUse");
  });
});

describe("capacity and allocatable", () => {
  test("device plugin resources: capacity (all devices), allocatable (healthy), a removed one at 0", () => {
    const s = buildNodeStatus(
      input({ devicePlugins: { capacity: { "example.com/resource": "2" }, allocatable: { "example.com/resource": "1" }, removed: ["vendor.io/gone"] } }),
    );
    expect(s.capacity).toMatchObject({ "example.com/resource": "2", "vendor.io/gone": "0", cpu: "2" });
    expect(s.allocatable).toMatchObject({ "example.com/resource": "1", "vendor.io/gone": "0", cpu: "2" });
  });
  test("allocatable = capacity − reserved − hard eviction; memory also − hugepages", () => {
    const thresholds = parseThresholdConfig({ evictionHard: { "memory.available": "100Mi", "nodefs.available": "10Gi" } }).filter((t) => t.gracePeriodMs === 0);
    const s = buildNodeStatus(input({ systemReserved: { cpu: "500m", memory: "1Gi" }, kubeReserved: { memory: "256Mi" }, hardEvictionThresholds: thresholds }));
    expect(s.capacity).toEqual({ cpu: "2", memory: "4Gi", pods: "110", "ephemeral-storage": "100Gi", "hugepages-2Mi": "64Mi" });
    expect(s.allocatable).toEqual({
      cpu: "1500m",
      memory: `${4096 - 1024 - 256 - 100 - 64}Mi`,
      pods: "110",
      "ephemeral-storage": "90Gi",
      "hugepages-2Mi": "64Mi",
    });
  });
  test("never below zero", () => {
    expect(nodeAllocatable({ cpu: "1" }, { systemReserved: { cpu: "2" }, hardEvictionThresholds: [], machine })).toEqual({ cpu: "0" });
  });
});

describe("conditions", () => {
  test("ready node: upstream reasons and messages, pressure from the eviction manager", () => {
    const c = nodeConditions(input({ pressure: ["MemoryPressure"] }));
    expect(c.map((x) => [x.type, x.status, x.reason, x.message])).toEqual([
      ["MemoryPressure", "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"],
      ["DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"],
      ["PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"],
      ["Ready", "True", "KubeletReady", "kubelet is posting ready status"],
    ]);
  });
  test.each([
    [["container runtime is down"], "container runtime is down"],
    [["a", "b"], "[a, b]"],
  ])("not ready %p → message %p", (errs, msg) => {
    const ready = nodeConditions(input({ readyErrors: errs })).find((c) => c.type === "Ready")!;
    expect([ready.status, ready.reason, ready.message]).toEqual(["False", "KubeletNotReady", msg]);
  });
  test("lastTransitionTime holds while the status holds; other owners' conditions are kept", () => {
    const first = nodeConditions(input());
    const later = nodeConditions(input({ nowMs: Date.parse("2026-12-01T10:00:10Z") }), [...first, { type: "NetworkUnavailable", status: "False" }]);
    const ready = later.find((c) => c.type === "Ready")!;
    expect([ready.lastTransitionTime, ready.lastHeartbeatTime]).toEqual(["2026-12-01T10:00:00Z", "2026-12-01T10:00:10Z"]);
    expect(later.at(-1)!.type).toBe("NetworkUnavailable");
    const flipped = nodeConditions(input({ nowMs: Date.parse("2026-12-01T10:00:20Z"), readyErrors: ["x"] }), later).find((c) => c.type === "Ready")!;
    expect(flipped.lastTransitionTime).toBe("2026-12-01T10:00:20Z");
  });
  test("a status differing only in heartbeat times has not changed", () => {
    const a = buildNodeStatus(input());
    const b = buildNodeStatus(input({ nowMs: Date.parse("2026-12-01T10:00:10Z") }), a);
    expect(nodeStatusHasChanged(a, b)).toBe(false);
    expect(nodeStatusHasChanged(a, buildNodeStatus(input({ pressure: ["DiskPressure"] }), a))).toBe(true);
  });
  test("addresses that could not be set (a refused --node-ip) leave the node's as they were: none for a new Node", () => {
    const before = buildNodeStatus(input());
    expect(buildNodeStatus(input({ addresses: undefined }), before).addresses).toEqual(before.addresses);
    expect(buildNodeStatus(input({ addresses: undefined })).addresses).toEqual([]);
  });
});

test("runtime readiness errors word the CRI conditions as the kubelet does", () => {
  expect(
    readinessErrors([
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      { type: "NetworkReady", status: false, reason: "NetworkPluginNotReady", message: "cni plugin not initialized" },
    ]),
  ).toEqual(["container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized"]);
  expect(readinessErrors([])).toEqual(["container runtime not ready: <nil>", "container runtime network not ready: <nil>"]);
});

test("initial node: well-known labels, --node-labels, taints, attach/detach annotation; reconcile restores labels", () => {
  const reg = {
    nodeName: "n1",
    hostname: "n1",
    os: "linux",
    arch: "amd64",
    nodeLabels: { "node-role.kubernetes.io/edge": "" },
    registerWithTaints: [{ key: "k", value: "v", effect: "NoSchedule" }],
  };
  const n = initialNode(reg, buildNodeStatus(input()));
  expect(n.metadata.labels).toEqual({
    "kubernetes.io/hostname": "n1",
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": "amd64",
    "node-role.kubernetes.io/edge": "",
  });
  expect(n.metadata.annotations).toEqual({ "volumes.kubernetes.io/controller-managed-attach-detach": "true" });
  expect(n.spec).toEqual({ taints: [{ key: "k", value: "v", effect: "NoSchedule" }] });
  expect(reconcileExisting(reg, n)).toBeUndefined();
  expect(reconcileExisting(reg, { ...n, metadata: { ...n.metadata, labels: { "kubernetes.io/os": "windows" }, annotations: {} } })).toEqual({
    metadata: {
      labels: {
        "kubernetes.io/hostname": "n1",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
      },
      annotations: { "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
  });
});
