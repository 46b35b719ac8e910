// The kubelet's container and image events as the kuberuntime manager records them (upstream
// EnsureImageExists and doBackOff): Pulling → Pulled for an absent image, Failed on ErrImagePull, BackOff
// while the image back-off runs, and the Warning BackOff of a container in its restart back-off — with
// upstream's messages and the container's field path. A recording CRI stands in.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../src/cri/client.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/index.ts";
import type { RuntimeContainerStatus, RuntimePodStatus } from "../../src/pod/runtime.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-rtevents-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A runtime status of pod `name` in namespace ns: a ready sandbox and these containers. */
const runtimeStatus = (uid: string, name: string, containers: RuntimeContainerStatus[]): RuntimePodStatus => ({
  uid,
  name,
  namespace: "ns",
  sandboxes: [{ id: "sandbox-1", attempt: 0, state: "ready", createdAtMs: 1, ip: "10.0.0.9" }],
  containers,
});

/** Container "app" (image ok/app:1), exited 1 unless `o` says otherwise. */
const appStatus = (o: Partial<RuntimeContainerStatus>): RuntimeContainerStatus => ({
  id: "c1",
  name: "app",
  image: "ok/app:1",
  state: "exited",
  createdAtMs: 1,
  startedAtMs: 2,
  finishedAtMs: 3,
  exitCode: 1,
  reason: "Error",
  attempt: 0,
  ...o,
});

function recordingCri() {
  const impl: Record<string, (...a: any[]) => unknown> = {
    imageStatus: async () => undefined,
    pullImage: async () => "sha256:abc",
    runPodSandbox: async () => "sandbox-1",
    createContainer: async () => "container-1",
    podSandboxStatus: async () => ({ status: { network: { ip: "10.0.0.9" } } }),
    listContainers: async () => [],
    listPodSandbox: async () => [],
  };
  const cri = new Proxy({}, { get: (_t, k: string) => impl[k] ?? (async () => undefined) }) as unknown as CriClient;
  return { cri };
}

test("image events as upstream's EnsureImageExists: Pulling → Pulled (absent image), Failed (ErrImagePull), then BackOff while backing off", async () => {
  const { cri } = recordingCri();
  const failing = {
    ...cri,
    pullImage: async (image: string) => (image.startsWith("bad/") ? Promise.reject(new Error("not found")) : "sha256:abc"),
  } as unknown as CriClient;
  const events: { type: string; reason: string; message: string; fieldPath?: string }[] = [];
  const recorder = {
    event: (ref: { fieldPath?: string }, type: string, reason: string, message: string) =>
      void events.push({ type, reason, message, fieldPath: ref.fieldPath }),
  };
  const rt = createKubeRuntime({
    cri: new Proxy(failing, { get: (t, k: string) => (t as any)[k] ?? (cri as any)[k] }),
    podLogsDir: dir,
    rootDir: dir,
    volumeHostPath: () => undefined,
    events: recorder,
  });
  const pod = {
    metadata: { name: "img", namespace: "ns", uid: "u2" },
    spec: {
      containers: [
        { name: "good", image: "ok/app:1" },
        { name: "broken", image: "bad/app:1" },
      ],
    },
  };
  const backOff = { isInBackOff: () => false, next: () => {} };
  const first = await rt.syncPod(pod, { uid: "u2", name: "img", namespace: "ns", sandboxes: [], containers: [] }, backOff);
  expect(first.errors).toContainEqual({ container: "broken", reason: "ErrImagePull", message: "not found" });
  expect(events.map((e) => [e.reason, e.message.replace(/ in \S+ \(\S+ including waiting\)$/, " in …")])).toEqual(
    expect.arrayContaining([
      ["Pulling", 'Pulling image "ok/app:1"'],
      ["Pulled", 'Successfully pulled image "ok/app:1" in …'],
      ["Pulling", 'Pulling image "bad/app:1"'],
      ["Failed", 'Failed to pull image "bad/app:1": not found'],
    ]),
  );
  expect(events.find((e) => e.reason === "Failed")).toMatchObject({ type: "Warning", fieldPath: "spec.containers{broken}" });
  events.length = 0;
  const second = await rt.syncPod(pod, { uid: "u2", name: "img", namespace: "ns", sandboxes: [], containers: [] }, backOff);
  expect(second.errors).toContainEqual({ container: "broken", reason: "ImagePullBackOff", message: 'Back-off pulling image "bad/app:1"' });
  expect(events).toContainEqual({ type: "Normal", reason: "BackOff", message: 'Back-off pulling image "bad/app:1"', fieldPath: "spec.containers{broken}" });
});

