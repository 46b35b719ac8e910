import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError } from "../../../src/kube/index.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { createAutonomyStore, withCSIObjectsCache, type AutonomyStore, type GetObject } from "../../../src/pod/autonomy/index.ts";
import { csiDriverPath, secretPath, volumeAttachmentPath } from "../../../src/pod/volumes/csi/index.ts";
import { createCSIVolumeManager } from "../../../src/pod/volumes/csi/csi-mounter.ts";
import { attachmentName } from "../../../src/pod/volumes/csi/csi-util.ts";
import { persistentCSIVolumeSpec } from "../../../src/pod/volumes/csi/volume-spec.ts";
import { recordingNodeClient } from "../../support/fake-csi-node-client.ts";
import { captureLog, type LogCapture } from "../../support/log-capture.ts";

const DRIVER = "disk.csi.example";
const VA = attachmentName("vol-1", DRIVER, "n1");
const driver = { metadata: { name: DRIVER, managedFields: [{ manager: "kubectl" }] }, spec: { attachRequired: true, podInfoOnMount: true } };
const storedDriver = { metadata: { name: DRIVER }, spec: { attachRequired: true, podInfoOnMount: true } };
const attached = {
  metadata: { name: VA },
  spec: { attacher: DRIVER, nodeName: "n1", source: { persistentVolumeName: "pv-a" } },
  status: { attached: true, attachmentMetadata: { lun: "7" } },
};
const unreachable = () => new Error("connect ECONNREFUSED 127.0.0.1:6443");
const apiError = (code: number, reason: string) => new ApiError(code, reason, reason, "GET", "/apis/storage.k8s.io/v1");

let dir: string;
let store: AutonomyStore;
let logs: LogCapture;
/** What the API server answers per path: an object, undefined (not found) or an error thrown. */
let answers: Map<string, unknown>;
const live: GetObject = async (path) => {
  const a = answers.get(path);
  if (a instanceof Error) throw a;
  return a;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "offline-csi-objects-"));
  store = createAutonomyStore({ dir: join(dir, "autonomy"), maxBytes: 1 << 20, secrets: true, clock: createManualClock(1000) });
  await store.load();
  answers = new Map<string, unknown>([
    [csiDriverPath(DRIVER), driver],
    [volumeAttachmentPath(VA), attached],
  ]);
  logs = captureLog();
});
afterEach(async () => {
  logs.stop();
  await store.flush();
  rmSync(dir, { recursive: true, force: true });
});

const servedLines = () => logs.lines.filter((l) => l.includes("using the autonomy cache's copy"));

