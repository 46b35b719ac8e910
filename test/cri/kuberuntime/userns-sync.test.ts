// A pod sync with the user namespace manager (fake CRI): the sandbox and container configs carry the
// pod's user namespace and idmapped mounts; a runtime without support gets no RunPodSandbox, the sync
// fails with upstream's message and FailedCreatePodSandBox event; the start is counted either way.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../../src/cri/client.ts";
import type { ContainerConfig, PodSandboxConfig, UserNamespace } from "../../../src/cri/types.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/index.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { EventRecorder } from "../../../src/events/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-userns-sync-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeCri() {
  const sandboxes: PodSandboxConfig[] = [];
  const containers: ContainerConfig[] = [];
  const impl: Record<string, (...a: any[]) => unknown> = {
    imageStatus: async (image: string) => ({ id: `sha256:${image}` }),
    runPodSandbox: async (cfg: PodSandboxConfig) => (sandboxes.push(cfg), "sb-1"),
    createContainer: async (_sb: string, cfg: ContainerConfig) => (containers.push(cfg), "c-1"),
    podSandboxStatus: async () => ({ status: { network: { ip: "10.0.0.9" } } }),
    listContainers: async () => [],
    listPodSandbox: async () => [],
  };
  const cri = new Proxy({}, { get: (_t, k: string) => impl[k] ?? (async () => undefined) }) as unknown as CriClient;
  return { cri, sandboxes, containers };
}

const pod = (hostUsers?: boolean): KubePod => ({
  metadata: { name: "p", namespace: "ns", uid: "u-p" },
  spec: {
    ...(hostUsers === undefined ? {} : { hostUsers }),
    volumes: [{ name: "data", hostPath: { path: dir } }],
    containers: [{ name: "main", image: "bunlet.local/busybox:1", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
  } as KubePod["spec"],
});
const empty = { uid: "u-p", name: "p", namespace: "ns", sandboxes: [], containers: [] };
const backOff = { isInBackOff: () => false, next: () => {} };
const mapping = { hostId: 65536 * 7, containerId: 0, length: 65536 };

function runtimeWith(mappings: (pod: KubePod, handler: string) => Promise<UserNamespace | undefined>) {
  const fake = fakeCri();
  const events: string[] = [];
  const counted: boolean[] = [];
  const recorder = {
    event: (_ref: unknown, type: string, reason: string, message: string) => void events.push(`${type} ${reason} ${message}`),
  } as unknown as EventRecorder;
  const rt = createKubeRuntime({
    cri: fake.cri,
    podLogsDir: dir,
    rootDir: dir,
    volumeHostPath: () => dir,
    manageEtcHosts: false,
    events: recorder,
    userNamespaceMappings: mappings,
    userNamespacedPodStarted: (failed) => void counted.push(failed),
  });
  return { rt, ...fake, events, counted };
}

describe("syncPod with user namespaces", () => {
  test("hostUsers: false: the sandbox and the container run in the pod's user namespace; mounts idmapped; counted", async () => {
    const userns: UserNamespace = { mode: "POD", uids: [mapping], gids: [mapping] };
    const asked: string[] = [];
    const { rt, sandboxes, containers, counted } = runtimeWith(async (p, handler) => (asked.push(`${p.metadata.uid}:${handler}`), userns));
    const r = await rt.syncPod(pod(false), empty, backOff);
    expect(r.errors).toEqual([]);
    expect(asked).toEqual(["u-p:"]);
    expect(sandboxes[0]!.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual(userns);
    expect(containers[0]!.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual(userns);
    expect(containers[0]!.mounts?.find((m) => m.containerPath === "/data")).toMatchObject({ uidMappings: [mapping], gidMappings: [mapping] });
    expect(counted).toEqual([false]);
  });

  test("hostUsers unset: mode NODE, mounts as they are, not counted", async () => {
    const { rt, sandboxes, containers, counted } = runtimeWith(async () => ({ mode: "NODE" }));
    await rt.syncPod(pod(), empty, backOff);
    expect(sandboxes[0]!.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual({ mode: "NODE" });
    expect(containers[0]!.mounts?.[0]).not.toHaveProperty("uidMappings");
    expect(counted).toEqual([]);
  });

  test("a runtime without support: no sandbox, upstream's message and event, counted as failed", async () => {
    const why = "can't set `spec.hostUsers: false`, runtime does not support user namespaces";
    const { rt, sandboxes, events, counted } = runtimeWith(async () => Promise.reject(new Error(why)));
    const r = await rt.syncPod(pod(false), empty, backOff);
    expect(sandboxes).toEqual([]);
    expect(r.errors).toEqual([{ container: "", reason: "CreatePodSandboxError", message: `Failed to generate sandbox config for pod "p_ns(u-p)": ${why}` }]);
    expect(events).toContain(`Warning FailedCreatePodSandBox Failed to create pod sandbox: ${why}`);
    expect(counted).toEqual([true]);
  });
});
