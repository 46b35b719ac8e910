import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError } from "../../../src/kube/index.ts";
import type { PersistentVolumeReader, PodApiObjectsManager } from "../../../src/pod/apiobjects/index.ts";
import { resolveClaimedVolumes, SERVICES_NOT_SYNCED } from "../../../src/pod/apiobjects/index.ts";
import { createAutonomyStore, withAutonomyCache, type AutonomyStore } from "../../../src/pod/autonomy/index.ts";
import type { ServiceLike } from "../../../src/pod/envvars/index.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/index.ts";
import {
  type ClaimedVolume,
  ObjectNotFoundError,
  type PersistentVolumeClaimObject,
  type PersistentVolumeObject,
  type PodApiObjects,
} from "../../../src/pod/volumes/index.ts";
import { createManualClock, type ManualClock } from "../../../src/manual-clock.ts";
import { captureLog, type LogCapture } from "../../support/log-capture.ts";

const pod = { metadata: { name: "web", namespace: "ns", uid: "u1" }, spec: { containers: [] } } as unknown as KubePod;
const secret = { metadata: { name: "creds", namespace: "ns", managedFields: [{ manager: "kubectl" }] }, data: { password: "c2VjcmV0" } };
/** The secret as stored and served from the cache: without managedFields. */
const storedSecret = { metadata: { name: "creds", namespace: "ns" }, data: { password: "c2VjcmV0" } };
const configMap = { metadata: { name: "cfg", namespace: "ns" }, data: { mode: "edge" } };
const TOKEN_KEY = "\n3600";
const jwt = (expSeconds: number) => `h.${Buffer.from(JSON.stringify({ exp: expSeconds })).toString("base64url")}.s`;
const unreachable = () => new Error("connect ECONNREFUSED 127.0.0.1:6443");
const services: ServiceLike[] = [{ metadata: { name: "db", namespace: "ns" }, spec: { clusterIP: "10.96.0.7", ports: [{ port: 5432, protocol: "TCP" }] } }];

/** What the API server answers, as the live manager would hand it on; tests swap the answers. */
interface Answers {
  secrets: Map<string, unknown>;
  configMaps: Map<string, unknown>;
  tokens: Map<string, string | Error>;
  /** undefined: the services were never listed (SERVICES_NOT_SYNCED). */
  services?: ServiceLike[];
}

let dir: string;
let clock: ManualClock;
let store: AutonomyStore;
let logs: LogCapture;
let answers: Answers;
let manager: PodApiObjectsManager;

function liveManager(): PodApiObjectsManager {
  return {
    resolve: async (): Promise<PodApiObjects> => ({
      namespace: "ns",
      secrets: answers.secrets as PodApiObjects["secrets"],
      configMaps: answers.configMaps as PodApiObjects["configMaps"],
      tokens: answers.tokens,
    }),
    serviceEnv: () => {
      if (!answers.services) throw new Error(SERVICES_NOT_SYNCED);
      return new Map([["FROM_API", "1"]]);
    },
    services: { hasSynced: () => answers.services !== undefined, list: () => answers.services ?? [] },
  } as unknown as PodApiObjectsManager;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "offline-objects-"));
  clock = createManualClock(1_000_000);
  store = createAutonomyStore({ dir: join(dir, "autonomy"), maxBytes: 1 << 20, secrets: true, clock });
  await store.load();
  store.putPods([pod]);
  logs = captureLog();
  answers = {
    secrets: new Map([["creds", secret]]),
    configMaps: new Map([["cfg", configMap]]),
    tokens: new Map([[TOKEN_KEY, jwt(1_000 + 3600)]]),
    services,
  };
  manager = withAutonomyCache(liveManager(), store, clock);
});
afterEach(async () => {
  logs.stop();
  await store.flush();
  rmSync(dir, { recursive: true, force: true });
});

const servedLines = () => logs.lines.filter((l) => l.includes("using the autonomy cache's copy"));

