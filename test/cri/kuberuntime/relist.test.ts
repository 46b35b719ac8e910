// kuberuntime getPods as the PLEG relists with it: an empty node lists only its sandboxes.
import { expect, test } from "bun:test";
import type { CriClient } from "../../../src/cri/client.ts";
import { newContainerLabels, newPodLabels } from "../../../src/pod/kuberuntime/labels.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";

const pod = (u: string) => ({ uid: u, name: `p-${u}`, namespace: "ns" });
const labels = (u: string) => newPodLabels(pod(u));

function fakeCri() {
  const calls: string[] = [];
  const node = { sandboxes: [] as string[] };
  const cri = {
    listPodSandbox: async () => {
      calls.push("ListPodSandbox");
      return node.sandboxes.map((u) => ({
        id: `sb-${u}`,
        state: "SANDBOX_READY",
        createdAt: 1,
        metadata: { name: `p-${u}`, namespace: "ns", uid: u, attempt: 0 },
        labels: labels(u),
      }));
    },
    listContainers: async () => {
      calls.push("ListContainers");
      return node.sandboxes.map((u) => ({
        id: `c-${u}`,
        podSandboxId: `sb-${u}`,
        state: "CONTAINER_RUNNING",
        createdAt: 1,
        metadata: { name: "app", attempt: 0 },
        labels: newContainerLabels(pod(u), "app"),
      }));
    },
  } as unknown as CriClient;
  return { cri, calls, node };
}

test("once a full listing saw no sandbox, relists ask for containers only when a sandbox shows", async () => {
  const { cri, calls, node } = fakeCri();
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  // The first listing knows nothing yet: both, at once.
  expect(await rt.getPods(true)).toEqual([]);
  expect(calls.splice(0)).toEqual(["ListPodSandbox", "ListContainers"]);
  expect(await rt.getPods(true)).toEqual([]);
  expect(calls.splice(0)).toEqual(["ListPodSandbox"]);
  node.sandboxes.push("u1");
  const pods = await rt.getPods(true);
  expect(calls.splice(0)).toEqual(["ListPodSandbox", "ListContainers"]);
  expect(pods.map((p) => [p.uid, p.sandboxIds, p.containers.map((c) => [c.id, c.state])])).toEqual([["u1", ["sb-u1"], [["c-u1", "running"]]]]);
  // Sandboxes exist: both lists, as upstream's relist.
  await rt.getPods(true);
  expect(calls.splice(0).sort()).toEqual(["ListContainers", "ListPodSandbox"]);
  // A running-only listing (not the relist) always asks both.
  node.sandboxes.length = 0;
  await rt.getPods(true);
  calls.length = 0;
  await rt.getPods(false);
  expect(calls.splice(0).sort()).toEqual(["ListContainers", "ListPodSandbox"]);
});

test("log rotation lists no containers while the last relist saw no sandbox", async () => {
  const { cri, calls, node } = fakeCri();
  (cri as unknown as { containerStatus: unknown }).containerStatus = async (id: string) => ({
    status: { id, state: "CONTAINER_RUNNING", logPath: `/logs/${id}.log` },
  });
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.getPods(true);
  calls.length = 0;
  expect(await rt.listContainerLogs!()).toEqual([]);
  expect(calls).toEqual([]);
  node.sandboxes.push("u1");
  await rt.getPods(true);
  calls.length = 0;
  expect(await rt.listContainerLogs!()).toEqual([{ containerId: "c-u1", logPath: "/logs/c-u1.log" }]);
  expect(calls).toEqual(["ListContainers"]);
});

test("a full listing whose entries are all the objects of the last one returns the last pods, the same array", async () => {
  const sandbox = Object.freeze({
    id: "sb-u1",
    state: "SANDBOX_READY",
    createdAt: 1,
    metadata: { name: "p-u1", namespace: "ns", uid: "u1", attempt: 0 },
    labels: labels("u1"),
  });
  const container = (state: string) =>
    Object.freeze({
      id: "c1",
      podSandboxId: "sb-u1",
      state,
      createdAt: 1,
      metadata: { name: "app", attempt: 0 },
      labels: newContainerLabels(pod("u1"), "app"),
    });
  let c = container("CONTAINER_RUNNING");
  const cri = { listPodSandbox: async () => [sandbox], listContainers: async () => [c] } as unknown as CriClient;
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  const one = await rt.getPods(true);
  expect(await rt.getPods(true)).toBe(one);
  c = container("CONTAINER_EXITED"); // a new object: something changed
  const three = await rt.getPods(true);
  expect(three).not.toBe(one);
  expect(three[0]!.containers[0]!.state).toBe("exited");
  // Running-only listings never take the shortcut.
  expect(await rt.getPods(false)).not.toBe(three);
});

test("a full listing of the same entries in another order (containerd's Go map order) returns the last pods, the same array", async () => {
  const sandboxes = ["u1", "u2", "u3"].map((u) =>
    Object.freeze({
      id: `sb-${u}`,
      state: "SANDBOX_READY",
      createdAt: 1,
      metadata: { name: `p-${u}`, namespace: "ns", uid: u, attempt: 0 },
      labels: labels(u),
    }),
  );
  const containers = ["u1", "u2", "u3"].map((u) =>
    Object.freeze({
      id: `c-${u}`,
      podSandboxId: `sb-${u}`,
      state: "CONTAINER_RUNNING",
      createdAt: 1,
      metadata: { name: "app", attempt: 0 },
      labels: newContainerLabels(pod(u), "app"),
    }),
  );
  let order = [0, 1, 2];
  const cri = {
    listPodSandbox: async () => order.map((i) => sandboxes[i]),
    listContainers: async () => [...order].reverse().map((i) => containers[i]),
  } as unknown as CriClient;
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  const one = await rt.getPods(true);
  order = [2, 0, 1];
  expect(await rt.getPods(true)).toBe(one);
  // One entry fewer, one replaced by a duplicate of another: not the same set.
  order = [2, 0];
  const two = await rt.getPods(true);
  expect(two).not.toBe(one);
  expect(two.map((p) => p.uid).sort()).toEqual(["u1", "u3"]);
  order = [2, 2];
  const three = await rt.getPods(true);
  expect(three).not.toBe(two);
  expect(three.map((p) => p.uid).sort()).toEqual(["u3"]);
});
