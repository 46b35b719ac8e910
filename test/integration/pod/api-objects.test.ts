// The secret/configMap managers and the pod resolver against the API-server double (memory storage):
// one watch per referenced object while any pod references it, updates and deletions through it, a
// missing object as upstream's NotFound, the Get strategy, and a pod's snapshot with a TokenRequest
// token bound to it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import { createKubeClient, type KubeClient } from "../../../src/kube/index.ts";
import { createObjectManager, createPodApiObjects, SERVICES_NOT_SYNCED } from "../../../src/pod/apiobjects/index.ts";
import { ObjectNotFoundError, tokenKey } from "../../../src/pod/volumes/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

let api: ApiServerDouble;
let client: KubeClient;
const secret = (name: string, v: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  data: { k: Buffer.from(v).toString("base64") },
});

beforeAll(async () => {
  api = await startApiServer({ storage: "memory", bookmarkIntervalMs: 200 });
  const cert = await api.issueClientCert("system:node:n1", ["system:nodes"]);
  client = createKubeClient(
    { server: api.url, caPem: api.caPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" },
    { clock: realClock, timeoutMs: 5000 },
  );
  // The Node authorizer lets n1 read only what pods bound to it reference.
  const env = ["s1", "later", "g1"].map((n) => ({ name: n, valueFrom: { secretKeyRef: { name: n, key: "k" } } }));
  await api.store.put("pods/default/refs", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "refs", namespace: "default", uid: "refs-uid" },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "i", env }] },
  });
});

test("the double's Node authorizer: an object no pod on the node references is forbidden", async () => {
  await api.store.put("secrets/default/unrelated", secret("unrelated", "x"));
  const m = createObjectManager<any>({ client: () => client, resource: "secrets", strategy: "Get", clock: realClock });
  await expect(m.get("default", "unrelated")).rejects.toThrow(`no relationship found between node 'n1' and this object`);
});
afterAll(async () => {
  await api?.close();
});

test("Watch: one reflector per object while referenced; updates, deletion and late creation through the watch", async () => {
  await api.store.put("secrets/default/s1", secret("s1", "one"));
  const changes: string[] = [];
  const m = createObjectManager<any>({ client: () => client, resource: "secrets", strategy: "Watch", clock: realClock, onChange: (_ns, n) => changes.push(n) });
  m.registerPod("p1", "default", ["s1", "later"]);
  m.registerPod("p2", "default", ["s1"]);
  expect(m.watched()).toEqual(["default/later", "default/s1"]);
  expect((await m.get("default", "s1")).data.k).toBe(Buffer.from("one").toString("base64"));
  await expect(m.get("default", "later")).rejects.toBeInstanceOf(ObjectNotFoundError);
  await expect(m.get("default", "later")).rejects.toThrow('secret "later" not found');
  await api.store.put("secrets/default/s1", secret("s1", "two"));
  await until("update seen", async () => (await m.get("default", "s1")).data.k === Buffer.from("two").toString("base64"), 10_000);
  await api.store.put("secrets/default/later", secret("later", "x"));
  await until(
    "creation seen",
    () =>
      m.get("default", "later").then(
        () => true,
        () => false,
      ),
    10_000,
  );
  await api.store.delete("secrets/default/s1");
  await until(
    "deletion seen",
    () =>
      m.get("default", "s1").then(
        () => false,
        (e) => e instanceof ObjectNotFoundError,
      ),
    10_000,
  );
  expect(changes).toContain("s1");
  m.unregisterPod("p1");
  expect(m.watched()).toEqual(["default/s1"]);
  m.unregisterPod("p2");
  expect(m.watched()).toEqual([]);
  m.stop();
});

test("Watch: an immutable object is listed once and not watched", async () => {
  await api.store.put("secrets/default/frozen", { ...secret("frozen", "v"), immutable: true });
  await api.store.put("pods/default/frozen-user", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "frozen-user", namespace: "default", uid: "fu" },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "i" }], volumes: [{ name: "v", secret: { secretName: "frozen" } }] },
  });
  const m = createObjectManager<any>({ client: () => client, resource: "secrets", strategy: "Watch", clock: realClock });
  m.registerPod("fu", "default", ["frozen"]);
  expect((await m.get("default", "frozen")).immutable).toBe(true);
  const seen = api.requests.filter((r) => decodeURIComponent(r.path).includes("metadata.name=frozen"));
  expect(seen.length).toBe(1);
  expect(seen[0]!.path).not.toContain("watch=true");
  m.stop();
});