describe("withAutonomyCache", () => {
  test("what the API server answers is served as is and stored, without managedFields", async () => {
    const r = await manager.resolve(pod);
    expect(r?.secrets.get("creds")).toBe(secret);
    await store.flush();
    expect(readdirSync(store.dir).sort()).toEqual(["configmap_ns_cfg.json", "pod_u1.json", "secret_ns_creds.json", expect.stringMatching(/^token_u1_/)]);
    expect(store.object("Secret", "ns", "creds")).toEqual(storedSecret);
    expect(store.token("u1", TOKEN_KEY)?.expirationMs).toBe((1_000 + 3600) * 1000);
  });

  test("the API server unreachable: the stored secret, configMap and token are served, each logged once", async () => {
    await manager.resolve(pod);
    answers = { secrets: new Map([["creds", unreachable()]]), configMaps: new Map([["cfg", unreachable()]]), tokens: new Map([[TOKEN_KEY, unreachable()]]) };
    for (let i = 0; i < 2; i++) {
      const r = await manager.resolve(pod);
      expect(r?.secrets.get("creds") as unknown).toEqual(storedSecret);
      expect(r?.configMaps.get("cfg")).toEqual(configMap);
      expect(r?.tokens.get(TOKEN_KEY)).toBe(jwt(1_000 + 3600));
    }
    expect(servedLines().map((l) => /object=(\S+)/.exec(l)![1])).toEqual(["secret/ns/creds", "configmap/ns/cfg", "token/ns/web//3600"]);
    expect(servedLines()[0]).toContain("error=");
    expect(logs.text()).not.toContain("c2VjcmV0");
  });

  test("served again after the API server answered in between: logged again", async () => {
    await manager.resolve(pod);
    answers.secrets = new Map([["creds", unreachable()]]);
    await manager.resolve(pod);
    answers.secrets = new Map([["creds", secret]]);
    await manager.resolve(pod);
    answers.secrets = new Map([["creds", unreachable()]]);
    await manager.resolve(pod);
    expect(servedLines().filter((l) => l.includes("secret/ns/creds"))).toHaveLength(2);
  });

  test("a 404 stays upstream's not found, even with a stored copy", async () => {
    await manager.resolve(pod);
    const notFound = new ObjectNotFoundError("secret", "creds");
    answers.secrets = new Map([["creds", notFound]]);
    expect((await manager.resolve(pod))?.secrets.get("creds")).toBe(notFound);
  });

  test("nothing stored: the API server's error stays", async () => {
    const err = unreachable();
    answers = { secrets: new Map([["other", err]]), configMaps: new Map([["missing", err]]), tokens: new Map([["aud\n600", err]]) };
    const r = await manager.resolve(pod);
    expect([r?.secrets.get("other"), r?.configMaps.get("missing"), r?.tokens.get("aud\n600")]).toEqual([err, err, err]);
    expect(servedLines()).toEqual([]);
  });

  test("a stored token is served until its expiry, never past it", async () => {
    await manager.resolve(pod);
    answers.tokens = new Map([[TOKEN_KEY, unreachable()]]);
    clock.set((1_000 + 3600) * 1000 - 1);
    expect((await manager.resolve(pod))?.tokens.get(TOKEN_KEY)).toBe(jwt(1_000 + 3600));
    clock.set((1_000 + 3600) * 1000);
    expect((await manager.resolve(pod))?.tokens.get(TOKEN_KEY)).toBeInstanceOf(Error);
  });

  test("a token that is not a JWT expires after the expirationSeconds it was asked for", async () => {
    answers.tokens = new Map([["aud\n600", "opaque-token"]]);
    await manager.resolve(pod);
    expect(store.token("u1", "aud\n600")?.expirationMs).toBe(1_000_000 + 600_000);
  });

  test("services not yet listed: the environment is made from the stored services; none stored: upstream's error", () => {
    expect(manager.serviceEnv(pod).get("FROM_API")).toBe("1"); // listed: the API's environment, the list stored
    answers.services = undefined;
    const env = manager.serviceEnv(pod);
    expect(env.get("DB_SERVICE_HOST")).toBe("10.96.0.7");
    expect(env.get("DB_PORT")).toBe("tcp://10.96.0.7:5432");
    expect(servedLines().some((l) => l.includes("object=services"))).toBe(true);

    const empty = createAutonomyStore({ dir: join(dir, "empty"), maxBytes: 1 << 20, secrets: true, clock });
    expect(() => withAutonomyCache(liveManager(), empty, clock).serviceEnv(pod)).toThrow(SERVICES_NOT_SYNCED);
  });

  test("the services list is stored at most once a minute", () => {
    manager.serviceEnv(pod);
    answers.services = [...services, { metadata: { name: "cache", namespace: "ns" }, spec: { clusterIP: "10.96.0.8", ports: [{ port: 6379 }] } }];
    clock.advance(59_999);
    manager.serviceEnv(pod);
    expect(store.services()).toHaveLength(1);
    clock.advance(1);
    manager.serviceEnv(pod);
    expect(store.services()).toHaveLength(2);
  });

  test("another services error is not hidden by the cache", () => {
    const failing = {
      ...liveManager(),
      serviceEnv: () => {
        throw new Error("boom");
      },
    } as PodApiObjectsManager;
    manager.serviceEnv(pod);
    expect(() => withAutonomyCache(failing, store, clock).serviceEnv(pod)).toThrow("boom");
  });
});

