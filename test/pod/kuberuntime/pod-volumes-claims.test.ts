// A pod's persistentVolumeClaim volumes in the runtime's volume set-up: an unresolved claim stops the
// set-up before any mount with upstream's WaitForAttachAndMount error (retried at the pod worker's
// back-off, not the mount back-off); a resolved hostPath claim is set up; a local PV whose path is gone is
// upstream's MountDevice failure naming the PV; a claim mounted before keeps its PV when it cannot be
// read again.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeRuntimeContext } from "../../../src/pod/kuberuntime/context.ts";
import { resolveApiObjects, setUpVolumes } from "../../../src/pod/kuberuntime/pod-volumes.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { ClaimedVolume, PodApiObjects } from "../../../src/pod/volumes/index.ts";

const root = mkdtempSync(join(tmpdir(), "bunlet-claims-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pod = {
  metadata: { name: "p", namespace: "ns", uid: "u1" },
  spec: {
    containers: [{ name: "c", image: "i", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
    volumes: [
      { name: "data", persistentVolumeClaim: { claimName: "claim" } },
      { name: "spare", persistentVolumeClaim: { claimName: "spare" } },
    ],
  },
} as unknown as KubePod;

function context(resolve: () => ClaimedVolume | Error) {
  const events: string[] = [];
  const ctx = {
    opts: {
      apiObjects: {
        resolve: async (): Promise<PodApiObjects> => ({
          namespace: "ns",
          secrets: new Map(),
          configMaps: new Map(),
          tokens: new Map(),
          claims: new Map([["data", resolve()]]),
        }),
      },
    },
    rootDir: root,
    memoryCapacityBytes: 1 << 30,
    storageOperation: (_op: unknown, f: () => unknown) => f(),
    events: { event: (_ref: unknown, _type: string, reason: string, message: string) => events.push(`${reason}: ${message}`) },
    podObjects: new Map(),
    mountedVolumes: new Set<string>(),
  } as unknown as KubeRuntimeContext;
  return { ctx, events };
}
const ref = { name: "p", namespace: "ns", uid: "u1" };
const hostPathClaim = (path: string): ClaimedVolume => ({
  pvName: "pv1",
  source: { plugin: "kubernetes.io/host-path", hostPath: { path, type: "DirectoryOrCreate" } },
  mountOptions: [],
  volumeMode: "Filesystem",
});

describe("setUpVolumes with claims", () => {
  test("an unresolved claim: upstream's error, before any mount, retried at the worker's back-off", async () => {
    const { ctx } = context(() => new Error("error processing PVC ns/claim: PVC is not bound"));
    await resolveApiObjects(ctx, pod, ref);
    expect(await setUpVolumes(ctx, pod)).toEqual({
      message:
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC ns/claim: PVC is not bound",
      processing: true,
    });
    expect(ctx.mountedVolumes.size).toBe(0);
  });

  test("a local PV whose path is gone: MountDevice failed, naming the PV", async () => {
    const missing = join(root, "gone");
    const { ctx } = context(() => ({
      pvName: "pv-local",
      source: { plugin: "kubernetes.io/local-volume", local: { path: missing } },
      mountOptions: [],
      volumeMode: "Filesystem",
    }));
    await resolveApiObjects(ctx, pod, ref);
    expect(await setUpVolumes(ctx, pod)).toEqual({
      message: `MountVolume.MountDevice failed for volume "pv-local" : path "${missing}" does not exist`,
      processing: false,
    });
  });

  test("a hostPath claim is set up; once mounted, it keeps its PV when the claim cannot be read again", async () => {
    let answer: ClaimedVolume | Error = hostPathClaim(join(root, "hp"));
    const { ctx } = context(() => answer);
    await resolveApiObjects(ctx, pod, ref);
    expect(await setUpVolumes(ctx, pod)).toBeUndefined();
    expect([...ctx.mountedVolumes]).toEqual(["u1/data"]);

    answer = new Error("error processing PVC ns/claim: failed to fetch PVC from API server: connection refused");
    await resolveApiObjects(ctx, pod, ref);
    expect(ctx.podObjects.get("u1")?.claims?.get("data")).toEqual(hostPathClaim(join(root, "hp")));
    expect(await setUpVolumes(ctx, pod)).toBeUndefined();
  });

  test("a ReadWriteOncePod-only PV mounted by another pod on the node: upstream's refusal; with another access mode too, no check", async () => {
    const rwop = (accessModes: string[]): ClaimedVolume => ({ ...hostPathClaim(join(root, "rwop")), accessModes });
    let answer = rwop(["ReadWriteOncePod"]);
    const { ctx } = context(() => answer);
    await resolveApiObjects(ctx, pod, ref);
    // Another pod has the same PV mounted.
    ctx.podObjects.set("u0", { ...ctx.podObjects.get("u1")!, claims: new Map([["vol", rwop(["ReadWriteOncePod"])]]) });
    ctx.mountedVolumes.add("u0/vol");
    expect(await setUpVolumes(ctx, pod)).toEqual({
      message: 'MountVolume.SetUp failed for volume "pv1" : volume uses the ReadWriteOncePod access mode and is already in use by another pod',
      processing: false,
    });
    answer = rwop(["ReadWriteOncePod", "ReadWriteOnce"]);
    await resolveApiObjects(ctx, pod, ref);
    expect(await setUpVolumes(ctx, pod)).toBeUndefined();
  });
});
