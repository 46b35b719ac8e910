// The ClusterTrustBundle manager against the API-server double (memory storage): discovery finds
// certificates.k8s.io/v1beta1, one list+watch of the whole collection, and a pod's snapshot holds the
// normalized anchors of its projections by name and by signerName + labelSelector; an update, a new
// bundle of the signer and a deletion reach the next snapshot through the watch.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createKubeClient, type KubeClient } from "../../../src/kube/index.ts";
import { createPodApiObjects } from "../../../src/pod/apiobjects/index.ts";
import { normalizeTrustAnchors } from "../../../src/pod/apiobjects/trust-anchors.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/index.ts";
import { trustBundleKey } from "../../../src/pod/volumes/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { createCA } from "../../support/apiserver/pki.ts";
import { until } from "../../support/wait.ts";

let api: ApiServerDouble;
let client: KubeClient;
let dir: string;
const roots: string[] = [];
const KEY = "clustertrustbundles.certificates.k8s.io//";
const ctb = (name: string, trustBundle: string, signerName?: string, labels?: Record<string, string>) => ({
  apiVersion: "certificates.k8s.io/v1beta1",
  kind: "ClusterTrustBundle",
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { trustBundle, ...(signerName ? { signerName } : {}) },
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bunlet-ctb-"));
  for (const cn of ["root-a", "root-b", "root-c"]) roots.push((await createCA(join(dir, cn), cn)).certPem);
  api = await startApiServer({ storage: "memory", bookmarkIntervalMs: 200 });
  const cert = await api.issueClientCert("system:node:n1", ["system:nodes"]);
  client = createKubeClient(
    { server: api.url, caPem: api.caPem, certPem: cert.certPem, keyPem: cert.keyPem, source: "test" },
    { clock: realClock, timeoutMs: 5000 },
  );
});
afterAll(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("by name and by signerName + labelSelector, kept current by one watch of the collection", async () => {
  const [a, b, c] = roots as [string, string, string];
  await api.store.put(`${KEY}mesh-root`, ctb("mesh-root", a));
  await api.store.put(`${KEY}example.com:mesh:1`, ctb("example.com:mesh:1", a + b, "example.com/mesh", { trust: "yes" }));
  await api.store.put(`${KEY}example.com:mesh:2`, ctb("example.com:mesh:2", c, "example.com/mesh", { trust: "no" }));
  const byName = { name: "mesh-root", path: "root.pem" };
  const bySigner = { signerName: "example.com/mesh", labelSelector: { matchLabels: { trust: "yes" } }, path: "mesh.pem" };
  const missing = { name: "absent", optional: true, path: "absent.pem" };
  const pod = {
    metadata: { name: "p", namespace: "default", uid: "u-ctb" },
    spec: {
      nodeName: "n1",
      containers: [{ name: "c" }],
      volumes: [{ name: "v", projected: { sources: [{ clusterTrustBundle: byName }, { clusterTrustBundle: bySigner }, { clusterTrustBundle: missing }] } }],
    },
  } as unknown as KubePod;
  const m = createPodApiObjects({ client: () => client, clock: realClock, clusterTrustBundleProjection: true, trustAnchorSalt: "t" });
  const snap = async () => (await m.resolve(pod))!.trustBundles!;

  let s = await snap();
  expect(s.get(trustBundleKey(byName))).toBe(normalizeTrustAnchors([a], "t"));
  expect(s.get(trustBundleKey(bySigner))).toBe(normalizeTrustAnchors([a, b], "t")); // a once
  expect(s.get(trustBundleKey(missing))).toBe("");
  expect(m.trustBundles.groupVersion()).toBe("certificates.k8s.io/v1beta1");
  // One list and one watch of the whole collection, as upstream's informer.
  const ctbRequests = () =>
    api.requests
      .filter((r) => r.path.startsWith("/apis/certificates.k8s.io/v1beta1/clustertrustbundles"))
      .map((r) => (r.path.includes("watch=true") ? "watch" : "list"));
  await until("the watch", () => ctbRequests().includes("watch"), 10_000);
  expect(ctbRequests()).toEqual(["list", "watch"]);

  // A rotated root and a new bundle of the signer arrive through the watch.
  await api.store.put(`${KEY}mesh-root`, ctb("mesh-root", b));
  await api.store.put(`${KEY}example.com:mesh:3`, ctb("example.com:mesh:3", c, "example.com/mesh", { trust: "yes" }));
  await until(
    "update and new bundle seen",
    async () => {
      s = await snap();
      return s.get(trustBundleKey(byName)) === normalizeTrustAnchors([b], "t") && s.get(trustBundleKey(bySigner)) === normalizeTrustAnchors([a, b, c], "t");
    },
    10_000,
  );
  // A deleted bundle: the non-optional projection fails with upstream's message.
  await api.store.delete(`${KEY}mesh-root`);
  await until("deletion seen", async () => (await snap()).get(trustBundleKey(byName)) instanceof Error, 10_000);
  expect(((await snap()).get(trustBundleKey(byName)) as Error).message).toBe(
    'while getting ClusterTrustBundle: clustertrustbundle.certificates.k8s.io "mesh-root" not found',
  );
  m.stop();
});

test("kube-apiserver's validation of the double: a signer's bundle is named with its prefix", async () => {
  const res = await fetch(`${api.url}/apis/certificates.k8s.io/v1beta1/clustertrustbundles`, {
    method: "POST",
    headers: { authorization: `Bearer ${api.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(ctb("wrong", roots[0]!, "example.com/mesh")),
    tls: { ca: api.caPem },
  } as RequestInit);
  expect(res.status).toBe(422);
  expect((await res.json()).message).toContain("ClusterTrustBundle for signerName example.com/mesh must be named with prefix example.com:mesh:");
});