describe("withAutonomyCache: persistentVolumeClaim volumes", () => {
  const claimPod = {
    metadata: { name: "db", namespace: "ns", uid: "u2" },
    spec: {
      containers: [{ name: "c", image: "i", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-db" } }],
    },
  } as unknown as KubePod;
  const boundClaim = {
    metadata: { name: "data-db", namespace: "ns", uid: "c-uid", managedFields: [{ manager: "kube-controller-manager" }] },
    spec: { volumeName: "pvc-1" },
    status: { phase: "Bound" },
  } as unknown as PersistentVolumeClaimObject;
  const pv = { metadata: { name: "pvc-1" }, spec: { claimRef: { uid: "c-uid" }, hostPath: { path: "/var/lib/local-path/pvc-1" } } } as PersistentVolumeObject;
  const resolved: ClaimedVolume = {
    pvName: "pvc-1",
    source: { plugin: "kubernetes.io/host-path", hostPath: { path: "/var/lib/local-path/pvc-1" } },
    mountOptions: [],
    volumeMode: "Filesystem",
  };
  let claimAnswer: PersistentVolumeClaimObject | Error;
  let volumeAnswer: PersistentVolumeObject | Error;

  /** The live manager resolving claims as createPodApiObjects does, through the reader it is given. */
  function claimsManager(): PodApiObjectsManager {
    const persistentVolumes: PersistentVolumeReader = { claim: async () => claimAnswer, volume: async () => volumeAnswer };
    return {
      persistentVolumes,
      resolve: async (p: KubePod, reader = persistentVolumes): Promise<PodApiObjects> => ({
        namespace: "ns",
        secrets: new Map(),
        configMaps: new Map(),
        tokens: new Map(),
        claims: await resolveClaimedVolumes(reader, p),
      }),
    } as unknown as PodApiObjectsManager;
  }
  const claimOf = async (m: PodApiObjectsManager) => (await m.resolve(claimPod))?.claims?.get("data");

  beforeEach(() => {
    claimAnswer = boundClaim;
    volumeAnswer = pv;
    manager = withAutonomyCache(claimsManager(), store, clock);
  });

  test("the claim and its PV are stored, without managedFields; with the API server unreachable they are served, each logged once", async () => {
    expect(await claimOf(manager)).toMatchObject(resolved);
    await store.flush();
    expect(readdirSync(store.dir)).toEqual(expect.arrayContaining(["persistentvolumeclaim_ns_data-db.json", "persistentvolume_pvc-1.json"]));
    expect((store.object("PersistentVolumeClaim", "ns", "data-db") as { metadata: object }).metadata).toEqual({
      name: "data-db",
      namespace: "ns",
      uid: "c-uid",
    });

    claimAnswer = unreachable();
    volumeAnswer = new ApiError(503, "ServiceUnavailable", "etcd leader changed", "GET", "/api/v1/persistentvolumes/pvc-1");
    for (let i = 0; i < 2; i++) expect(await claimOf(manager)).toMatchObject(resolved);
    expect(servedLines().map((l) => /object=(\S+)/.exec(l)![1])).toEqual(["persistentvolumeclaim/ns/data-db", "persistentvolume/pvc-1"]);
    expect(servedLines()[0]).toContain("error=");
  });

  test("a claim the API server answers is never replaced by the stored copy: not found, forbidden, not bound", async () => {
    await claimOf(manager);
    const refusals = [
      [new ApiError(404, "NotFound", 'persistentvolumeclaims "data-db" not found', "GET", "/"), "failed to fetch PVC from API server"],
      [new ApiError(403, "Forbidden", "no relationship found between node and this object", "GET", "/"), "failed to fetch PVC from API server"],
      [{ ...boundClaim, status: { phase: "Pending" } }, "PVC is not bound"],
    ] as const;
    for (const [answer, message] of refusals) {
      claimAnswer = answer as PersistentVolumeClaimObject | Error;
      expect(((await claimOf(manager)) as Error).message).toContain(message);
    }
    expect(servedLines()).toEqual([]);
    // The claim answered last, not bound, is what is kept: offline it still is not bound.
    claimAnswer = unreachable();
    expect(((await claimOf(manager)) as Error).message).toContain("PVC is not bound");
  });

  test("a PV the API server refuses is not served from the cache", async () => {
    await claimOf(manager);
    volumeAnswer = new ApiError(404, "NotFound", 'persistentvolumes "pvc-1" not found', "GET", "/");
    expect(((await claimOf(manager)) as Error).message).toContain("failed to fetch PV pvc-1 from API server");
  });

  test("nothing stored: the API server's error stays", async () => {
    claimAnswer = unreachable();
    expect(((await claimOf(manager)) as Error).message).toContain("ECONNREFUSED");
    expect(servedLines()).toEqual([]);
  });
});