describe("withCSIObjectsCache: the serving rules", () => {
  test("what the API server answers is returned as is and stored, without managedFields", async () => {
    const get = withCSIObjectsCache(live, store);
    expect(await get(csiDriverPath(DRIVER))).toBe(driver);
    expect(await get(volumeAttachmentPath(VA))).toBe(attached);
    await store.flush();
    expect(readdirSync(store.dir).sort()).toEqual([`csidriver_${DRIVER}.json`, `volumeattachment_${VA}.json`]);
    expect(store.object("CSIDriver", "", DRIVER)).toEqual(storedDriver);
  });

  test.each([
    ["a network error", unreachable()],
    ["a 503", apiError(503, "ServiceUnavailable")],
    ["a 500", apiError(500, "InternalError")],
    ["a 429", apiError(429, "TooManyRequests")],
  ])("no answer (%s): the stored copies are served, each logged once", async (_what, error) => {
    const get = withCSIObjectsCache(live, store);
    await get(csiDriverPath(DRIVER));
    await get(volumeAttachmentPath(VA));
    answers = new Map([
      [csiDriverPath(DRIVER), error],
      [volumeAttachmentPath(VA), error],
    ]);
    for (let i = 0; i < 2; i++) {
      expect(await get(csiDriverPath(DRIVER))).toEqual(storedDriver);
      expect(await get(volumeAttachmentPath(VA))).toEqual(attached);
    }
    expect(servedLines().map((l) => /object=(\S+)/.exec(l)![1])).toEqual([`csidriver/${DRIVER}`, `volumeattachment/${VA}`]);
    expect(servedLines()[0]).toContain("error=");
  });

  test.each([
    ["forbidden (403)", apiError(403, "Forbidden")],
    ["unauthorized (401)", apiError(401, "Unauthorized")],
  ])("a refusal, %s, is never answered from the cache", async (_what, error) => {
    const get = withCSIObjectsCache(live, store);
    await get(volumeAttachmentPath(VA));
    answers.set(volumeAttachmentPath(VA), error);
    await expect(get(volumeAttachmentPath(VA))).rejects.toBe(error);
    expect(servedLines()).toEqual([]);
  });

  test("not found stays not found and removes the stored copy: later, without an answer, nothing is served", async () => {
    const get = withCSIObjectsCache(live, store);
    await get(volumeAttachmentPath(VA));
    answers.set(volumeAttachmentPath(VA), undefined);
    expect(await get(volumeAttachmentPath(VA))).toBeUndefined();
    expect(store.object("VolumeAttachment", "", VA)).toBeUndefined();
    const error = unreachable();
    answers.set(volumeAttachmentPath(VA), error);
    await expect(get(volumeAttachmentPath(VA))).rejects.toBe(error);
  });

  test("served again after the API server answered in between: logged again", async () => {
    const get = withCSIObjectsCache(live, store);
    await get(csiDriverPath(DRIVER));
    for (const answer of [unreachable(), driver, unreachable()]) {
      answers.set(csiDriverPath(DRIVER), answer);
      await get(csiDriverPath(DRIVER));
    }
    expect(servedLines()).toHaveLength(2);
  });

  test("a volume's Secret is stored as the pods' own (its namespace's file) and served without an answer; other reads are not", async () => {
    const path = secretPath({ namespace: "storage", name: "stage" });
    const other = "/api/v1/namespaces/ns/configmaps/cm";
    answers.set(path, { metadata: { name: "stage", namespace: "storage", managedFields: [{}] }, data: { key: "czNjcjN0" } });
    answers.set(other, { data: { a: "b" } });
    const get = withCSIObjectsCache(live, store);
    await get(path);
    await get(other);
    await store.flush();
    expect(readdirSync(store.dir)).toEqual(["secret_storage_stage.json"]);
    answers.set(path, unreachable());
    answers.set(other, unreachable());
    expect(await get(path)).toEqual({ metadata: { name: "stage", namespace: "storage" }, data: { key: "czNjcjN0" } });
    expect(servedLines().map((l) => /object=(\S+)/.exec(l)![1])).toEqual(["secret/storage/stage"]);
    await expect(get(other)).rejects.toThrow("ECONNREFUSED");
  });

  test("with secrets off, a volume's Secret is neither stored nor served", async () => {
    const path = secretPath({ namespace: "ns", name: "pub" });
    const noSecrets = createAutonomyStore({ dir: join(dir, "no-secrets"), maxBytes: 1 << 20, secrets: false, clock: createManualClock(1000) });
    await noSecrets.load();
    answers.set(path, { data: { key: "czNjcjN0" } });
    const get = withCSIObjectsCache(live, noSecrets);
    await get(path);
    await noSecrets.flush();
    expect(readdirSync(noSecrets.dir)).toEqual([]);
    answers.set(path, unreachable());
    await expect(get(path)).rejects.toThrow("ECONNREFUSED");
  });
});

