// kuberuntime killPod on the pressure path: the containers the last relist / pod status saw running
// get their StopContainer before any other runtime call; the listing after it catches the rest.
import { expect, test } from "bun:test";
import type { ContainerFilter, CriClient } from "../../../src/cri/client.ts";
import type { DirectSignaller } from "../../../src/pod/kuberuntime/direct-signal.ts";
import { newContainerLabels, newPodLabels, POD_UID_LABEL as UID_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";

interface FakeContainer {
  id: string;
  uid: string;
  name: string;
  state: "CONTAINER_RUNNING" | "CONTAINER_EXITED";
}

function fakeCri(containers: FakeContainer[], o: { failStop?: Record<string, string> } = {}) {
  const calls: string[] = [];
  const pod = (uid: string) => ({ uid, name: `p-${uid}`, namespace: "ns" });
  const cri = {
    listPodSandbox: async (filter?: { labelSelector?: Record<string, string> }) => {
      calls.push("ListPodSandbox");
      const uids = [...new Set(containers.map((c) => c.uid))].filter((u) => !filter?.labelSelector || filter.labelSelector[UID_LABEL] === u);
      return uids.map((u) => ({
        id: `sb-${u}`,
        state: "SANDBOX_NOTREADY",
        createdAt: 1,
        metadata: { name: `p-${u}`, namespace: "ns", uid: u, attempt: 0 },
        labels: newPodLabels(pod(u)),
      }));
    },
    listContainers: async (filter?: ContainerFilter) => {
      calls.push("ListContainers");
      return containers
        .filter((c) => (!filter?.labelSelector || filter.labelSelector[UID_LABEL] === c.uid) && (!filter?.state || filter.state.state === c.state))
        .map((c) => ({
          id: c.id,
          podSandboxId: `sb-${c.uid}`,
          state: c.state,
          createdAt: 1,
          metadata: { name: c.name, attempt: 0 },
          labels: newContainerLabels(pod(c.uid), c.name),
        }));
    },
    containerStatus: async (id: string) => {
      calls.push(`ContainerStatus ${id}`);
      const c = containers.find((x) => x.id === id);
      if (!c) throw new Error(`NotFound: ${id}`);
      return {
        status: {
          id,
          state: c.state,
          metadata: { name: c.name, attempt: 0 },
          labels: newContainerLabels(pod(c.uid), c.name),
          annotations: {},
          image: { image: "img" },
          createdAt: 1,
        },
        info: {},
      };
    },
    stopContainer: async (id: string, timeout: number) => {
      calls.push(`StopContainer ${id} ${timeout}`);
      const err = o.failStop?.[id];
      if (err) throw new Error(err);
      const c = containers.find((x) => x.id === id);
      if (c) c.state = "CONTAINER_EXITED";
    },
    stopPodSandbox: async (id: string) => void calls.push(`StopPodSandbox ${id}`),
  } as unknown as CriClient;
  return { cri, calls };
}

const ref = { uid: "u1", name: "p-u1", namespace: "ns" };

test("containers seen running by the last relist are stopped first, before any listing", async () => {
  const containers: FakeContainer[] = [
    { id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" },
    { id: "c9", uid: "u9", name: "other", state: "CONTAINER_RUNNING" },
  ];
  const { cri, calls } = fakeCri(containers);
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.getPods(true);
  // Started after the relist: only the listing that follows the first stops knows it.
  containers.push({ id: "c2", uid: "u1", name: "late", state: "CONTAINER_RUNNING" });
  calls.length = 0;
  await rt.killPod(ref, 0);
  expect(calls[0]).toBe("StopContainer c1 0");
  expect(calls).toContain("StopContainer c2 0");
  expect(calls).not.toContain("StopContainer c9 0");
  expect(calls.at(-1)).toBe("StopPodSandbox sb-u1");
});

test("the pod status's running containers count as known too", async () => {
  const { cri, calls } = fakeCri([{ id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" }]);
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.getPodStatus("u1", "p-u1", "ns");
  calls.length = 0;
  await rt.killPod(ref, 2);
  expect(calls[0]).toBe("StopContainer c1 2");
  expect(calls.filter((c) => c.startsWith("StopContainer"))).toEqual(["StopContainer c1 2"]);
});

test("nothing known: list, then stop (as before)", async () => {
  const { cri, calls } = fakeCri([{ id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" }]);
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.killPod(ref, 0);
  expect(calls).toEqual(["ListContainers", "StopContainer c1 0", "ListPodSandbox", "StopPodSandbox sb-u1"]);
});

test("a known container that is gone by the listing failing to stop is no error; a running one failing is", async () => {
  const containers: FakeContainer[] = [
    { id: "gone", uid: "u1", name: "old", state: "CONTAINER_RUNNING" },
    { id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" },
  ];
  const { cri } = fakeCri(containers, { failStop: { gone: "NotFound: gone" } });
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.getPods(true);
  containers.splice(0, 1);
  await rt.killPod(ref, 0);

  const stuck: FakeContainer[] = [{ id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" }];
  const failing = fakeCri(stuck, { failStop: { c1: "DeadlineExceeded" } });
  const rt2 = createKubeRuntime({ cri: failing.cri, memoryCapacityBytes: 2 ** 30 });
  await rt2.getPods(true);
  await expect(rt2.killPod(ref, 0)).rejects.toThrow("app: DeadlineExceeded");
  // Known once, stopped once: the listing's copy is the same container.
  expect(failing.calls.filter((c) => c.startsWith("StopContainer"))).toEqual(["StopContainer c1 0"]);
});

test("the direct signaller learns the running containers and signals each right before its StopContainer", async () => {
  const containers: FakeContainer[] = [
    { id: "c1", uid: "u1", name: "app", state: "CONTAINER_RUNNING" },
    { id: "c9", uid: "u9", name: "other", state: "CONTAINER_RUNNING" },
  ];
  const { cri, calls } = fakeCri(containers);
  const tracked: string[] = [];
  let running: string[] = [];
  const directSignal: DirectSignaller = {
    track: (id, uid) => void tracked.push(`${id}@${uid}`),
    retain: (ids) => void (running = [...ids].sort()),
    signal: (id, grace) => (calls.push(`signal ${id} ${grace}`), { containerId: id, podUid: "u1", pid: 42, signal: 15, atMs: 0 }),
    size: 0,
    close() {},
  };
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30, directSignal });
  await rt.getPods(true);
  expect(tracked.sort()).toEqual(["c1@u1", "c9@u9"]);
  expect(running).toEqual(["c1", "c9"]);
  calls.length = 0;
  await rt.killPod(ref, 1);
  expect(calls.slice(0, 2)).toEqual(["signal c1 1", "StopContainer c1 1"]);
  // The next relist no longer lists c1 running: the signaller forgets it.
  await rt.getPods(false);
  expect(running).toEqual(["c9"]);
});