test("Get: a GET per read", async () => {
  await api.store.put("secrets/default/g1", secret("g1", "v"));
  const m = createObjectManager<any>({ client: () => client, resource: "secrets", strategy: "Get", clock: realClock });
  const before = api.requests.filter((r) => r.path.startsWith("/api/v1/namespaces/default/secrets/g1")).length;
  await m.get("default", "g1");
  await m.get("default", "g1");
  expect(api.requests.filter((r) => r.path.startsWith("/api/v1/namespaces/default/secrets/g1")).length - before).toBe(2);
  expect(m.watched()).toEqual([]);
});

test("a pod's snapshot: its secrets, configMaps and a token bound to it", async () => {
  await api.store.put("secrets/default/app", secret("app", "v"));
  const objs = createPodApiObjects({ client: () => client, clock: realClock });
  const pod = {
    metadata: { name: "p", namespace: "default", uid: "pod-uid" },
    spec: {
      nodeName: "n1",
      serviceAccountName: "default",
      containers: [{ name: "c", env: [{ name: "X", valueFrom: { secretKeyRef: { name: "app", key: "k" } } }] }],
      volumes: [
        {
          name: "v",
          projected: { sources: [{ serviceAccountToken: { path: "token", expirationSeconds: 3607 } }, { configMap: { name: "kube-root-ca.crt" } }] },
        },
      ],
    },
  };
  await api.store.put("pods/default/p", { apiVersion: "v1", kind: "Pod", ...pod });
  const snap = (await objs.resolve(pod as any))!;
  expect(snap.secrets.get("app")).toMatchObject({ data: { k: Buffer.from("v").toString("base64") } });
  expect(snap.configMaps.get("kube-root-ca.crt")).toMatchObject({ data: { "ca.crt": api.caPem } });
  const claims = api.verifyToken(snap.tokens.get(tokenKey(undefined, 3607)) as string)!;
  expect(claims["kubernetes.io"].pod).toEqual({ name: "p", uid: "pod-uid" });
  expect(claims.sub).toBe("system:serviceaccount:default:default");
  objs.forget("pod-uid");
  expect(objs.secrets.watched()).toEqual([]);
  expect(objs.tokens.keys()).toEqual([]);
  objs.stop();
});

test("services: an API pod has no env until the informer's first list; then the master and its namespace's services, updates through the watch", async () => {
  const service = (ns: string, name: string, clusterIP: string, port: number) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns, uid: `svc-${ns}-${name}` },
    spec: { clusterIP, ports: [{ port, protocol: "TCP" }] },
  });
  await api.store.put("services/default/kubernetes", service("default", "kubernetes", "10.96.0.1", 443));
  await api.store.put("services/app/web", service("app", "web", "10.96.0.7", 80));
  await api.store.put("services/app/headless", service("app", "headless", "None", 80));
  const objs = createPodApiObjects({ client: () => client, clock: realClock });
  const pod = (source?: string) =>
    ({
      metadata: { name: "p", namespace: "app", uid: "u", ...(source ? { annotations: { "kubernetes.io/config.source": source } } : {}) },
      spec: { containers: [], enableServiceLinks: true },
    }) as any;
  expect(() => objs.serviceEnv(pod())).toThrow(SERVICES_NOT_SYNCED);
  expect(objs.serviceEnv(pod("file")).size).toBe(0); // a static pod gets what is known
  objs.services.start();
  await until("services listed", () => objs.services.hasSynced(), 10_000);
  const env = objs.serviceEnv(pod());
  expect(env.get("KUBERNETES_SERVICE_HOST")).toBe("10.96.0.1");
  expect(env.get("WEB_PORT_80_TCP_ADDR")).toBe("10.96.0.7");
  expect([...env.keys()].some((k) => k.startsWith("HEADLESS"))).toBe(false);
  expect(api.requests.some((r) => decodeURIComponent(r.path).startsWith("/api/v1/services?fieldSelector=spec.clusterIP!=None"))).toBe(true);
  await api.store.put("services/app/late", service("app", "late", "10.96.0.9", 8080));
  await until("a new service seen", () => objs.serviceEnv(pod()).get("LATE_SERVICE_PORT") === "8080", 10_000);
  await api.store.delete("services/app/web");
  await until("a deleted service gone", () => !objs.serviceEnv(pod()).has("WEB_SERVICE_HOST"), 10_000);
  objs.stop();
});