test("a container in its restart back-off: a Warning BackOff event with upstream's message, CrashLoopBackOff", async () => {
  const { cri } = recordingCri();
  const events: { type: string; reason: string; message: string; fieldPath?: string }[] = [];
  const recorder = {
    event: (ref: { fieldPath?: string }, type: string, reason: string, message: string) =>
      void events.push({ type, reason, message, fieldPath: ref.fieldPath }),
  };
  const rt = createKubeRuntime({ cri, podLogsDir: dir, rootDir: dir, volumeHostPath: () => undefined, events: recorder });
  const pod = { metadata: { name: "crash", namespace: "ns", uid: "u3" }, spec: { restartPolicy: "Always", containers: [{ name: "app", image: "ok/app:1" }] } };
  const status = runtimeStatus("u3", "crash", [appStatus({})]);
  const r = await rt.syncPod(pod, status, { isInBackOff: () => true, next: () => {}, delayMs: () => 10_000 });
  expect(r.errors).toEqual([{ container: "app", reason: "CrashLoopBackOff", message: "back-off 10s restarting failed container=app pod=crash_ns(u3)" }]);
  expect(events).toContainEqual({
    type: "Warning",
    reason: "BackOff",
    message: "Back-off restarting failed container app in pod crash_ns(u3)",
    fieldPath: "spec.containers{app}",
  });
});

test("the restart back-off is per container spec (upstream GetStableKey): a new image starts without waiting", async () => {
  const { cri } = recordingCri();
  const rt = createKubeRuntime({ cri, podLogsDir: dir, rootDir: dir, volumeHostPath: () => undefined });
  const pod = (image: string) => ({
    metadata: { name: "crash", namespace: "ns", uid: "u4" },
    spec: { restartPolicy: "Always", containers: [{ name: "app", image }] },
  });
  const status = runtimeStatus("u4", "crash", [appStatus({ finishedAtMs: Date.now(), attempt: 3 })]);
  const keys: string[] = [];
  const backOff = { isInBackOff: (k: string) => (keys.push(k), true), next: () => {}, delayMs: () => 40_000 };
  expect((await rt.syncPod(pod("ok/app:1"), status, backOff)).errors).toMatchObject([
    { reason: "CrashLoopBackOff", message: expect.stringMatching(/^back-off 40s /) },
  ]);
  await rt.syncPod(pod("ok/app:2"), status, backOff);
  expect(keys[0]).toMatch(/^crash_ns_u4_app_[0-9a-f]+$/);
  expect(keys[1]).not.toBe(keys[0]);
});

test("an ephemeral container's events carry its spec.ephemeralContainers field path; one targeting a missing container is not created", async () => {
  const { cri } = recordingCri();
  const events: { reason: string; message: string; fieldPath?: string }[] = [];
  const recorder = {
    event: (ref: { fieldPath?: string }, _t: string, reason: string, message: string) => void events.push({ reason, message, fieldPath: ref.fieldPath }),
  };
  const rt = createKubeRuntime({ cri, podLogsDir: dir, rootDir: dir, volumeHostPath: () => undefined, events: recorder });
  const pod = {
    metadata: { name: "dbg", namespace: "ns", uid: "u5" },
    spec: {
      containers: [{ name: "app", image: "ok/app:1" }],
      ephemeralContainers: [
        { name: "debugger", image: "ok/app:1" },
        { name: "lost", image: "ok/app:1", targetContainerName: "nope" },
      ],
    },
  };
  const status = runtimeStatus("u5", "dbg", [appStatus({ state: "running", finishedAtMs: 0, exitCode: undefined, reason: undefined })]);
  const r = await rt.syncPod(pod, status, { isInBackOff: () => false, next: () => {} });
  expect(events).toContainEqual({ reason: "Started", message: "Started container debugger", fieldPath: "spec.ephemeralContainers{debugger}" });
  expect(r.errors).toEqual([{ container: "lost", reason: "CreateContainerConfigError", message: "unable to find target container nope" }]);
  expect(events).toContainEqual({ reason: "Failed", message: "Error: unable to find target container nope", fieldPath: "spec.ephemeralContainers{lost}" });
});