describe("withCSIObjectsCache: a CSI PV set up again while the API server is unreachable", () => {
  const spec = persistentCSIVolumeSpec("pv-a", { driver: DRIVER, volumeHandle: "vol-1" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);
  const pod = { metadata: { name: "db", namespace: "ns", uid: "u1" }, spec: { serviceAccountName: "default" } };
  /** A CSI volume manager as a bunlet starting afresh makes it (driver registered), over `get`. */
  function manager(get: GetObject) {
    const f = recordingNodeClient(["STAGE_UNSTAGE_VOLUME"]);
    const m = createCSIVolumeManager({
      rootDir: join(dir, "root"),
      nodeName: () => "n1",
      driverEndpoint: (d) => (d === DRIVER ? "/run/disk.sock" : undefined),
      getObject: get,
      client: f.client,
    });
    return { ...f, m };
  }

  test("the cached CSIDriver and attached VolumeAttachment: staged and published with the attachment's publish context", async () => {
    const online = manager(withCSIObjectsCache(live, store));
    await online.m.setUp({ pod, spec });
    await online.m.tearDownPod("u1");
    await store.flush();

    // A restart: a new store loaded from the disk, the API server unreachable.
    answers = new Map([
      [csiDriverPath(DRIVER), unreachable()],
      [volumeAttachmentPath(VA), unreachable()],
    ]);
    const withoutCache = manager(live);
    await expect(withoutCache.m.setUp({ pod, spec })).rejects.toThrow("ECONNREFUSED");
    const reloaded = createAutonomyStore({ dir: store.dir, maxBytes: 1 << 20, secrets: true, clock: createManualClock(2000) });
    await reloaded.load();
    const offline = manager(withCSIObjectsCache(live, reloaded));
    await offline.m.setUp({ pod, spec });
    expect(offline.calls.map((c) => [c.method, c.req.publishContext])).toEqual([
      ["stage", { lun: "7" }],
      ["publish", { lun: "7" }],
    ]);
    // podInfoOnMount from the cached CSIDriver.
    expect(offline.calls[1]!.req.volumeContext).toMatchObject({ "csi.storage.k8s.io/pod.name": "db" });
    expect(offline.m.volumesInUse()).toEqual([`kubernetes.io/csi/${DRIVER}^vol-1`]);
  });

  test("a PV whose driver needs node-stage and node-publish Secrets: their cached data handed to the driver", async () => {
    const refs = { nodeStageSecretRef: { name: "stage", namespace: "storage" }, nodePublishSecretRef: { name: "pub", namespace: "ns" } };
    const withSecrets = persistentCSIVolumeSpec(
      "pv-a",
      { driver: DRIVER, volumeHandle: "vol-1", ...refs },
      { accessModes: ["ReadWriteOnce"], mountOptions: [] },
      false,
    );
    answers.set(secretPath(refs.nodeStageSecretRef), { metadata: { name: "stage", namespace: "storage" }, data: { key: "czNjcjN0" } }); // s3cr3t
    answers.set(secretPath(refs.nodePublishSecretRef), { metadata: { name: "pub", namespace: "ns" }, data: { token: "cHVi" } }); // pub
    const online = manager(withCSIObjectsCache(live, store));
    await online.m.setUp({ pod, spec: withSecrets });
    await online.m.tearDownPod("u1");
    await store.flush();

    // A restart: the API server unreachable; the CSIDriver, attachment and both Secrets from the cache.
    answers = new Map([...answers.keys()].map((path) => [path, unreachable()]));
    const reload = async (secrets: boolean) => {
      const reloaded = createAutonomyStore({ dir: store.dir, maxBytes: 1 << 20, secrets, clock: createManualClock(2000) });
      await reloaded.load();
      return manager(withCSIObjectsCache(live, reloaded));
    };
    const offline = await reload(true);
    await offline.m.setUp({ pod, spec: withSecrets });
    expect(offline.calls.map((c) => [c.method, c.req.secrets])).toEqual([
      ["stage", { key: "s3cr3t" }],
      ["publish", { token: "pub" }],
    ]);
    expect(servedLines().filter((l) => l.includes("object=secret/"))).toHaveLength(2);
    await offline.m.tearDownPod("u1");
    // Secrets not cached: the CSIDriver and attachment alone do not stage the volume.
    const withoutSecrets = await reload(false);
    await expect(withoutSecrets.m.setUp({ pod, spec: withSecrets })).rejects.toThrow(
      "fetching NodeStageSecretRef storage/stage failed: kubernetes.io/csi: failed to find the secret stage in the namespace storage with error: connect ECONNREFUSED",
    );
  });

  test("an attachment cached before it was attached: the volume keeps waiting, as online", async () => {
    answers.set(volumeAttachmentPath(VA), { ...attached, status: { attached: false } });
    const online = manager(withCSIObjectsCache(live, store));
    await expect(online.m.setUp({ pod, spec })).rejects.toThrow(`volume attachment ${VA} not attached`);
    answers.set(volumeAttachmentPath(VA), unreachable());
    answers.set(csiDriverPath(DRIVER), unreachable());
    await expect(online.m.setUp({ pod, spec })).rejects.toThrow(`volume attachment ${VA} not attached`);
    expect(online.calls).toEqual([]);
  });
});
