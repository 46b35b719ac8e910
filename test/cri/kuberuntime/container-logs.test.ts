// kuberuntime's side of log rotation: which containers' logs are listed, and the reopen call.
import { expect, test } from "bun:test";
import type { ContainerFilter, CriClient } from "../../../src/cri/client.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";

test("listContainerLogs: running containers with their log_path; gone, stopped-since-listing or path-less ones are skipped", async () => {
  const filters: (ContainerFilter | undefined)[] = [];
  const statuses: Record<string, { state: string; logPath: string } | Error> = {
    a: { state: "CONTAINER_RUNNING", logPath: "/var/log/pods/ns_p_u/a/0.log" },
    b: new Error("NotFound: container b"),
    c: { state: "CONTAINER_EXITED", logPath: "/var/log/pods/ns_p_u/c/0.log" },
    d: { state: "CONTAINER_RUNNING", logPath: "" },
  };
  const reopened: string[] = [];
  const cri = {
    listContainers: async (filter?: ContainerFilter) => {
      filters.push(filter);
      return Object.keys(statuses).map((id) => ({ id, labels: {} }));
    },
    containerStatus: async (id: string) => {
      const s = statuses[id]!;
      if (s instanceof Error) throw s;
      return { status: { id, ...s }, info: {} };
    },
    reopenContainerLog: async (id: string) => void reopened.push(id),
  } as unknown as CriClient;
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  expect(await rt.listContainerLogs!()).toEqual([{ containerId: "a", logPath: "/var/log/pods/ns_p_u/a/0.log" }]);
  expect(filters).toEqual([{ state: { state: "CONTAINER_RUNNING" } }]);
  await rt.reopenContainerLog!("a");
  expect(reopened).toEqual(["a"]);
});

test("listContainerLogs: a container whose running status a pod status read returned is not asked again", async () => {
  const asked: string[] = [];
  const container = { id: "a", labels: { "io.kubernetes.pod.uid": "u", "io.kubernetes.container.name": "main" }, metadata: { name: "main" } };
  const cri = {
    listPodSandbox: async () => [],
    listContainers: async () => [container],
    containerStatus: async (id: string) => {
      asked.push(id);
      const status = { id, metadata: { name: "main" }, state: "CONTAINER_RUNNING", logPath: "/var/log/pods/ns_p_u/main/0.log", labels: {}, annotations: {} };
      return { status, info: {} };
    },
  } as unknown as CriClient;
  const rt = createKubeRuntime({ cri, memoryCapacityBytes: 2 ** 30 });
  await rt.getPodStatus("u", "p", "ns");
  expect(await rt.listContainerLogs!()).toEqual([{ containerId: "a", logPath: "/var/log/pods/ns_p_u/main/0.log" }]);
  expect(asked).toEqual(["a"]);
});
